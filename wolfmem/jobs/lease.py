"""The curation lease: one machine per vault runs curation, the audit and the digest.

A vault synced by git, Syncthing, iCloud or Dropbox may have a daemon on every machine. The lease file
`<vault>/.wolfmem/lease.json` travels with the vault and names the machine that last ran those jobs and
when, and each job's last completed period. The rules:

1. A lease is fresh while it was renewed within `lease.hours` (36 by default); another machine skips the
   jobs while it is fresh, and takes over once it is stale.
2. "Renewed" is the lease's own timestamp, but never later than when this machine first saw the lease
   as it is now (plus SKEW_TOLERANCE): a stamp from the future is not trusted, so a clock running ahead
   cannot lock the others out for longer than `lease.hours`.
3. Taking the lease is a compare-and-exchange of lease.json through the writer, whose transform checks
   the lease it read once more: on a shared filesystem two machines that both find it stale cannot both
   take it. Sync tools offer no atomicity; a double run is then harmless (rule 4, and curation's own
   compare-and-exchange per file), and a conflict copy of lease.json is merged on read.
4. A completed period is recorded in `done` and never run again on schedule by any machine. `done` only
   grows: it is merged (latest per job) across lease.json, its conflict copies and what this machine
   remembers, so a lost, corrupt or conflicting lease file never makes a period run twice. A machine
   whose clock is behind waits until its calendar passes the periods done. A claim more than
   CLAIM_HORIZON ahead of this machine's clock is nonsense (a broken clock, a hand edit) and ignored,
   so it cannot stop a job for good.
5. A takeover starts right after the last period done, so no day is left out.
6. A lease file that is not UTF-8 or not JSON, or whose fields are missing or of the wrong type, is stale: a
   warning is logged, its valid `done` entries still count, and the next machine to run rewrites it,
   keeping what it held in `lease.json.bak`.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from wolfmem.errors import WolfmemError
from wolfmem.storage.machine import MACHINE_ID_FILE, machine_id
from wolfmem.storage.state import StateStore
from wolfmem.storage.vault import content_hash
from wolfmem.storage.writer import Cause, Edit, VaultWriter

__all__ = ["LEASE_REL", "MACHINE_ID_FILE", "Lease", "LeaseCheck", "LeaseFile", "Parsed", "judge", "machine_id",
           "parse_lease"]

log = logging.getLogger(__name__)

LEASE_REL = ".wolfmem/lease.json"
SKEW_TOLERANCE = timedelta(minutes=10)
CLAIM_HORIZON = timedelta(days=7)
OBSERVED = "lease:observed"  # state records: when this machine first saw the lease as it is now,
REMEMBERED = "lease:done"  # and the latest period done per job it has ever read in a lease

_DAY, _MONTH, _WEEK = re.compile(r"^\d{4}-\d{2}-\d{2}$"), re.compile(r"^\d{4}-\d{2}$"), re.compile(r"^\d{4}-W\d{2}$")
_SHAPES = {"curate": _DAY, "audit": _MONTH, "digest": _WEEK}


@dataclass(frozen=True)
class Lease:
    """What the lease file says: the holder, when it last ran a job, and each job's last completed period."""

    machine: str
    last_run: datetime
    done: dict[str, str] = field(default_factory=dict)

    def expires(self, hours: float) -> datetime:
        """When the lease goes stale by its own timestamp."""
        return self.last_run + timedelta(hours=hours)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form written to the lease file."""
        return {
            "version": 1,
            "machine": self.machine,
            "last_run": self.last_run.astimezone(UTC).isoformat(timespec="seconds"),
            "done": dict(sorted(self.done.items())),
        }


@dataclass(frozen=True)
class Parsed:
    """A lease file's text, checked: the lease if usable, its valid `done` entries, and what was wrong."""

    lease: Lease | None
    done: dict[str, str]
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class LeaseCheck:
    """Whether this machine may run the leased jobs now, and why."""

    ok: bool
    reason: str
    holder: Lease | None
    expires: datetime | None = None  # when the holder's lease goes (or went) stale, as this machine judges


def parse_lease(text: str) -> Parsed:
    """Check a lease file's text field by field; nothing in it is trusted for its type."""
    if not text.strip():
        return Parsed(None, {})
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return Parsed(None, {}, (f"not JSON ({exc.msg} at line {exc.lineno})",))
    except (ValueError, RecursionError):  # a number over 4,300 digits, or nesting deeper than the stack
        return Parsed(None, {}, ("JSON too large or too deeply nested to read",))
    if not isinstance(data, dict):
        return Parsed(None, {}, ("not a JSON object",))
    problems: list[str] = []
    done = _valid_done(data.get("done"), problems)
    machine, stamp = data.get("machine"), data.get("last_run")
    if not isinstance(machine, str) or not machine.strip() or len(machine) > 200 or not machine.isprintable():
        problems.append(f"machine is {machine!r}, not a machine name")
        return Parsed(None, done, tuple(problems))
    try:
        last_run = _aware(datetime.fromisoformat(stamp)) if isinstance(stamp, str) else None
    except ValueError:
        last_run = None
    if last_run is None:
        problems.append(f"last_run is {stamp!r}, not a date and time")
        return Parsed(None, done, tuple(problems))
    return Parsed(Lease(machine.strip(), last_run, done), done, tuple(problems))


