"""What each agent tool does: the Memory call behind it, and the text and structured content it answers with."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from wolfmem import limits
from wolfmem.cancellation import checkpoint
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
        (hits,), left_out = fit([memory.search(query, limit=args.get("limit", 10), **options)])
        data: dict[str, Any] = {"query": _cut(query), "results": [search_hit(h) for h in hits]}
        result = ToolResult(_hits_text(query, hits) + _cut_note(left_out), data)
        return _told(result, memory.take_notices(h.path for h in hits))
    assert queries is not None  # exactly one of the two, checked above
    limit = args.get("limit", BATCH_LIMIT)
    found: list[list[Hit] | UsageError] = []
    for number, text in enumerate(queries, 1):
        checkpoint(f"phrasing {number} of {len(queries)}")
        try:
            found.append(memory.search(text, limit=limit, **options))
        except UsageError as exc:
            found.append(exc)  # one phrasing of stop words should not sink the rest of the batch
    if all(isinstance(item, UsageError) for item in found):
        # Bad shared options (a date, a source) fail every phrasing alike: say it once.
        raise UsageError("; ".join(dict.fromkeys(str(item) for item in found)))
    fitted, left_out = fit([item for item in found if not isinstance(item, UsageError)])
    groups: list[dict[str, Any]] = []
    blocks: list[str] = []
    paths: set[str] = set()
    kept = iter(fitted)
    for text, item in zip(queries, found, strict=True):
        if isinstance(item, UsageError):
            groups.append({"query": _cut(text), "results": [], "error": str(item)})
            blocks.append(f"## {_echo(text)}: error: {item}")
            continue
        hits = next(kept)
        groups.append({"query": _cut(text), "results": [search_hit(h) for h in hits]})
        blocks.append("## " + _hits_text(text, hits))
        paths.update(hit.path for hit in hits)
    text_out = "\n\n".join(blocks) + _cut_note(left_out)
    return _told(ToolResult(text_out, {"queries": groups}), memory.take_notices(paths))


def fit(groups: list[list[Hit]], budget: int = limits.SEARCH_ANSWER_CHARS) -> tuple[list[list[Hit]], int]:
    """The hits with their texts within `budget` characters in all, and how many hits were left out.

    Each hit's text is cut to an even share of the budget; when a share would fall below
    MIN_HIT_CHARS, each phrasing keeps only its best hits (the same number for each) instead.
    """
    total = sum(len(hits) for hits in groups)
    if not total or sum(len(hit.text) for hits in groups for hit in hits) <= budget:
        return groups, 0
    keep = max(1, budget // (limits.MIN_HIT_CHARS * len(groups)))
    kept = [hits[:keep] for hits in groups]
    share = max(limits.MIN_HIT_CHARS, budget // sum(len(hits) for hits in kept))
    cut = [[_shortened(hit, share) for hit in hits] for hits in kept]
    return cut, total - sum(len(hits) for hits in kept)


def _shortened(hit: Hit, chars: int) -> Hit:
    """A hit with its text and snippet cut to `chars`; memory_get reads the whole line."""
    if len(hit.text) <= chars:
        return hit
    return replace(hit, text=limits.cut(hit.text, chars), snippet=limits.cut(hit.snippet, chars))


def _cut_note(left_out: int) -> str:
    """What the answer's budget left out, and how to read it anyway."""
    if not left_out:
        return ""
    return (f"\n({left_out} lower-ranked results left out to keep the answer within "
            f"{limits.SEARCH_ANSWER_CHARS:,} characters; ask with a smaller limit or fewer queries.)")


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


