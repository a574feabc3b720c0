"""`wolfmem status`: gather the vault's health into one dict, and render it for a person."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

from wolfmem.daemon import daemon_pid
from wolfmem.jobs.runner import JobRunner
from wolfmem.memory.facade import Memory


def collect(memory: Memory) -> dict[str, Any]:
    """Vault, daemon, index health, jobs and LLM, as JSON-ready data."""
    data = memory.status()
    pid = daemon_pid(memory.vault)
    data["daemon"] = {"running": pid is not None, "pid": pid}
    config = memory.config
    data["llm"] = {
        "mode": "llm" if config.llm_model else "offline",
        "model": config.llm_model,
        "base_url": config.llm_base_url,
    }
    data["jobs"] = JobRunner(memory, config).status(memory.clock())
    # The last curation's machine-readable record: timings, token usage, each file's outcome.
    data["last_curation"] = memory.state.run_record("curate")
    # Links out of the vault are never followed; listing them tells a person who made one on purpose why.
    data["ignored_links"] = [asdict(link) for link in memory.vault.escaping_links()]
    return data


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
        f"daemon:   {'running (pid %s)' % daemon['pid'] if daemon['running'] else 'not running'}",
        f"index:    {index['facts']} facts in {index['files']} files; last sync {_when(index['last_sync'])}",
    ]
    if index["stale_files"]:
        lines.append(f"          {len(index['stale_files'])} file(s) changed since the last sync (the next search syncs them)")
    for rel, why in index["skipped_files"].items():
        lines.append(f"          skipped {rel}: {why}")
    lines.append(
        f"llm:      {llm['model']} at {llm['base_url'] or 'api.openai.com'}"
        if llm["mode"] == "llm"
        else "llm:      offline (the deterministic curator runs)"
    )
    jobs = data.get("jobs") or {}
    for name, job in (jobs.get("jobs") or {}).items():
        last = job.get("last_run") or {}
        lines.append(
            f"job {name}: last {last.get('status', 'never')} {last.get('finished_at', '')} "
            f"{last.get('summary', '')}".rstrip()
            + f"; next {job.get('next_run') or 'n/a'}"
        )
    if jobs.get("lease"):
        lines.append(f"curates:  {jobs['lease']}")
    for rel in data["conflict_copies"]:
        lines.append(f"conflict copy (never curated; merge it by hand): {rel}")
    for link in data.get("ignored_links") or []:
        lines.append(f"ignored link (it leads outside the vault, so it is never followed): {link['rel']} -> {link['target']}")
    return "\n".join(lines)