def _valid_done(raw: Any, problems: list[str]) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        problems.append(f"done is {type(raw).__name__}, not an object")
        return {}
    done: dict[str, str] = {}
    for job, period in raw.items():
        shape = _SHAPES.get(job)
        if isinstance(period, str) and (shape.match(period) if shape else any(
            pattern.match(period) for pattern in _SHAPES.values()
        )):
            done[job] = period
        else:
            problems.append(f"done[{job!r}] = {period!r} is not a period")
    return done


def judge(lease: Lease | None, machine: str, now: datetime, hours: float, seen_since: datetime) -> LeaseCheck:
    """May `machine` run the leased jobs at `now`? (rules 1 and 2; `seen_since`: when it first saw this lease)."""
    if lease is None:
        return LeaseCheck(True, "no usable lease; this machine takes it", None)
    if lease.machine == machine:
        return LeaseCheck(True, "this machine holds the lease", lease, lease.expires(hours))
    now, seen = _aware(now), _aware(seen_since)
    # Never renewed later than this machine first saw it so: a clock running ahead gains nothing.
    renewed = min(lease.last_run, seen + SKEW_TOLERANCE)
    ahead = lease.last_run - seen
    expires = renewed + timedelta(hours=hours)
    skew = f" (its timestamp was {_span(ahead)} ahead of this machine's clock, so it is not trusted)" \
        if ahead > SKEW_TOLERANCE else ""
    if now >= expires:
        return LeaseCheck(True, f"{lease.machine}'s lease went stale at {_show(expires)}{skew}; "
                                "this machine takes over", lease, expires)
    return LeaseCheck(
        False,
        f"{lease.machine} curates this vault (lease fresh until {_show(expires)}){skew}; "
        f"to move curation here, stop wolfmem there or delete {LEASE_REL} in the vault",
        lease,
        expires,
    )


class _Held(Exception):
    """Raised inside the lease transform when another machine holds a fresh lease."""

    def __init__(self, check: LeaseCheck) -> None:
        super().__init__(check.reason)
        self.check = check


