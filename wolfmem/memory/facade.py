"""The Memory facade: save / get / search / memory_map / log_episode over one vault."""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from wolfmem.config import Config, load_config
from wolfmem.core import markdown
from wolfmem.errors import IndexUnavailable, UsageError, WolfmemError
from wolfmem.memory import memory_map
from wolfmem.memory.episodes import log_episode
from wolfmem.memory.refs import Excerpt, make_ref, read_ref
from wolfmem.memory.saving import Receipt, Saver
from wolfmem.search import query
from wolfmem.search.changes import InotifyChanges, Pending
from wolfmem.search.index import FactIndex, Filters
from wolfmem.search.sync import Syncer, SyncReport
from wolfmem.storage.history import History
from wolfmem.storage.state import StateStore
from wolfmem.storage.vault import CURATED, CURATED_PATHS, Vault
from wolfmem.storage.writer import VaultWriter

log = logging.getLogger(__name__)

SOURCES = ("knowledge", "episodes", "consolidated")
MAX_LIMIT = 50
SNIPPET_CHARS = 240
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")

Clock = Callable[[], datetime]


def local_now() -> datetime:
    """The current local time, timezone-aware."""
    return datetime.now().astimezone()


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


class Memory:
    """An agent's long-term memory in one vault; safe to use from several threads and processes."""

    def __init__(
        self,
        vault: str | Path | None = None,
        config: Config | None = None,
        *,
        create: bool = True,
        clock: Clock = local_now,
    ) -> None:
        self.config = (config or load_config()).with_vault(vault)
        self.vault = Vault(self.config.vault_path(), self.config.state_root())
        if create:
            self.vault.init()
        else:
            self.vault.require()
        self.clock = clock
        self.state = StateStore(self.vault.state_dir / "state.db")
        self.index = FactIndex(self.vault.index_dir, lock=self.vault.lock)
        self.syncer = Syncer(self.vault, self.index, self.config.index_max_file_bytes, self.state, clock)
        self.history = History(self.vault.state_dir / "history.sqlite")
        self.writer = VaultWriter(self.vault, self.state, self.history, clock, reindex=self.syncer.reindex_text)
        self._saver = Saver(self.writer, self.syncer, self.state, clock, refresh=self._refresh_for_save)
        self._lock = threading.RLock()
        self._changes: InotifyChanges | None = None

    # -- lifecycle ------------------------------------------------------------
    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop watching, if watching, and release the index."""
        with self._lock:
            if self._changes is not None:
                self._changes.close()
                self._changes = None
            self.index.close()
            self.history.close()

    def release_readers(self) -> None:
        """Let go of the index's searcher (memory), keeping the index open for writers in other threads."""
        with self._lock:
            self.index.release_readers()

    def watch(self) -> bool:
        """Watch the vault from this process, so a search re-reads only the files changed since the last.

        For long-lived processes (the MCP server); a one-shot command is better off scanning once.
        On Linux this is an inotify queue drained before each search, as exact as a full scan (see
        search.changes); elsewhere it returns False and every search keeps stat-ing every file.
        """
        with self._lock:
            if self._changes is None:
                changes = InotifyChanges(self.vault)
                if not changes.start():
                    return False
                self._changes = changes
            return True

    def sync(self) -> SyncReport:
        """Bring the index up to date with every write to the vault that completed before this call."""
        with self._lock:
            changes = self._changes
            pending = None
            if changes is not None:
                try:
                    pending = changes.drain()
                except OSError as exc:  # e.g. the watch limit reached while watching a new folder
                    log.warning("stopped watching %s (%s); searches will stat every file", self.vault.root, exc)
                    changes.close()
                    self._changes = changes = None
            try:
                return self._sync_pending(pending)
            except BaseException:
                if changes is not None and pending is not None:
                    changes.failed(pending)
                raise

    def _refresh_for_save(self) -> object:
        """What a save brings up to date first: everything changed, when watching; else the curated files."""
        if self._changes is not None:
            return self.sync()
        return self.syncer.sync(only=CURATED_PATHS)

    def _sync_pending(self, pending: Pending | None) -> SyncReport:
        """Scan every file (no queue, or it asked for a rescan), or re-read the files it named."""
        try:
            if pending is None or pending.rescan:
                return self.syncer.sync()
            if pending.paths:
                return self.syncer.sync(only=sorted(pending.paths), exact=True)
            return SyncReport()
        except WolfmemError:
            raise
        except OSError as exc:
            raise IndexUnavailable(f"the index could not be brought up to date: {exc}") from exc

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> SyncReport:
        """Rebuild the index from scratch."""
        with self._lock:
            return self.syncer.rebuild(progress)

    # -- reads ----------------------------------------------------------------
    def search(
        self,
        query_text: str,
        sources: str | Iterable[str] | None = None,
        limit: int = 10,
        after: str | None = None,
        before: str | None = None,
    ) -> list[Hit]:
        """Facts that answer a natural-language query, best first; the index is made fresh first."""
        filters = Filters(sources=_sources(sources), after=_day(after, "after"), before=_day(before, "before"))
        if filters.after and filters.before and filters.after > filters.before:
            raise UsageError(f"after ({filters.after}) is later than before ({filters.before})")
        limit = _limit(limit)
        if not isinstance(query_text, str) or not query_text.strip():
            raise UsageError("query is empty — ask in words, e.g. 'Who is my manager?'")
        with self._lock:
            self.sync()
            with self.index.snapshot():
                results = query.run(self.index, query_text, filters, limit)
        return [_to_hit(result) for result in results]

    def get(self, ref: str) -> Excerpt:
        """The text a ref names: a whole file, a line range (#L10-L40) or a section (#Sarah)."""
        return read_ref(self.vault, ref)

    def memory_map(self) -> str:
        """The `<memory_map>` block: the `##` headers of the five curated files and coarse counts."""
        with self._lock:
            self.sync()
            headings = []
            for name, rel in zip(CURATED, CURATED_PATHS):
                headings.append((f"{name}.md", self._headings(rel)))
            counts = {source: self.index.doc_frequency("source", source) for source in SOURCES[:2]}
            return memory_map.render(headings, counts)

    def _headings(self, rel: str) -> list[str]:
        try:
            text = (self.vault.root / rel).read_text("utf-8", errors="replace")
        except OSError:
            return []
        return [section.heading for section in markdown.parse(text).sections]

    # -- writes ---------------------------------------------------------------
    def save(
        self,
        fact: str,
        type: str = "technical",
        topic: str | None = None,
        request_id: str | None = None,
    ) -> Receipt:
        """File one self-contained sentence in a curated file; a fact already on file is a no-op."""
        with self._lock:
            return self._saver.save(fact, type, topic, request_id)

    def log_episode(self, text: str | list[str], headline: str | None = None, when: datetime | None = None) -> Hit:
        """Append a `## HH:MM — headline` block to today's episode log and index it at once."""
        with self._lock:
            logged = log_episode(self.writer, self.clock, text, headline, when)
        return Hit(
            make_ref(logged.path, logged.line), logged.path, logged.line, "", logged.first_bullet,
            logged.first_bullet, 0.0, "episodes", logged.day,
        )

    # -- health ---------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Index health and vault facts for `wolfmem status`."""
        with self._lock:
            pending = self.syncer.pending(racy=False)
            manifest = self.syncer.manifest()
            return {
                "vault": str(self.vault.root),
                "state_dir": str(self.vault.state_dir),
                "index": {
                    "facts": self.index.count(),
                    "files": len(manifest),
                    "last_sync": self.syncer.last_synced(),
                    "stale_files": sorted(pending.check + pending.remove),
                    "skipped_files": self.syncer.skipped(),
                },
                "conflict_copies": self.vault.conflict_copies(),
            }


