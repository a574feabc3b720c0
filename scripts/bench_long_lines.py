"""Long lines against the checks that read every line curation writes or quotes: the old patterns and the new.

    .venv/bin/python scripts/bench_long_lines.py [--chars 64000]

Each row runs the old pattern (as it was before h10-inputs) and the current one on the same adversarial
line, side by side in one run; the ratio is what counts. The old patterns are quadratic in a run, so they
are run on a shorter line (--chars / 8) and their time is scaled by 64 (the square of the length ratio)
as an estimate; the measured time at the short length is printed too.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable

from wolfmem.core import credentials, entities, instructions
from wolfmem.curation import markup, validate

OLD = {
    "secret assignment 'a-a-…'": (re.compile(
        r"(?i)\b(?:[a-z0-9]+[_-])*(?P<key>password|passwd|pwd|passphrase|secret|api[_-]?key|apikey|token)"
        r"\b[\"']?\s*(?::=|[:=])\s*(?P<value>\"[^\"]*\"|'[^']*'|[^\s,;]+)"), credentials._ASSIGNMENT, "a-"),
    "OpenAI key 'sk-sk-…'": (re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"),
                            credentials.PATTERNS[2][1], "sk-"),
    "connection string 'a.a.…'": (re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]*:(?P<value>[^\s/@]+)@[^\s/@]"),
                                  credentials.PATTERNS[-1][1], "a."),
    "clause split, spaces": (re.compile(r"\s*(?:[,:;–—]|\s-)\s+(?:(?:and|but|so|then|also|or)\s+)?"),
                             instructions._CLAUSE, " "),
    "emphasis '___…'": (re.compile(r"[*`]+|~~|(?<!\w)_+|_+(?!\w)"), instructions._EMPHASIS, "_"),
    "annotation, tabs": (re.compile(r"\s*\[(?:first seen \d{4}-\d{2}-\d{2}[^\]]*|hand-edited[^\]]*)\]\s*$"),
                         validate._ANNOTATION, "\t"),
    "heading separator, spaces": (re.compile(r"\s+[-\u2013\u2014|]\s+|:\s"), entities._HEADING_SEPARATOR, " "),
}


def _timed(run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def main() -> None:
    """Print one markdown table row per pattern."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--chars", type=int, default=64_000)
    chars = parser.parse_args().chars
    short = chars // 8
    print(f"| check | old at {short:,} chars | old at {chars:,} (x64 est.) | new at {chars:,} | ratio |")
    print("|---|---|---|---|---|")
    for name, (old, new, unit) in OLD.items():
        line, short_line = "x" + unit * (chars // len(unit)) + "!", "x" + unit * (short // len(unit)) + "!"
        before = _timed(lambda: list(old.finditer(short_line)))  # noqa: B023
        after = _timed(lambda: list(new.finditer(line)))  # noqa: B023
        print(f"| {name} | {before:.3f} s | {64 * before:.1f} s | {after * 1000:.2f} ms | "
              f"{64 * before / after:,.0f}x |")
    html_line = "<a " * (chars // 3)
    before = _timed(lambda: markup._HTML.search(html_line[: short]))
    after = _timed(lambda: markup._line_markup(html_line, ""))
    print(f"| HTML tag, '<a <a …' | {before:.3f} s | {64 * before:.1f} s | {after * 1000:.2f} ms | "
          f"{64 * before / after:,.0f}x |")
    qualifier = re.compile(r"\([^)]*\)|\[[^\]]*\]")
    heading = "[" * chars
    before = _timed(lambda: qualifier.sub(" ", heading[:short]))
    after = _timed(lambda: entities._without_qualifiers(heading))
    print(f"| heading qualifiers '[[[…' | {before:.3f} s | {64 * before:.1f} s | {after * 1000:.2f} ms | "
          f"{64 * before / after:,.0f}x |")


if __name__ == "__main__":
    main()