class LeaseFile:
    """Reads, checks, takes and renews `<vault>/.wolfmem/lease.json` for one machine."""

    def __init__(self, writer: VaultWriter, machine: str, hours: float, state: StateStore | None = None) -> None:
        self.writer = writer
        self.state = state if state is not None else writer.state
        self.machine = machine
        self.hours = hours
        self.path = writer.vault.root / LEASE_REL
        self._warned = ""  # the damaged text last warned about: a heartbeat every 5 minutes says it once

    # -- reading ------------------------------------------------------------------------------------------
    def _text(self, rel: str = LEASE_REL) -> str:
        try:
            return self.writer.vault.read_bytes(rel).decode("utf-8")
        except FileNotFoundError:
            return ""
        except (OSError, UnicodeDecodeError, WolfmemError) as exc:
            log.warning("cannot read the lease file %s (%s); it counts as stale", rel, exc)
            return ""

    def _parse(self, text: str) -> Parsed:
        parsed = parse_lease(text)
        if parsed.problems and text != self._warned:
            self._warned = text
            log.warning("the lease file %s is damaged (%s); it counts as stale, and the next run rewrites it",
                        self.path, "; ".join(parsed.problems))
        return parsed

    def read(self) -> Lease | None:
        """The current lease, or None when there is none or it is unusable (then it is up for grabs)."""
        return self._parse(self._text()).lease

    def done(self, job: str, now: datetime) -> str:
        """The latest period of `job` any machine completed, as far as this one can tell (rule 4); "" if none.

        The job records' periods as the other machines see them; for curation one of four progress
        keepers (see `curation.coverage`), the one that lets a takeover start after the last period done.
        """
        claims = [self._parse(self._text()).done.get(job, "")]
        claims += [parse_lease(self._text(copy)).done.get(job, "") for copy in self._conflict_copies()]
        claims.append(self._remembered().get(job, ""))
        latest = max((claim for claim in claims if claim and _plausible(claim, now)), default="")
        if latest > self._remembered().get(job, ""):
            self._remember({**self._remembered(), job: latest})
        return latest

    def _conflict_copies(self) -> list[str]:
        """Sync tools' conflict copies of the lease (vault-relative), read like the lease itself."""
        try:
            found = self.writer.vault.names(LEASE_REL.rsplit("/", 1)[0], "lease*.json")
        except (OSError, WolfmemError):
            return []
        return sorted(rel for rel in found if rel != LEASE_REL)

    # -- deciding -----------------------------------------------------------------------------------------
    def check(self, now: datetime) -> LeaseCheck:
        """May this machine run curation now? Yes if the lease is ours, absent, unusable or stale (no vault write)."""
        text = self._text()
        return judge(self._parse(text).lease, self.machine, now, self.hours, self._seen_since(text, now))

    def acquire(self, now: datetime) -> LeaseCheck:
        """Take or renew the lease, atomically against another machine taking it (rule 3); the check made."""
        try:
            return self._update(now, None, insist=True)
        except _Held as held:
            return held.check

    def renew(self, now: datetime, job: str | None = None, period: str | None = None) -> Lease:
        """Record a job's newly completed period (and renew the lease, unless another machine took it meanwhile)."""
        self._update(now, (job, period) if job is not None and period is not None else None, insist=False)
        return self.read() or Lease(self.machine, _aware(now))

    def _update(self, now: datetime, claim: tuple[str, str] | None, *, insist: bool) -> LeaseCheck:
        now = _aware(now)

        def transform(current: str) -> Edit[LeaseCheck]:
            parsed = self._parse(current)
            check = judge(parsed.lease, self.machine, now, self.hours, self._seen_since(current, now))
            if not check.ok and insist:
                raise _Held(check)
            done = dict(parsed.done)
            extra = [self._remembered().items(), [claim] if claim else []]
            extra += [parse_lease(self._text(copy)).done.items() for copy in self._conflict_copies()]
            for job, period in (item for items in extra for item in items):
                if _plausible(period, now) and period > done.get(job, ""):
                    done[job] = period
            done = {job: period for job, period in done.items() if _plausible(period, now)}
            holder = Lease(self.machine, now, done) if check.ok or parsed.lease is None \
                else replace(parsed.lease, done=done)
            self._remember(done)
            return Edit(json.dumps(holder.to_dict(), indent=2) + "\n", check)

        # Bytes that are not UTF-8 are damage like any other (rule 6); a damaged lease is kept in lease.json.bak.
        written = self.writer.edit(LEASE_REL, transform, cause=Cause.LEASE, backup=self._damaged(),
                                   decode=lambda data: data.decode("utf-8", errors="replace"))
        assert written.detail is not None
        return written.detail

    def _damaged(self) -> bool:
        """Whether lease.json holds something other than a lease (not UTF-8, not JSON, wrong fields)."""
        try:
            return bool(parse_lease(self.writer.vault.read_bytes(LEASE_REL).decode("utf-8")).problems)
        except UnicodeDecodeError:
            return True
        except (OSError, WolfmemError):
            return False  # missing or unreadable: nothing to keep, or the write fails with the reason

    # -- this machine's memory of the lease -------------------------------------------------------------
    def _seen_since(self, text: str, now: datetime) -> datetime:
        """When this machine first saw the lease file hold exactly `text` (now, if this is the first time)."""
        revision = content_hash(text.encode("utf-8"))
        try:
            seen = self.state.run_record(OBSERVED) or {}
            if seen.get("revision") == revision:
                return _aware(datetime.fromisoformat(seen["since"]))
            self.state.put_run_record(OBSERVED, {"revision": revision, "since": _aware(now).isoformat()})
        except (WolfmemError, ValueError, KeyError, TypeError) as exc:
            log.info("cannot keep when the lease was first seen (%s); counting from now", exc)
        return _aware(now)

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
                log.info("cannot remember the periods done (%s); the lease file still holds them", exc)

    # -- status -------------------------------------------------------------------------------------------
    def status(self, now: datetime) -> dict[str, Any]:
        """Who curates this vault, for `wolfmem status`."""
        text = self._text()
        parsed = self._parse(text)
        lease = parsed.lease
        if lease is None:
            return {"holder": None, "this_machine": self.machine, "fresh": False, "last_run": None, "expires": None,
                    "problems": list(parsed.problems)}
        seen = self._seen_since(text, now)
        check = judge(lease, self.machine, now, self.hours, seen)
        ahead = lease.last_run - seen
        return {
            "holder": lease.machine,
            "this_machine": self.machine,
            "is_this_machine": lease.machine == self.machine,
            "fresh": lease.machine == self.machine or not check.ok,
            "last_run": _show(lease.last_run),
            "expires": _show(check.expires or lease.expires(self.hours)),
            "done": lease.done,
            "clock_ahead": _span(ahead) if ahead > SKEW_TOLERANCE else None,
            "problems": list(parsed.problems),
        }


def _plausible(period: str, now: datetime) -> bool:
    """Whether a completed period could be over by now, give or take CLAIM_HORIZON (rule 4)."""
    horizon = (_aware(now) + CLAIM_HORIZON).date()
    if _DAY.match(period):
        return period <= horizon.isoformat()
    if _MONTH.match(period):
        return period <= f"{horizon.year:04d}-{horizon.month:02d}"
    if _WEEK.match(period):
        year, week, _ = horizon.isocalendar()
        return period <= f"{year:04d}-W{week:02d}"
    return False


def _aware(moment: datetime) -> datetime:
    """Naive datetimes are taken as UTC so that two machines' times always compare."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _show(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds")


def _span(delta: timedelta) -> str:
    hours = delta.total_seconds() / 3600
    return f"{hours / 24:.1f} days" if hours >= 48 else f"{hours:.1f} hours"
