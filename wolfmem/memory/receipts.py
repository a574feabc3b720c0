"""A save's receipt, and the request_ids that replay it.

Each answer is kept with the fact it answered, so a retry gets it back and a reuse of the
request_id with another fact is refused; a replay is answered as things are now: the fact where
it is now, gone (and why), or saved again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from wolfmem.core import markdown
from wolfmem.core.compare import Relation, relate
from wolfmem.core.facts import clean_fact, fact_key, has_lone_surrogate
from wolfmem.errors import StorageError, UsageError, shown
from wolfmem.memory.refs import make_ref
from wolfmem.storage.archive import ArchivedFact, Reason
from wolfmem.storage.reconcile import REMOVED_BY_HAND
from wolfmem.storage.state import StateStore
from wolfmem.storage.writer import VaultWriter

log = logging.getLogger(__name__)

_FACT = "fact"  # the key under which a stored receipt keeps the fact it answered


@dataclass(frozen=True)
class Receipt:
    """What memory_save tells the agent: what happened and where the fact lives."""

    # restored: a replay found the fact no longer on file and saved it again; gone: a replay found it
    # removed on purpose (by hand, forgotten, merged by curation) and wrote nothing.
    status: Literal["saved", "duplicate", "restored", "gone"]
    path: str
    line: int
    section: str
    ref: str
    message: str
    duplicate_of: str | None = None
    possibly_contradicts: list[str] = field(default_factory=list)
    # True when a retry with the same request_id got the first call's receipt back.
    replayed: bool = False
    # Saved, but this machine's bookkeeping of it failed (a full state folder): what was not recorded.
    warning: str | None = None
    # What wolfmem did to the file since the caller last touched it (lines put back after an editor).
    notices: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form, without empty optional fields."""
        data = asdict(self)
        for optional in ("duplicate_of", "possibly_contradicts", "warning", "notices"):
            if not data[optional]:
                del data[optional]
        return data


class Replays:
    """The receipts kept for request_ids in one vault's state, and a replay's answer as things are now."""

    def __init__(
        self,
        writer: VaultWriter,
        state: StateStore,
        clock: Callable[[], datetime],
        archived: Callable[[], list[ArchivedFact]],
        refresh: Callable[[], object],
    ) -> None:
        self.writer = writer
        self.state = state
        self.clock = clock
        # The archive's records, for a replay to say why a fact it saved is gone.
        self.archived = archived
        # Brings the curated files up to date before a replay reads where its fact is now.
        self.refresh = refresh

    def replayed(self, request_id: str, fact: object) -> Receipt | None:
        """The receipt a request_id already got; an error when it came with another fact."""
        earlier = self.state.receipt(request_id)
        if earlier is None:
            return None
        first = earlier.pop(_FACT, None)  # receipts stored before the fact was kept with them lack it
        receipt = as_replay(earlier)
        same = isinstance(fact, str) and not has_lone_surrogate(fact) and fact_key(fact) == fact_key(first or "")
        if first is not None and not same:
            raise UsageError(
                f"request_id {shown(request_id)} was already used for another fact, {shown(first, 160)} "
                f"({receipt.ref}); nothing was written — a retry must send the same fact, and a new fact "
                "needs a new request_id"
            )
        return receipt

    def still_true(self, earlier: Receipt, fact: str, save_again: Callable[[], Receipt]) -> Receipt:
        """A replay's answer as things are now: on file (where it is now), gone (and why), or saved again.

        `save_again` saves the fact anew, for one no longer on file that was not removed on purpose.
        """
        self.refresh()
        key = fact_key(fact)
        try:
            text = self.writer.vault.read_or_empty(earlier.path).decode("utf-8", errors="replace")
        except OSError:
            text = ""
        for line in markdown.parse(text).facts:
            if fact_key(line.text) == key or (
                earlier.status == "duplicate" and relate(clean_fact(fact), line.text) is Relation.DUPLICATE
            ):
                return replace(earlier, line=line.line, ref=make_ref(earlier.path, line.line), section=line.section)
        records = [record for record in self.archived() if record.key == key and record.file == earlier.path]
        if records and records[-1].reason is not Reason.RESTORED:
            record = records[-1]
            why = {
                Reason.FORGOTTEN: f"it was forgotten ({record.why})" if record.why else "it was forgotten",
                Reason.MERGED: f"curation merged it into {shown(record.into, 160)}",
                Reason.SUPERSEDED: f"a newer fact replaced it: {shown(record.into, 160)}",
            }.get(record.reason, "it was removed by hand" if record.why == REMOVED_BY_HAND else (
                f"it was removed ({record.why})" if record.why else "it was removed"))
            message = (
                f"Replayed: the fact this request_id saved is no longer in {earlier.path}: {why}; it is in the "
                "archive and nothing was written (`wolfmem restore --fact` puts it back)."
            )
            return replace(earlier, status="gone", message=message, line=0, ref="")
        again = save_again()
        if again.status != "saved":
            return replace(again, replayed=True)
        message = (
            f"Replayed: the fact this request_id saved was no longer in {earlier.path} (overwritten, and "
            f"not removed on purpose), so it was saved again: {again.message}"
        )
        return replace(again, status="restored", message=message, replayed=True)

    def remember(self, request_id: str, receipt: Receipt, fact: str) -> str | None:
        """Keep the answer to a request_id, with the fact it answered, so a reuse with another fact is caught.

        None when it was kept; else what went wrong.
        """
        try:
            self.state.put_receipt(request_id, {**asdict(receipt), _FACT: fact}, self.clock().date().isoformat())
        except StorageError as exc:  # the fact is on file; a retry finds it there and answers "duplicate"
            log.warning("saved, but the receipt for request %s was not kept (%s)", request_id, exc)
            return f"the receipt for request_id {shown(request_id)} was not kept ({exc})"
        return None


def as_replay(earlier: dict[str, Any]) -> Receipt:
    """The stored receipt of an earlier call with the same request_id, marked as a replay."""
    message = f"Replayed: an earlier call with this request_id did this. {earlier['message']}"
    return Receipt(**{**earlier, "replayed": True, "message": message})
