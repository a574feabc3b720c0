"""The jobs the runner can run: nightly curation, the monthly audit and the weekly digest, each for one period."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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


class JobStatus(enum.StrEnum):
    """How a job attempt ended: a job's own status (curation's, the audit's, the digest's) or the runner's."""

    OK = "ok"
    LANDED = "landed"
    NOOP = "noop"
    PARTIAL = "partial"
    DRY_RUN = "dry-run"
    FAILED = "failed"  # the job failed: recorded, retried with backoff
    ERROR = "error"  # the runner could not even check the job
    BUSY = "busy"  # another thread or process is running it
    DONE = "done"  # the period already ran
    SKIPPED = "skipped"  # another machine holds the lease


FAILED = frozenset({JobStatus.FAILED, JobStatus.ERROR})


@dataclass(frozen=True)
class JobResult:
    """What one attempt at a job did; `detail` is what the job returned beside its status and summary."""

    job: str
    status: JobStatus
    summary: str
    period: str | None = None
    since: str | None = None  # the first day covered (curation), when the job ran
    day: str | None = None  # the last day covered; None: the job did not run
    detail: Mapping[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """Whether the attempt failed (the CLI exits 1)."""
        return self.status in FAILED

    def to_dict(self) -> dict[str, Any]:
        """The JSON form `wolfmem curate --json` and friends print."""
        if self.day is None:
            head: dict[str, Any] = {"job": self.job, "status": self.status.value}
            if self.period is not None:
                head["period"] = self.period
            return {**head, "summary": self.summary}
        return {"job": self.job, "period": self.period, "since": self.since, "day": self.day, **self.detail,
                "status": self.status.value, "summary": self.summary}


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
