"""Speaking to a person: the short file names they type, and the commands an error message should name.

The library's messages are written for agents and name the MCP tools ("use memory_search or
memory_map"); at the CLI the same advice names the commands. And a person types `people` or
`people.md` where an agent passes `file:knowledge/people.md`: every command that takes a file or
a ref accepts the short names `history people` does.
"""

from __future__ import annotations

import re

from wolfmem.curation.backups import curated_rel

# Each tool, as the command that does the same for a person.
COMMANDS = {
    "memory_search": "wolfmem search",
    "memory_get": "wolfmem get",
    "memory_save": "wolfmem save",
    "memory_map": "wolfmem map",
    "memory_log": "wolfmem log",
    "memory_update": "wolfmem update",
    "memory_forget": "wolfmem forget",
    "memory_restore": "wolfmem restore --fact",
}
_TOOL = re.compile(r"\b(" + "|".join(COMMANDS) + r")\b")


def for_people(message: str) -> str:
    """`message` with each tool name replaced by the command a person would run."""
    return _TOOL.sub(lambda match: f"`{COMMANDS[match.group(1)]}`", message)


def full_ref(ref: str) -> str:
    """A ref with a curated file's short name expanded: `people.md#L6` is `file:knowledge/people.md#L6`."""
    body = ref.strip()
    prefixed = body.startswith("file:")
    path, hash_, anchor = body.removeprefix("file:").partition("#")
    expanded = curated_rel(path)
    if expanded == path:
        return ref
    return f"{'file:' if prefixed else ''}{expanded}{hash_}{anchor}"
