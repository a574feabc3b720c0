"""The vault's services, built once: what curation, the audit, jobs and the daemon are handed instead of Memory.

`Memory` (the agent facade) opens these and holds them as `memory.services`; curation and jobs take this
object and never the facade, so they cannot reach the search layer or the agent's methods. The config and
the clock travel in it, once. Re-indexing a written file belongs to the search layer above storage: the
caller that has an index hands the writer its `reindex` callable here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime

from wolfmem.config import Config
from wolfmem.errors import WolfmemError
from wolfmem.storage.archive import Archive
from wolfmem.storage.history import History
from wolfmem.storage.machine import machine_id
from wolfmem.storage.provenance import Provenance
from wolfmem.storage.state import StateStore
from wolfmem.storage.vault import Vault
from wolfmem.storage.writer import VaultWriter

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
# Called by the writer after each write of an indexed file with its path and new bytes.
Reindex = Callable[[str, bytes], None]


@dataclass(frozen=True)
class VaultServices:
    """One vault's files, state, history, writer, archive and provenance, with its config and clock."""

    config: Config
    clock: Clock
    vault: Vault
    state: StateStore
    history: History
    writer: VaultWriter
    archive: Archive
    provenance: Provenance

    def close(self) -> None:
        """Publish this machine's provenance and release the state and history databases."""
        self.provenance.publish()
        self.history.close()
        self.state.close()


def open_services(
    config: Config, clock: Clock, *, create: bool = True, reindex: Reindex | None = None
) -> VaultServices:
    """The services of the configured vault, made when `create` (else it must exist: NotAVault).

    `reindex` is the search layer's hook, called inside each write of an indexed file; without it the
    next sync catches the file up.
    """
    vault = Vault(config.vault_path(), config.state_root())
    if create:
        create_vault(vault, clock().date())
    else:
        vault.require()
    state = StateStore(vault.state_dir / "state.db")
    history = History(vault.state_dir / "history.sqlite")
    writer = VaultWriter(vault, state, history, clock, reindex=reindex)
    # What curation must know about this machine's writes is published to the vault as they happen: a
    # change to the state (a first-seen day, a written line) fires a provenance write, a nested write.
    provenance = Provenance(writer, state, machine_id(config.state_root()))
    state.on_change = provenance.publish_soon
    return VaultServices(config, clock, vault, state, history, writer, Archive(writer, clock), provenance)


def create_vault(vault: Vault, today: date) -> list[str]:
    """Lay out `vault` from the templates (never overwriting); a new one keeps `today` as its first day.

    Returns what was created. The first day is this machine's record that the vault did not exist
    before it, so no scheduled curation runs for a night before it (jobs.runner).
    """
    new = not vault.exists()
    created = vault.init()
    if new and vault.exists():
        try:
            state = StateStore(vault.state_dir / "state.db")
            try:
                state.note_vault_created(today)
            finally:
                state.close()
        except WolfmemError as exc:  # then it is curated like a vault found already made: safe, one no-op more
            log.warning("could not note the day the vault was created (%s)", exc)
    return created
