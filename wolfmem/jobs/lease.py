"""Who curates a vault: one machine per vault runs curation, the audit and the digest, under any sync engine.

A vault synced by Syncthing, git, Dropbox, iCloud or unison may have a daemon on every machine, and each
sees the others' files seconds or days late, so no file in the vault can be a lock. The rules:

1. **One curator, chosen once.** `.wolfmem/curator.jsonl` is append-only; each line names a machine and
   when it became the curator, and the latest line holds. The first machine to run a job writes itself
   there; `wolfmem curator take` moves curation to this machine at any time.
2. **Others wait while it lives.** Each machine writes only its own `.wolfmem/machines/<machine>.json`
   (its last run and the periods it completed). Another machine runs the jobs only once the curator has
   shown no sign of life (its last run, or its choice) for `lease.hours` (36 by default); then it appends
   itself as curator, saying whom it took over from, which `wolfmem status` shows on every machine.
3. **Timestamps from the future are not trusted**: a sign of life counts no later than when this machine
   first saw it (plus SKEW_TOLERANCE), so a clock running ahead cannot lock the others out for longer.
   **Nor is a view gathered while away**: a machine whose own checks are more than AWAY apart (a laptop
   closed for two days) saw nothing of the curator meanwhile, so once back it waits RETURN_GRACE for its
   sync engine to deliver before it takes over.
4. **Taking over on a shared filesystem is atomic**: the append goes through the writer, whose transform
   judges the record once more, so of two machines that find the curator silent the second skips. Under
   a sync engine both may append before either sees the other's line; the latest choice then wins on
   both once they sync, and the double run is harmless: curation swaps each file in only if it still
   holds what it read, its coverage is the union of every machine's (curation/coverage.py), and a
   conflict copy of a curated file is merged back (storage/conflicts.py).
5. **A period done is never run again.** The periods done are the latest per job across every machine's
   file, their conflict copies, the old shared `lease.json` and what this machine remembers; a claim more
   than CLAIM_HORIZON ahead of this machine's clock is ignored, so a broken clock cannot stop a job.
   A takeover starts right after the last period done, so no day is left out.
6. **Every file merges by union**: the curator record is appended to, the machine files have one writer
   each; a cut-off or garbled line (or a git conflict marker) costs only itself. The old `lease.json` is
   read (its holder counts as the curator chosen at its last run) and never written again.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from wolfmem.errors import WolfmemError
from wolfmem.jobs.leaserules import (
    AWAY,
    CLAIM_HORIZON,
    LEASE_REL,
    SKEW_TOLERANCE,
    Lease,
    LeaseCheck,
    Parsed,
    aware,
    judge,
    parse_lease,
    plausible,
    show,
    span,
)
from wolfmem.storage.machine import MACHINE_ID_FILE, machine_id
from wolfmem.storage.state import StateStore
from wolfmem.storage.vault import content_hash
from wolfmem.storage.writer import Cause, Edit, VaultWriter

__all__ = ["CLAIM_HORIZON", "CURATOR_REL", "LEASE_REL", "MACHINES", "MACHINE_ID_FILE", "SKEW_TOLERANCE", "Choice",
           "Lease", "LeaseCheck", "LeaseFile", "Parsed", "judge", "machine_id", "parse_choices", "parse_lease"]

log = logging.getLogger(__name__)

CURATOR_REL = ".wolfmem/curator.jsonl"
MACHINES = ".wolfmem/machines"
OBSERVED = "lease:observed"  # state records: when this machine first saw the curator's sign of life as it is,
REMEMBERED = "lease:done"  # and the latest period done per job it has ever read
PRESENT = "lease:present"  # and when it last checked, and when it last came back from being away


class _Held(Exception):
    """Raised inside the curator record's transform when another machine is the vault's fresh curator."""

    def __init__(self, check: LeaseCheck) -> None:
        super().__init__(check.reason)
        self.check = check


@dataclass(frozen=True)
class Choice:
    """One line of the curator record: from `at` on, `machine` is the vault's curator, and why."""

    at: datetime
    machine: str
    why: str