def _sources(sources: str | Iterable[str] | None) -> tuple[str, ...]:
    if sources is None:
        return ()
    if isinstance(sources, str):
        chosen = [sources]
    elif isinstance(sources, (list, tuple, set, frozenset)):
        chosen = list(sources)
    else:
        raise UsageError(f"sources must be a name or a list of names from: {', '.join(SOURCES)}")
    bad = [source for source in chosen if source not in SOURCES]
    if bad:
        raise UsageError(f"unknown source(s) {', '.join(map(str, bad))}; use any of: {', '.join(SOURCES)}")
    return tuple(chosen)


def _day(value: str | None, name: str) -> str | None:
    if value is None or value == "":
        return None
    if isinstance(value, (date, datetime)):
        return value.strftime("%Y-%m-%d")
    if not isinstance(value, str) or not _DAY.match(value.strip()):
        raise UsageError(f"{name} must be a date like 2026-11-29, not {value!r}")
    try:
        date.fromisoformat(value.strip())
    except ValueError:
        raise UsageError(f"{name} is not a real date: {value!r}") from None
    return value.strip()


def _limit(limit: Any) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise UsageError(f"limit must be a whole number from 1 to {MAX_LIMIT}, not {limit!r}")
    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"limit must be from 1 to {MAX_LIMIT}, not {limit}")
    return limit


def _to_hit(result: Any) -> Hit:
    text = result.text
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
