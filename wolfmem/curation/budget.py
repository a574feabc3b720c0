"""How much one file may change: what may leave it and what may be added, per run and over 30 days (pure).

A curator that stays inside a per-run limit every night can still empty a file in a fortnight or
bury its real headings under filler, so each limit holds over a rolling window too:

* removals: `removal_budget(n)` facts per run (a fifth of the file, 1 to 10) and at most a third
  of the file over any 30 days (`window_budget`), counting what curation and the audit archived;
* additions: `Growth.night` new facts or sections per run and `Growth.month` over 30 days, and a
  file is never grown past the bytes the index reads of it (`index.max_file_bytes`).

Over a count, a rewrite is staged for a person; past the index's cut it is refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta

from wolfmem.core.facts import normalise
from wolfmem.storage.archive import ArchivedFact, Reason

BUDGET_SHARE = 5
BUDGET_MIN = 1
BUDGET_MAX = 10
WINDOW_DAYS = 30
WINDOW_SHARE = 3
# Who took a fact out: only the unattended runs count (a person's forget or update does not).
_UNATTENDED = ("curation", "audit")


@dataclass(frozen=True)
class Growth:
    """The additions one file may take: per run, over the window, and its size cut."""

    night: int = 20
    month: int = 100
    max_bytes: int = 512_000
    added_recently: int = 0  # facts and sections curation added to the file in the window
    removed_recently: int = 0  # budget used in the window by earlier runs (curation and audit)


def removal_budget(total: int) -> int:
    """How many facts may leave a file of `total` facts in one run."""
    return min(BUDGET_MAX, max(BUDGET_MIN, total // BUDGET_SHARE))


def window_budget(total: int) -> int:
    """How many facts may leave a file over 30 days: a third of what it held at the window's start."""
    return max(BUDGET_MIN, total // WINDOW_SHARE)


def window_start(today: date) -> str:
    """The first day of the rolling window that ends today."""
    return (today - timedelta(days=WINDOW_DAYS - 1)).isoformat()


def removed_since(records: Iterable[ArchivedFact], rel: str, since: str) -> int:
    """The removal budget unattended runs used on `rel` from `since` on, read back from the archive.

    Costs as a run counts them: each removal and move, and each merge or supersession but one per line
    merged into (merging three facts into one line costs two).
    """
    cost = 0
    absorbed: set[tuple[str, str]] = set()
    for record in records:
        if record.file != rel or record.day < since or record.by not in _UNATTENDED:
            continue
        if normalise(record.into) == normalise(record.fact):
            continue  # an exact copy collapsed: nothing left the file
        if record.reason in (Reason.MERGED, Reason.SUPERSEDED):
            into = (record.day, normalise(record.into))
            if into not in absorbed:
                absorbed.add(into)
                continue
        cost += 1
    return cost


def over_budget(counted: int, total: int, added: int, growth: Growth) -> str:
    """Why a rewrite taking `counted` facts out of `total` and adding `added` must be staged ('' if not)."""
    allowed = removal_budget(total)
    if counted > allowed:
        return (f"over the removal budget: the rewrite takes {counted} of {total} facts out in one run "
                f"(n facts merged into one new line count n - 1), and at most {allowed} may go "
                f"(a fifth of the file, {BUDGET_MIN} to {BUDGET_MAX}); "
                "a mass deletion is staged for a person, never landed unattended")
    window = window_budget(total + growth.removed_recently)
    if counted and counted + growth.removed_recently > window:
        return (f"over the 30-day removal budget: {growth.removed_recently} facts already left this file in the "
                f"last 30 days and this run takes {counted} more, where at most {window} (a third of the file) "
                "may go in 30 days; staged for a person")
    if added > growth.night:
        return (f"over the growth budget: the rewrite adds {added} facts or sections in one run, at most "
                f"{growth.night} (curation.max_added_per_run); staged for a person")
    if added and added + growth.added_recently > growth.month:
        return (f"over the 30-day growth budget: {growth.added_recently} facts or sections were added in the last "
                f"30 days and this run adds {added}, at most {growth.month} "
                "(curation.max_added_per_month); staged for a person")
    return ""