def parse_choices(text: str) -> list[Choice]:
    """The curator record's lines; a cut-off, garbled or marker line costs only itself."""
    out = []
    for line in text.splitlines():
        try:
            data = json.loads(line)
            out.append(Choice(aware(datetime.fromisoformat(data["at"])), str(data["machine"]).strip(),
                              str(data.get("why", ""))))
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            continue
    return [choice for choice in out if choice.machine and choice.machine.isprintable()]


@dataclass
class _View:
    """Everything the vault says about who curates: the choices, each machine's last run, the periods done."""

    choices: list[Choice] = field(default_factory=list)
    beats: dict[str, datetime] = field(default_factory=dict)
    done: dict[str, str] = field(default_factory=dict)
    problems: tuple[str, ...] = ()

    def latest(self) -> Choice | None:
        return max(self.choices, key=lambda choice: (choice.at, choice.machine), default=None)

    def lease(self) -> Lease | None:
        """The curator as a lease: its machine, its last sign of life, and the periods any machine did."""
        choice = self.latest()
        if choice is None:
            return None
        beat = max(choice.at, self.beats.get(choice.machine, choice.at))
        return Lease(choice.machine, beat, dict(self.done))


class LeaseFile:
    """Who curates a vault, kept in files no two machines ever rewrite (see the module's rules).

    `.wolfmem/curator.jsonl`: append-only, one line per choice of curator; the latest choice holds.
    `.wolfmem/machines/<machine>.json`: each machine's own file, its last run and its periods done.
    `.wolfmem/lease.json` (before these files): still read, for its holder and periods, never written.
    """

    def __init__(self, writer: VaultWriter, machine: str, hours: float, state: StateStore | None = None) -> None:
        self.writer = writer
        self.state = state if state is not None else writer.state
        self.machine = machine
        self.hours = hours
        self.own_rel = f"{MACHINES}/{machine}.json"
        self.path = writer.vault.root / CURATOR_REL
        self._warned = ""  # the damaged text last warned about: a heartbeat every 5 minutes says it once

    # -- reading ------------------------------------------------------------------------------------------
    def _text(self, rel: str = LEASE_REL) -> str:
        try:
            return self.writer.vault.read_bytes(rel).decode("utf-8")
        except FileNotFoundError:
            return ""
        except (OSError, UnicodeDecodeError, WolfmemError) as exc:
            log.warning("cannot read %s (%s); it counts as no record", rel, exc)
            return ""

    def _names(self, folder: str, pattern: str) -> list[str]:
        try:
            return self.writer.vault.names(folder, pattern)
        except (OSError, WolfmemError):
            return []

    def _view(self, curator_text: str | None = None, now: datetime | None = None) -> _View:
        """Every record (conflict copies included) read as one; `curator_text`: the curator record as just read."""
        view = _View()
        records = self._names(".wolfmem", "curator*.jsonl")
        if curator_text is not None:
            records = [rel for rel in records if rel != CURATOR_REL]
            view.choices += parse_choices(curator_text)
        for rel in records:
            view.choices += parse_choices(self._text(rel))
        legacy = self._names(".wolfmem", "lease*.json")
        for rel in legacy + self._names(MACHINES, "*.json"):
            item = self._parse(self._text(rel), rel)
            if rel == LEASE_REL:
                view.problems = item.problems
            if (lease := item.lease) is not None:
                view.beats[lease.machine] = max(lease.last_run, view.beats.get(lease.machine, lease.last_run))
                if rel in legacy:  # a lease of before: its holder was the curator
                    view.choices.append(Choice(lease.last_run, lease.machine, f"held the lease in {LEASE_REL}"))
            for job, period in item.done.items():
                if (now is None or plausible(period, now)) and period > view.done.get(job, ""):
                    view.done[job] = period
        return view

    def _parse(self, text: str, rel: str = LEASE_REL) -> Parsed:
        parsed = parse_lease(text)
        if parsed.problems and rel == LEASE_REL and text != self._warned:
            self._warned = text
            log.warning("the lease file %s is damaged (%s); it counts as stale, and wolfmem no longer writes it",
                        self.writer.vault.root / LEASE_REL, "; ".join(parsed.problems))
        return parsed

    def read(self) -> Lease | None:
        """The current curator as a lease, or None when no machine was ever chosen (then it is up for grabs)."""
        return self._view().lease()

    def done(self, job: str, now: datetime) -> str:
        """The latest period of `job` any machine completed, as far as this one can tell (rule 4); "" if none.

        The job records' periods as the other machines see them; for curation one of four progress
        keepers (see `curation.coverage`), the one that lets a takeover start after the last period done.
        """
        claims = [self._view(now=now).done.get(job, ""), self._remembered().get(job, "")]
        latest = max((claim for claim in claims if claim and plausible(claim, now)), default="")
        if latest > self._remembered().get(job, ""):
            self._remember({**self._remembered(), job: latest})
        return latest

    # -- deciding -----------------------------------------------------------------------------------------
    def check(self, now: datetime) -> LeaseCheck:
        """May this machine run curation now? Yes if it curates, none does, or the curator went silent."""
        lease = self.read()
        return judge(lease, self.machine, now, self.hours, self._seen_since(lease, now), self.present(now))

    def acquire(self, now: datetime) -> LeaseCheck:
        """Run as curator: become it if none is, or the curator went silent (announced); the check made."""
        try:
            return self._update(now, None, insist=True)
        except _Held as held:
            return held.check

    def renew(self, now: datetime, job: str | None = None, period: str | None = None) -> Lease:
        """Record a job's newly completed period and this machine's run, in its own file."""
        self._update(now, (job, period) if job is not None and period is not None else None, insist=False)
        return self.read() or Lease(self.machine, aware(now))

    def choose(self, now: datetime, machine: str | None = None, why: str = "chosen with `wolfmem curator`") -> Lease:
        """Make `machine` (default: this one) the vault's curator from now on, whoever it was."""
        self._append(Choice(aware(now), machine or self.machine, why), None)
        return self.read() or Lease(machine or self.machine, aware(now))

    def _update(self, now: datetime, claim: tuple[str, str] | None, *, insist: bool) -> LeaseCheck:
        now = aware(now)
        lease = self.read()
        back = self.present(now)
        check = judge(lease, self.machine, now, self.hours, self._seen_since(lease, now), back)
        if insist and not check.ok:
            raise _Held(check)
        if check.ok and (lease is None or lease.machine != self.machine):
            why = "the first machine to curate" if lease is None else \
                f"took over from {lease.machine}, silent since {show(lease.last_run)}"
            check = self._append(Choice(now, self.machine, why), now, back)
            # A takeover is news (status says it on every machine); the first choice is routine.
            log.log(logging.INFO if lease is None else logging.WARNING, "this machine (%s) now curates the vault: %s",
                    self.machine, why)
        done: dict[str, str] = {}
        claims = [*self._view(now=now).done.items(), *self._remembered().items(), *([claim] if claim else [])]
        for job, period in claims:
            if plausible(period, now) and period > done.get(job, ""):
                done[job] = period
        self._remember(done)
        mine = Lease(self.machine, now, done)
        self.writer.put(self.own_rel, json.dumps(mine.to_dict(), indent=2) + "\n", cause=Cause.LEASE, backup=False)
        return check

    def _append(self, choice: Choice, judged_at: datetime | None, back: datetime | None = None) -> LeaseCheck:
        """Append a choice to the curator record; with `judged_at`, only if no other curator is fresh then.

        The transform judges the record it is handed once more: on a shared filesystem, of two machines
        that both find the curator silent, the second sees the first's choice and skips (rule 3).
        """
        def transform(current: str) -> Edit[LeaseCheck]:
            view = self._view(current)
            lease, latest = view.lease(), view.latest()
            check = LeaseCheck(True, choice.why, lease)
            if judged_at is not None:
                check = judge(lease, self.machine, judged_at, self.hours, self._seen_since(lease, judged_at), back)
                if not check.ok:
                    raise _Held(check)
            # A choice comes after the one it replaces, even when that one was stamped by a clock running ahead.
            at = choice.at if latest is None else max(choice.at, latest.at + timedelta(seconds=1))
            line = json.dumps({"at": show(at), "machine": choice.machine, "why": choice.why}) + "\n"
            lines = [text for text in current.splitlines(keepends=True) if text.strip()]
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += "\n"  # a line cut off by a sync tool stays its own (garbled) line
            return Edit("".join(lines) + line, check)

        written = self.writer.edit(CURATOR_REL, transform, cause=Cause.LEASE,
                                   decode=lambda data: data.decode("utf-8", errors="replace"))
        assert written.detail is not None
        return written.detail

    # -- this machine's memory of the lease -------------------------------------------------------------
    def _seen_since(self, lease: Lease | None, now: datetime) -> datetime:
        """When this machine first saw the curator's last sign of life as it is now (now, the first time)."""
        mark = "" if lease is None else f"{lease.machine}@{show(lease.last_run)}"
        revision = content_hash(mark.encode("utf-8"))
        try:
            seen = self.state.run_record(OBSERVED) or {}
            if seen.get("revision") == revision:
                return aware(datetime.fromisoformat(seen["since"]))
            self.state.put_run_record(OBSERVED, {"revision": revision, "since": aware(now).isoformat()})
        except (WolfmemError, ValueError, KeyError, TypeError) as exc:
            log.info("cannot keep when the lease was first seen (%s); counting from now", exc)
        return aware(now)

    def present(self, now: datetime, *, note: bool = True) -> datetime | None:
        """Note that this machine checks the curator now; when it last came back from being away (None: never).

        Away means its previous check was more than AWAY ago: a daemon checks at every heartbeat. A gap right
        after a return does not start another one: a machine that checks once a day waits once, not forever.
        """
        now = aware(now)
        try:
            record = self.state.run_record(PRESENT) or {}
            last = aware(datetime.fromisoformat(record["at"])) if record.get("at") else None
            back = aware(datetime.fromisoformat(record["back"])) if record.get("back") else None
            if last is not None and now - last > AWAY and back != last:
                back = now
            if note:
                self.state.put_run_record(PRESENT, {"at": now.isoformat(), "back": back and back.isoformat()})
        except (WolfmemError, ValueError, KeyError, TypeError) as exc:
            log.info("cannot keep when this machine last checked the curator (%s); not counted as away", exc)
            return None
        return back

    def _remembered(self) -> dict[str, str]:
        try:
            record = self.state.run_record(REMEMBERED) or {}
        except WolfmemError:
            return {}
        return {job: period for job, period in record.items() if isinstance(period, str)}

    def _remember(self, done: dict[str, str]) -> None:
        merged = self._remembered()
        grown = {job: period for job, period in done.items() if period > merged.get(job, "")}
        if grown:
            try:
                self.state.put_run_record(REMEMBERED, {**merged, **grown})
            except WolfmemError as exc:
                log.info("cannot remember the periods done (%s); the vault's records still hold them", exc)

    # -- status -------------------------------------------------------------------------------------------
    def status(self, now: datetime) -> dict[str, Any]:
        """Who curates this vault, since when and why (a takeover is said on every machine), for `status`."""
        view = self._view()
        lease, choice = view.lease(), view.latest()
        if lease is None or choice is None:
            return {"holder": None, "this_machine": self.machine, "fresh": False, "last_run": None, "expires": None,
                    "problems": list(view.problems)}
        seen = self._seen_since(lease, now)
        check = judge(lease, self.machine, now, self.hours, seen, self.present(now, note=False))
        ahead = lease.last_run - seen
        return {
            "holder": lease.machine,
            "this_machine": self.machine,
            "is_this_machine": lease.machine == self.machine,
            "fresh": lease.machine == self.machine or not check.ok,
            "last_run": show(lease.last_run),
            "expires": show(check.expires or lease.expires(self.hours)),
            "since": show(choice.at),
            "why": choice.why,
            "done": lease.done,
            "clock_ahead": span(ahead) if ahead > SKEW_TOLERANCE else None,
            "problems": list(view.problems),
        }
