"""The jobs the runner can run: nightly curation, the monthly audit and the weekly digest, each for one period."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from wolfmem.curation import run as curate
from wolfmem.curation.audit.run import run_audit
from wolfmem.jobs.digest import write_digest
from wolfmem.storage.services import VaultServices


@dataclass(frozen=True)
class JobRun:
    """One run handed to a job function: which period, which days, and how."""

    name: str
    services: VaultServices
    now: datetime
    period: str  # '2026-11-04' (curate), '2026-10' (audit), '2026-W45' (digest)
    day: date  # the last day the run covers
    # The first day it covers (the same day curate.run's `since` and its record's "since" name);
    # None: the job's own default (a first run).
    since: date | None
    dry_run: bool = False
    apply: bool | None = None


JobFunc = Callable[[JobRun], Mapping[str, Any]]


def curate_job(run: JobRun) -> Mapping[str, Any]:
    """Nightly curation: every episode entry filed through `day` not consumed yet, and the saves from `since` on."""
    curator = curate.make_curator(run.services.config)
    try:
        result = curate.run(run.services, curator, run.day, since=run.since, dry_run=run.dry_run)
    finally:
        curator.close()
    return result.to_dict()


def audit_job(run: JobRun) -> Mapping[str, Any]:
    """The monthly adversarial audit of the period's month."""
    return run_audit(run.services, run.period, run.now, apply=run.apply)


def digest_job(run: JobRun) -> Mapping[str, Any]:
    """The weekly digest of the seven days ending on `day` (no LLM)."""
    return write_digest(run.services, run.period, run.day, dry_run=run.dry_run)


DEFAULT_JOBS: dict[str, JobFunc] = {"curate": curate_job, "audit": audit_job, "digest": digest_job}
