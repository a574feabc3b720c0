"""What each agent tool does: the Memory call behind it, and the text and structured content it answers with."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from wolfmem import limits
from wolfmem.errors import UsageError
from wolfmem.memory.facade import Memory
from wolfmem.memory.searching import Hit
from wolfmem.tools.outputs import search_hit

BATCH_LIMIT = 5
ECHO_CHARS = limits.ECHO_CHARS


@dataclass(frozen=True)
class ToolResult:
    """A tool's outcome: text for the model, JSON-ready data for structured content, and whether it failed."""

    text: str
    data: dict[str, Any] | None = None
    is_error: bool = False


def run_search(memory: Memory, args: dict[str, Any]) -> ToolResult:
    query, queries = args.get("query"), args.get("queries")
    if (query is None) == (queries is None):
        raise UsageError(
            "pass exactly one of query (one question) or queries (a list of up to 8 phrasings), "
            "e.g. {\"query\": \"Who is my manager?\"}"
        )
    options = {key: args.get(key) for key in ("sources", "after", "before")}
    if query is not None:
        hits = memory.search(query, limit=args.get("limit", 10), **options)
        data: dict[str, Any] = {"query": _cut(query), "results": [search_hit(h) for h in hits]}
        return _told(ToolResult(_hits_text(query, hits), data), memory.take_notices(h.path for h in hits))
    assert queries is not None  # exactly one of the two, checked above
    limit = args.get("limit", BATCH_LIMIT)
    groups: list[dict[str, Any]] = []
    blocks: list[str] = []
    paths: set[str] = set()
    for text in queries:
        try:
            hits = memory.search(text, limit=limit, **options)
        except UsageError as exc:
            # One phrasing of stop words should not sink the rest of the batch.
            groups.append({"query": _cut(text), "results": [], "error": str(exc)})
            blocks.append(f"## {_echo(text)}: error: {exc}")
            continue
        groups.append({"query": _cut(text), "results": [search_hit(h) for h in hits]})
        blocks.append("## " + _hits_text(text, hits))
        paths.update(hit.path for hit in hits)
    if all("error" in group for group in groups):
        # Bad shared options (a date, a source) fail every phrasing alike: say it once.
        raise UsageError("; ".join(dict.fromkeys(group["error"] for group in groups)))
    return _told(ToolResult("\n\n".join(blocks), {"queries": groups}), memory.take_notices(paths))


def run_get(memory: Memory, args: dict[str, Any]) -> ToolResult:
    excerpt = memory.get(args["ref"])
    head = (
        f"{excerpt.ref} (lines {excerpt.start_line}-{excerpt.end_line} of {excerpt.total_lines}, "
        f"revision {excerpt.revision})"
    )
    return ToolResult(head + "\n" + excerpt.text.rstrip("\n") + _notice_text(excerpt.notices), excerpt.to_dict())


def run_save(memory: Memory, args: dict[str, Any]) -> ToolResult:
    receipt = memory.save(args["fact"], args.get("type", "technical"), args.get("topic"), args.get("request_id"))
    return ToolResult(receipt.message + _notice_text(receipt.notices), receipt.to_dict())


def run_map(memory: Memory, args: dict[str, Any]) -> ToolResult:
    text = memory.memory_map()
    return ToolResult(text, {"memory_map": text})


def run_log(memory: Memory, args: dict[str, Any]) -> ToolResult:
    receipt = memory.log_episode(args["text"], args.get("headline"))
    return ToolResult(receipt.message, receipt.to_dict())


def run_update(memory: Memory, args: dict[str, Any]) -> ToolResult:
    correction = memory.update(args["ref"], args["fact"], args.get("expected"))
    return ToolResult(correction.message + _notice_text(correction.notices), correction.to_dict())


def run_forget(memory: Memory, args: dict[str, Any]) -> ToolResult:
    correction = memory.forget(args["ref"], args["reason"], args.get("expected"))
    return ToolResult(correction.message + _notice_text(correction.notices), correction.to_dict())


def run_restore(memory: Memory, args: dict[str, Any]) -> ToolResult:
    correction = memory.restore_fact(args["ref"])
    return ToolResult(correction.message + _notice_text(correction.notices), correction.to_dict())


def _notice_text(notices: list[str]) -> str:
    """Notices as lines after a tool's text: what wolfmem did to a file since an agent last touched it."""
    return "".join(f"\nNotice: {notice}." for notice in notices)


def _told(result: ToolResult, notices: list[str]) -> ToolResult:
    """A search result with the notices of the files its hits are in."""
    if not notices:
        return result
    return ToolResult(result.text + _notice_text(notices), {**(result.data or {}), "notices": notices})


def format_hit(hit: Hit) -> str:
    """One line per hit: `ref [source date · section] text`."""
    where = " ".join(part for part in (hit.source, hit.date if hit.source == "episodes" else "") if part)
    if hit.section:
        where += f" · {hit.section}"
    return f"{hit.ref} [{where}] {hit.snippet}"


def _cut(text: str) -> str:
    """A query as structured content echoes it: cut short, so a pasted page does not come back twice."""
    return limits.cut(text, ECHO_CHARS)


def _echo(text: str) -> str:
    """A query quoted back to the model, cut short."""
    return json.dumps(_cut(text), ensure_ascii=False)


def _hits_text(query: str, hits: list[Hit]) -> str:
    if not hits:
        return (
            f"No results for {_echo(query)}. Search again with 2-3 other phrasings "
            "(a synonym, a name, a broader topic) before concluding it is not recorded."
        )
    noun = "result" if len(hits) == 1 else "results"
    return f"{len(hits)} {noun} for {_echo(query)}:\n" + "\n".join(format_hit(hit) for hit in hits)


