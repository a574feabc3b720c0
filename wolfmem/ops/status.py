"""`wolfmem status`: gather the vault's health into one dict, and render it for a person."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

from wolfmem.curation.staging import staged
from wolfmem.errors import WolfmemError
from wolfmem.jobs.runner import JobRunner
from wolfmem.limits import curated_file_problem
from wolfmem.memory.facade import Memory
from wolfmem.ops.daemon import INDEXER_RECORD, daemon_pid, log_file
from wolfmem.storage import faults
from wolfmem.storage.conflicts import MARKERS, MERGED
from wolfmem.storage.vault import CURATED_PATHS, Vault

SYNC_KINDS = (MERGED, MARKERS)


def collect(memory: Memory) -> dict[str, Any]:
    """Vault, daemon, index health, jobs, LLM and faults, as JSON-ready data; a fault in one part spares the rest."""
    services = memory.services
    try:
        data = memory.status()
    except WolfmemError as exc:
        data = {
            "vault": str(services.vault.root),
            "state_dir": str(services.vault.state_dir),
            "index": {"error": str(exc), "stale_files": [], "skipped_files": {}},
            "conflict_copies": services.vault.conflict_copies(),
            "repairs": [],
        }
    pid = daemon_pid(services.vault)
    data["daemon"] = {"running": pid is not None, "pid": pid, "log": str(log_file(services.config))}
    config = services.config
    data["llm"] = {
        "mode": "llm" if config.llm_model else "offline",
        "model": config.llm_model,
        "base_url": config.llm_base_url,
    }
    data["embeddings"] = (
        memory.hybrid.status(data["index"]["facts"]) if memory.hybrid is not None else {"mode": "lexical"}
    )
    try:
        data["jobs"] = JobRunner(services).status(services.clock())
        # The last curation's machine-readable record: timings, token usage, each file's outcome.
        data["last_curation"] = services.state.run_record("curate")
        indexer = services.state.run_record(INDEXER_RECORD) or {}
    except WolfmemError as exc:
        data["jobs"], data["last_curation"], indexer = {"error": str(exc)}, None, {}
    last_error = services.writer.last_index_error or indexer.get("error") or ""
    if "error" not in data["index"]:
        data["index"]["last_error"] = {"error": last_error, "at": indexer.get("at")} if last_error else None
    # Rewrites over the removal budget wait for a person: `wolfmem curate apply` lands them.
    try:
        data["staged_curation"] = [
            {"file": item.rel, "day": item.day, "reasons": item.reasons} for item in staged(services)
        ]
    except WolfmemError:
        data["staged_curation"] = []
    data["faults"] = [fault.to_dict() for fault in faults.check(services.vault, services.writer)]
    data["too_large"] = _too_large(services.vault, services.config.index_max_file_bytes)
    # What a person may expect a search to find but that is not indexed (a notes.txt, a README.md at the top).
    data["not_indexed"] = [{"path": rel, "reason": why} for rel, why in services.vault.not_indexed()]
    # Links out of the vault are never followed; listing them tells a person who made one on purpose why.
    data["ignored_links"] = [asdict(link) for link in services.vault.escaping_links()]
    return data


def _too_large(vault: Vault, cap: int) -> list[str]:
    """What to do about each curated file too large to save into, map or curate."""
    problems = []
    for rel in CURATED_PATHS:
        try:
            problems.append(curated_file_problem(rel, vault.size(rel), cap))
        except (OSError, WolfmemError):
            continue  # an unreadable file is reported where it is read
    return [problem for problem in problems if problem]


def _when(stamp: Any) -> str:
    if isinstance(stamp, (int, float)):
        return datetime.fromtimestamp(stamp).astimezone().isoformat(timespec="seconds")
    return str(stamp) if stamp else "never"


def render(data: dict[str, Any]) -> str:
    """A short human-readable report."""
    index = data["index"]
    daemon = data["daemon"]
    llm = data["llm"]
    lines = [
        f"vault:    {data['vault']}",
        f"state:    {data['state_dir']}",
        f"daemon:   {'running (pid {})'.format(daemon['pid']) if daemon['running'] else 'not running'}",
        f"log:      {daemon['log']}",
        f"index:    {index['facts']} facts in {index['files']} files; last sync {_when(index['last_sync'])}"
        if "error" not in index else f"index:    unavailable: {index['error']}",
    ]
    if index.get("last_error"):
        lines.append(f"          last indexer error ({index['last_error']['at'] or 'this process'}): "
                     f"{index['last_error']['error']}")
    if index["stale_files"]:
        lines.append(f"          {len(index['stale_files'])} file(s) changed since the last sync "
                     "(the next search syncs them)")
    for rel, why in index["skipped_files"].items():
        lines.append(f"          skipped {rel}: {why}")
    lines.append(
        f"llm:      {llm['model']} at {llm['base_url'] or 'api.openai.com'}"
        if llm["mode"] == "llm"
        else "llm:      offline (the deterministic curator runs)"
    )
    lines.append(_embeddings_line(data.get("embeddings") or {"mode": "lexical"}))
    jobs = data.get("jobs") or {}
    for name, job in (jobs.get("jobs") or {}).items():
        last = job.get("last_run") or {}
        lines.append(
            f"job {name}: last {last.get('status', 'never')} {last.get('finished_at', '')} "
            f"{last.get('summary', '')}".rstrip()
            + f"; next {job.get('next_run') or 'n/a'}"
        )
    curation = data.get("last_curation") or {}
    if curation.get("left"):
        why = f" ({curation['stopped']})" if curation.get("stopped") else ""
        lines.append(f"curation: {curation['left']:,} episode entries wait for the next run{why}")
    if jobs.get("lease"):
        lines.append(f"curates:  {jobs['lease']}")
    detail = jobs.get("lease_detail") or {}
    if detail.get("clock_ahead"):
        lines.append(f"clock:    {detail['holder']} stamped the lease {detail['clock_ahead']} ahead of this "
                     "machine's clock; its stamp is not trusted. Keep the clocks in sync (NTP)")
    if detail.get("problems"):
        lines.append(f"lease:    the lease file is damaged ({'; '.join(detail['problems'])}); it counts as "
                     "stale and the next run rewrites it")
    if jobs.get("error"):
        lines.append(f"jobs:     unavailable: {jobs['error']}")
    for problem in data.get("too_large") or []:
        lines.append(f"too large: {problem}")
    for fault in data.get("faults") or []:
        lines.append(f"fault:    {fault['message']}")
    for item in data.get("staged_curation") or []:
        lines.append(
            f"staged:   {item['file']} ({item['day']}): a rewrite over the removal budget waits for you; "
            "`wolfmem curate apply --dry-run` shows it, `wolfmem curate apply` lands it"
        )
    for repair in data.get("repairs") or []:
        label = "sync:  " if repair.get("kind") in SYNC_KINDS else "editor:"
        lines.append(f"{label}   {repair['at']}: {repair['message']}")
    needs = data.get("needs_person") or {}
    for rel, why in needs.items():
        lines.append(f"needs you: {rel}: {why}")
    for rel in data["conflict_copies"]:
        if rel not in needs:
            lines.append(f"conflict copy (never indexed; the next sync merges it into its file): {rel}")
    for item in data.get("not_indexed") or []:
        lines.append(f"not indexed: {item['path']} ({item['reason']})")
    for link in data.get("ignored_links") or []:
        lines.append("ignored link (it leads outside the vault, so it is never followed): "
                     f"{link['rel']} -> {link['target']}")
    return "\n".join(lines)


def _embeddings_line(info: dict[str, Any]) -> str:
    """Hybrid search progress and the endpoint's state, or that search is lexical only."""
    if info.get("mode") != "hybrid":
        return "search:   lexical (no embeddings.model configured)"
    line = (f"search:   hybrid; {info['embedded']:,} of {info['total']:,} facts embedded with "
            f"{info['model']} at {info['base_url']}")
    if info["embedded"] < info["total"]:
        line += " (the rest are found lexically until embedded)"
    if info["endpoint"] == "down":
        line += (f"\n          embeddings endpoint DOWN since {_when(info['since'])}: {info['error']}"
                 "\n          searches answer lexically until it is back")
    if info.get("fell_back"):
        line += (f"\n          {info['fell_back']:,} searches fell back to lexical ranking, "
                 f"the last at {_when(info['fell_back_at'])}: {info['fell_back_last']}")
    return line
