"""Issue 28's targets, each measured in one run and given its verdict (`scripts/bench.py --targets`).

The main bench's rows give the rebuild, the save at the largest size, edit→searchable, the daemon's
memory and idle CPU. `measure` adds what they do not hold: search side by side with FTS5 on real
questions and on 2–3 keywords (scripts/bench_search.py), a save into a 2,000- against a 100-fact file
(scripts/bench_bounds.py), the contention scenario and an MCP server's memory (scripts/bench_contend.py).
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import bench_bounds
import bench_contend
import bench_search


@dataclass(frozen=True)
class Extras:
    """The measurements the targets need beyond the main bench's rows."""

    searches: dict[int, bench_search.Measured]
    save_sizes: tuple[float, float]  # CPU p50 s into a 100- and a 2,000-fact file
    contended: bench_contend.Contended
    resident: bench_contend.Resident


def measure(sizes: list[int], quick: bool, say: Callable[[str], None]) -> Extras:
    """Run every extra measurement, each in a temp folder of its own."""
    searches = {}
    for size in sizes:
        say(f"[{size:,}] search side by side with FTS5 (bench_search)")
        searches[size] = bench_search.measure(size, 1 if quick else 2)
    say("save into a 100- and a 2,000-fact file (bench_bounds)")
    with tempfile.TemporaryDirectory(prefix="wolfmem-targets-") as work:
        save_sizes = bench_bounds.save_sizes(Path(work), random.Random(9), 20 if quick else 60)
    say("contention: 4 agents saving while a script appends every 20 ms (bench_contend)")
    with tempfile.TemporaryDirectory(prefix="wolfmem-targets-") as work:
        saves, seconds = (20, 60.0) if quick else (250, 300.0)
        contended = bench_contend.contention(Path(work), 4, saves, seconds, 300)
    say(f"[{max(sizes):,}] daemon and MCP server memory (bench_contend --memory)")
    with tempfile.TemporaryDirectory(prefix="wolfmem-targets-") as work:
        resident = bench_contend.memory_row(Path(work), max(sizes))
    return Extras(searches, save_sizes, contended, resident)


def _row(label: str, cells: list[tuple[str, float | None, float]], higher: bool = False) -> str:
    """One target: each (shown, measured, bound) cell, met when every measured one is within its bound."""
    shown = [text for text, got, _ in cells if got is not None]
    met = all((got >= bound) if higher else (got <= bound) for _, got, bound in cells if got is not None)
    verdict = ("met" if met else "**not met**") if shown else "not run"
    return f"| {label} | {' / '.join(shown) or '–'} | {verdict} |"


def _number(rows: dict[int, dict[str, str]], size: int, key: str) -> float | None:
    try:
        return float(rows[size][key])
    except (KeyError, ValueError):
        return None


def table(sizes: list[int], rows: dict[int, dict[str, str]], extras: Extras | None) -> str:
    """The targets of issue 28 with this run's measurements; rows the run did not measure say so."""
    small, large = min(sizes), max(sizes)
    bound = {small: 3.0, large: 2.0} if small != large else {small: 3.0}

    def search(vault: str, queries: str) -> list[tuple[str, float | None, float]]:
        if extras is None:
            return [("", None, 0.0)]
        return [(f"{extras.searches[size].ratio(vault, queries):.1f}× at {size:,}",
                 extras.searches[size].ratio(vault, queries), bound[size]) for size in sorted(bound)]

    save = _number(rows, large, "_save50")
    rebuild = _number(rows, large, "_rebuild")
    edit = _number(rows, large, "_edit95")
    daemon = _number(rows, large, "_rss")
    lines = [f"| issue 28 target (sizes {small:,} / {large:,} facts) | measured | verdict |", "|---|---|---|",
             _row("search p50 ÷ FTS5, real questions: ≤ 3× at 10k, ≤ 2× at 100k",
                  search("conversations", bench_search.REAL)),
             _row("search p50 ÷ FTS5, generated questions: ≤ 3× / ≤ 2×",
                  search("generated", bench_search.QUESTIONS)),
             _row("search p50 ÷ FTS5, 2–3 keywords: ≤ 3× / ≤ 2×", search("generated", bench_search.KEYWORDS))]
    if extras is not None:
        few, many = extras.save_sizes
        lines.append(_row("save p50, 2,000- ÷ 100-fact file: ≤ 1.5×",
                          [(f"{many / few:.2f}× ({few * 1000:.0f} / {many * 1000:.0f} ms CPU)", many / few, 1.5)]))
    lines.append(_row(f"save p50 at {large:,} facts: ≤ 20 ms", [(f"{save or 0:.0f} ms", save, 20.0)]))
    if extras is not None:
        contended = extras.contended
        lines += [_row("contention: saves to untouched files p99 ≤ 2 s",
                       [(f"{contended.untouched_p99_ms:,.0f} ms", contended.untouched_p99_ms, 2000.0)]),
                  _row("contention: saves to hammered files land or fail ≤ 15 s",
                       [(f"slowest {contended.hammered_slowest_ms:,.0f} ms", contended.hammered_slowest_ms, 15000.0)])]
    lines.append(_row(f"rebuild at {large:,} facts: ≥ 4k facts/s", [(f"{rebuild or 0:,.0f}/s", rebuild, 4000.0)],
                      higher=True))
    lines.append(_row(f"daemon RSS at {large:,} facts: ≤ 80 MB", [(f"{daemon or 0:.0f} MB", daemon, 80.0)]))
    if extras is not None:
        at_rest, after = extras.resident.mcp
        lines.append(_row(f"MCP server RSS at {extras.resident.facts:,} facts: ≤ 80 MB",
                          [(f"{at_rest:.0f} at rest, {after:.0f} after work", after, 80.0)]))
    lines.append(_row(f"edit → searchable p95 at {large:,} facts: ≤ 250 ms", [(f"{edit or 0:.0f} ms", edit, 250.0)]))
    return "\n".join(lines)


def details(extras: Extras) -> str:
    """The tables behind the targets: search side by side, contention, memory."""
    return "\n\n".join([bench_search.render(list(extras.searches.values())), extras.contended.table,
                        extras.resident.table()])
