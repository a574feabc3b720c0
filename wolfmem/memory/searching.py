"""The edges of a search call: its arguments read and checked (sources, dates, limit), its results as `Hit`s."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import date, datetime
from typing import Any

from wolfmem import limits
from wolfmem.errors import UsageError, shown
from wolfmem.memory.refs import make_ref
from wolfmem.storage.vault import SOURCES

# Curation logs, digests and audits in consolidated/ restate facts already in the other two, and the
# archive holds facts that left the knowledge files: a search reads them only when asked to by name;
# otherwise they crowd out the facts they repeat (README).
DEFAULT_SOURCES = ("knowledge", "episodes")
MAX_LIMIT = 50
SNIPPET_CHARS = 240
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class Hit:
    """One search result: a fact, where it lives, and why it matched."""

    ref: str
    path: str
    line: int
    section: str
    text: str
    snippet: str
    score: float
    source: str
    date: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return asdict(self)


def parse_sources(sources: str | Iterable[str] | None) -> tuple[str, ...]:
    """The sources a search reads: the ones named (checked), else the knowledge files and episodes."""
    if sources is None:
        return DEFAULT_SOURCES
    if isinstance(sources, str):
        chosen = [sources]
    elif isinstance(sources, (list, tuple, set, frozenset)):
        chosen = list(sources)
    else:
        raise UsageError(f"sources must be a name or a list of names from: {', '.join(SOURCES)}")
    if not chosen:
        # An empty filter would search everything, archive included: never what "only these" means.
        raise UsageError(f"sources is empty: name one or more of {', '.join(SOURCES)}, "
                         "or leave it out for knowledge and episodes")
    bad = [source for source in chosen if source not in SOURCES]
    if bad:
        raise UsageError(f"unknown source(s) {', '.join(map(shown, bad))}; use any of: {', '.join(SOURCES)}")
    return tuple(chosen)


def parse_day(value: str | date | None, name: str) -> str | None:
    """A date argument as YYYY-MM-DD (None when not given); `name` is the argument's, for the error."""
    if value is None or value == "":
        return None
    if isinstance(value, (date, datetime)):
        return value.strftime("%Y-%m-%d")
    if not isinstance(value, str) or not _DAY.match(value.strip()):
        raise UsageError(f"{name} must be a date like 2026-11-29, not {shown(value)}")
    try:
        date.fromisoformat(value.strip())
    except ValueError:
        raise UsageError(f"{name} is not a real date: {shown(value)}") from None
    return value.strip()


def parse_limit(limit: Any) -> int:
    """A search's limit, checked: a whole number from 1 to MAX_LIMIT."""
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise UsageError(f"limit must be a whole number from 1 to {MAX_LIMIT}, not {shown(limit)}")
    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"limit must be from 1 to {MAX_LIMIT}, not {shown(limit)}")
    return limit


def to_hit(result: Any) -> Hit:
    """An index hit as the `Hit` a caller gets: its text cut to size, a snippet, a line ref."""
    text = limits.cut(result.text, limits.HIT_TEXT_CHARS)
    snippet = text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…"
    return Hit(
        ref=make_ref(result.path, result.line),
        path=result.path,
        line=result.line,
        section=result.section,
        text=text,
        snippet=snippet,
        score=round(result.score, 4),
        source=result.source,
        date=result.date,
    )
