"""Every bound on what a caller may send and on what it gets back: one table for the CLI, MCP and OpenAI paths.

Work must grow with what an honest call needs, never with what a caller can paste: a 1 MB query
once took 87 s to plan and was echoed back whole. Memory checks each argument against this table
before doing any work, the tool schemas publish the same numbers as `maxLength`, and replies quote
arguments back cut to size.
"""

from __future__ import annotations

from dataclasses import dataclass

from wolfmem.errors import UsageError

# -- the sizes themselves; the layers that enforce them import them from here ---------
MAX_FACT_CHARS = 300  # one sentence a person would write; longer is a paragraph to split
MAX_TOPIC_CHARS = 80  # a section heading: a name, a project, a topic
MAX_REQUEST_ID_CHARS = 200  # a UUID is 36; room for a caller's own prefixes
MAX_REF_CHARS = 1024  # a path, a heading and a line range
MAX_BULLET_CHARS = 500  # an episode line is a note, not a transcript
MAX_HEADLINE_CHARS = 100  # an episode block's headline
MAX_REASON_CHARS = 300  # why a fact is forgotten: a sentence, like a fact


@dataclass(frozen=True)
class Limit:
    """The most characters one argument may hold, and what to do instead of sending more."""

    argument: str
    chars: int
    advice: str

    def check(self, value: object, where: str | None = None) -> None:
        """Refuse a string longer than the limit with a UsageError that names the limit; other values pass."""
        if isinstance(value, str) and len(value) > self.chars:
            raise UsageError(self.message(len(value), where))

    def message(self, length: int, where: str | None = None) -> str:
        """What to tell a caller who sent `length` characters."""
        return f"{where or self.argument} is {length:,} characters; at most {self.chars:,} — {self.advice}"


# -- arguments ------------------------------------------------------------------
# A pasted paragraph is ~2,000 characters; 20,000 keeps planning near 0.1 s (BENCHMARKS.md).
QUERY = Limit("query", 20_000, "ask a question or give keywords, not a whole document")
REF = Limit("ref", MAX_REF_CHARS, "pass a ref from memory_search, e.g. 'file:knowledge/people.md#L12'")
FACT = Limit("fact", MAX_FACT_CHARS, "shorten it or split it into several facts")
TOPIC = Limit("topic", MAX_TOPIC_CHARS, "name the section in a few words, e.g. 'Sarah Chen'")
REQUEST_ID = Limit("request_id", MAX_REQUEST_ID_CHARS, "use a short unique key such as a UUID")
# Episode lines are stored cut to MAX_BULLET_CHARS; far longer ones are a pasted transcript.
LOG_LINE = Limit("text", 2_000, f"summarise it; each line is kept to {MAX_BULLET_CHARS} characters")
HEADLINE = Limit("headline", 1_000, f"a headline is kept to {MAX_HEADLINE_CHARS} characters")
REASON = Limit("reason", MAX_REASON_CHARS, "say why in one sentence")
# A fact line as the caller read it; hand-written lines can be long, so this is generous.
FACT_TEXT = Limit("expected", 20_000, "pass the fact's text as memory_search or memory_get showed it")
# What a person passes to a prompt: something they just said, a question, a focus.
PROMPT_ARGUMENT = Limit("argument", 20_000, "say it in a few sentences")
# A whole call's arguments as a JSON string (the OpenAI path): far above any honest call.
ARGUMENT_CHARS = 100_000
# Resources one MCP client may subscribe to; each file change re-reads all of them.
SUBSCRIPTIONS = 100

# The limit that applies to each argument name of the tools (a `queries` item is a query).
BY_ARGUMENT: dict[str, Limit] = {
    "query": QUERY,
    "queries": QUERY,
    "ref": REF,
    "fact": FACT,
    "topic": TOPIC,
    "request_id": REQUEST_ID,
    "text": LOG_LINE,
    "headline": HEADLINE,
    "reason": REASON,
    "expected": FACT_TEXT,
}

# -- replies --------------------------------------------------------------------
ECHO_CHARS = 120  # a query quoted back: a pasted page must not come back twice
HIT_TEXT_CHARS = 2_000  # a search hit's text; memory_get reads a longer line whole
# All the hits' text of one memory_search answer (its text and its structured content each): the
# largest batch the limits allow (8 queries, 50 hits each) once answered with 280 kB.
SEARCH_ANSWER_CHARS = 40_000
MIN_HIT_CHARS = 160  # a hit cut shorter than this says too little: fewer hits are shown instead
ERROR_CHARS = 2_000  # an error message, which may quote an argument
# memory_get replies are bounded in refs.py (MAX_LINES, MAX_CHARS); search replies by their limit.


# -- files --------------------------------------------------------------------
def curated_file_problem(rel: str, size: int, cap: int) -> str | None:
    """Why a curated file of `size` bytes is too large to save into, map or curate; None when it is not.

    The cap is `index.max_file_bytes`: past it the index, and so the duplicate check, sees only the
    file's start, and a 1M-line people.md made the map take 103 s and a save 293 s.
    """
    if size <= cap:
        return None
    return (f"{rel} is {size:,} bytes, over the {cap:,} a curated file may hold (index.max_file_bytes), "
            f"so saves, the map and curation skip it — split it: move old sections into a note such as "
            f"{rel.removesuffix('.md')}-archive.md, or raise index.max_file_bytes")


def cut(text: str, chars: int) -> str:
    """`text`, or its first `chars - 1` characters and an ellipsis."""
    return text if len(text) <= chars else text[: chars - 1] + "…"
