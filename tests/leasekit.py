"""What the vault says about who curates, read straight from its files (the curator record, each machine's file)."""

from __future__ import annotations

import json
from pathlib import Path


def published(vault: Path) -> dict:
    """{"machine": the latest chosen curator or None, "done": the latest period per job over every machine file}."""
    record = vault / ".wolfmem" / "curator.jsonl"
    choices = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    latest = max(choices, key=lambda choice: (choice["at"], choice["machine"]), default=None)
    done: dict[str, str] = {}
    for path in sorted((vault / ".wolfmem" / "machines").glob("*.json")):
        for job, period in json.loads(path.read_text()).get("done", {}).items():
            done[job] = max(period, done.get(job, ""))
    return {"machine": latest["machine"] if latest else None, "done": done, "choices": choices}
