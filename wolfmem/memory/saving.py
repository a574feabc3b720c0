"""memory_save: validate, dedup against the curated files, route to a section, insert through the writer."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from wolfmem.core import markdown
from wolfmem.core.credentials import find_secret
from wolfmem.core.facts import (
    Relation,
    clean_fact,
    fact_key,
    is_blank,
    mentions_entity,
    relate,
    text_problem,
)
from wolfmem.errors import InvalidFact, UsageError
from wolfmem.memory.refs import make_ref
from wolfmem.search import query
from wolfmem.search.index import Filters
from wolfmem.search.sync import Syncer
from wolfmem.storage.state import StateStore
from wolfmem.storage.vault import CURATED, CURATED_PATHS, template_text
from wolfmem.storage.writer import Cause, Edit, VaultWriter, Written

UNFILED = "Unfiled"
CANDIDATES = 12
MAX_CONTRADICTED = 3
MAX_TOPIC_CHARS = 80
MAX_REQUEST_ID_CHARS = 200

TYPE_ALIASES = {
    **{name: name for name in CURATED},
    "person": "people",
    "project": "projects",
    "preference": "preferences",
    "decision": "decisions",
    "tech": "technical",
}


@dataclass(frozen=True)
class Receipt:
    """What memory_save tells the agent: what happened and where the fact lives."""

    status: str  # "saved" | "duplicate"
    path: str
    line: int
    section: str
    ref: str
    message: str
    duplicate_of: str | None = None
    possibly_contradicts: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form, without empty optional fields."""
        data = asdict(self)
        if data["duplicate_of"] is None:
            del data["duplicate_of"]
        if not data["possibly_contradicts"]:
            del data["possibly_contradicts"]
        return data


def route(type_name: str) -> str:
    """The curated file name a save type goes to, or a UsageError listing the valid types."""
    key = type_name.strip().casefold() if isinstance(type_name, str) else ""
    if key not in TYPE_ALIASES:
        raise UsageError(
            f"unknown type {type_name!r}; use one of: {', '.join(CURATED)} (default: technical)"
        )
    return TYPE_ALIASES[key]


def clean_topic(topic: str | None) -> str | None:
    """A usable section name, None for no topic, or a UsageError saying how to fix it."""
    if topic is None:
        return None
    if not isinstance(topic, str):
        raise UsageError(f"topic must be text, not {type(topic).__name__}")
    topic = unicodedata.normalize("NFC", topic)
    cleaned = re.sub(r"\s+", " ", topic.strip().lstrip("#").strip())
    if is_blank(cleaned):
        raise UsageError("topic is empty — pass a section name like 'Sarah (Manager)' or omit it")
    problem = text_problem(topic.strip())
    if problem is not None and problem != "spans several lines":
        raise UsageError(f"topic {problem}; pass a plain section name like 'Sarah (Manager)'")
    if problem is not None or len(cleaned) > MAX_TOPIC_CHARS:
        raise UsageError(f"topic must be one short line (at most {MAX_TOPIC_CHARS} characters), e.g. 'wolfmem'")
    if any(mark in cleaned for mark in ("```", "~~~", "|", "<!--")):
        raise UsageError("topic must be plain words, not markdown — e.g. 'Sarah (Manager)'")
    kind = find_secret(cleaned)
    if kind:
        raise InvalidFact(f"refused: the topic looks like a secret ({kind}); name the subject instead")
    return cleaned


class Saver:
    """Performs memory_save for one vault."""

    def __init__(
        self,
        writer: VaultWriter,
        syncer: Syncer,
        state: StateStore,
        clock: Callable[[], datetime],
        refresh: Callable[[], object] | None = None,
    ) -> None:
        self.writer = writer
        self.syncer = syncer
        self.state = state
        self.clock = clock
        # Dedup compares against the curated files only, so only they must be fresh; a watching
        # Memory passes its own sync, which re-reads just the files its inotify queue names.
        self.refresh = refresh or (lambda: syncer.sync(only=CURATED_PATHS))

    # -- memory_save ----------------------------------------------------------
    def save(self, fact: str, type_name: str, topic: str | None, request_id: str | None) -> Receipt:
        """Validate, dedup against every curated fact, then insert the fact as one bullet line."""
        if request_id is not None:
            if (
                not isinstance(request_id, str)
                or not request_id.strip()
                or len(request_id) > MAX_REQUEST_ID_CHARS
                or text_problem(request_id) is not None
            ):
                raise UsageError(
                    f"request_id must be a non-empty one-line string of at most {MAX_REQUEST_ID_CHARS} "
                    "printable characters, e.g. a UUID"
                )
            earlier = self.state.receipt(request_id)
            if earlier is not None:
                return Receipt(**earlier)
        if not isinstance(fact, str):
            raise InvalidFact(f"fact must be text, not {type(fact).__name__}")
        name = route(type_name)
        heading = clean_topic(topic)
        sentence = clean_fact(fact)
        self.refresh()
        with self.syncer.index.snapshot():
            duplicate, contradicted = self._dedup(sentence)
        if duplicate is not None:
            receipt = duplicate
            if request_id is not None:
                self.state.put_receipt(request_id, asdict(receipt), self.clock().date().isoformat())
            return receipt
        return self._insert(sentence, name, heading, contradicted, request_id)

    def _dedup(self, sentence: str) -> tuple[Receipt | None, list[str]]:
        """A duplicate receipt when the fact is on file already, else the refs it may contradict."""
        index = self.syncer.index
        same = [hit for hit in index.iter_facts(Filters(keys=(fact_key(sentence),))) if hit.path in CURATED_PATHS]
        if same:
            first = min(same, key=lambda hit: (hit.path, hit.line))
            return self._duplicate(first.path, first.line, first.section), []
        contradicted: list[str] = []
        # A paraphrase shares the fact's rarer words; searching those in fact text alone is enough.
        terms = query.plan(index, sentence).searched
        # Filtering in Whoosh costs more than over-fetching and keeping the curated files' facts.
        hits = index.search(terms, Filters(), CANDIDATES * 4, weights={"text": 1.0})
        for hit in [hit for hit in hits if hit.path in CURATED_PATHS][:CANDIDATES]:
            relation = relate(sentence, hit.text)
            if relation is Relation.DUPLICATE:
                return self._duplicate(hit.path, hit.line, hit.section), []
            if relation is Relation.CONTRADICTS and len(contradicted) < MAX_CONTRADICTED:
                contradicted.append(make_ref(hit.path, hit.line))
        return None, contradicted

    def _duplicate(self, path: str, line: int, section: str) -> Receipt:
        ref = make_ref(path, line)
        return Receipt(
            status="duplicate",
            path=path,
            line=line,
            section=section,
            ref=ref,
            message=f"Already on file at {ref}; nothing was written.",
            duplicate_of=ref,
        )

    def _insert(
        self, sentence: str, name: str, topic: str | None, contradicted: list[str], request_id: str | None
    ) -> Receipt:
        """Insert the bullet into its section through the writer, redoing it on top of any concurrent edit."""
        rel = f"knowledge/{name}.md"
        key = fact_key(sentence)

        def insert(text: str) -> Edit[Receipt]:
            earlier = self.state.receipt(request_id) if request_id is not None else None
            if earlier is not None:
                raise _Answered(Receipt(**earlier))
            parsed = markdown.parse(text if text.strip() else template_text(name))
            for fact in parsed.facts:
                if fact_key(fact.text) == key:  # another writer saved the same fact a moment ago
                    raise _Answered(self._duplicate(rel, fact.line, fact.section))
            heading = self._choose_section(parsed, sentence, topic)
            try:
                new_text, line = markdown.add_fact(
                    text if text.strip() else template_text(name), sentence, heading, parsed.title or name.title()
                )
            except ValueError as exc:
                raise InvalidFact(str(exc)) from None
            return Edit(new_text, self._saved(rel, line, heading, contradicted))

        def remember(written: Written[Receipt]) -> None:
            if request_id is not None and written.detail is not None:
                self.state.put_receipt(request_id, asdict(written.detail), self.clock().date().isoformat())

        try:
            written = self.writer.edit(rel, insert, cause=Cause.SAVE, on_commit=remember)
        except _Answered as answer:
            return answer.receipt
        assert written.detail is not None
        return written.detail

    @staticmethod
    def _saved(rel: str, line: int, heading: str, contradicted: list[str]) -> Receipt:
        ref = make_ref(rel, line)
        message = f"Saved to {rel} under '## {heading}' ({ref})."
        if contradicted:
            message += (
                " It may contradict " + ", ".join(contradicted) + "; if that older fact is now wrong, "
                "tell the user — nightly curation keeps the newest."
            )
        return Receipt("saved", rel, line, heading, ref, message, None, contradicted)

    @staticmethod
    def _choose_section(parsed: markdown.ParsedFile, sentence: str, topic: str | None) -> str:
        """The topic's section, else a section whose heading names an entity the fact mentions, else Unfiled."""
        if topic is not None:
            existing = markdown.find_section(parsed, topic)
            return existing.heading if existing else topic
        for section in parsed.sections:
            if mentions_entity(section.heading, sentence):
                return section.heading
        existing = markdown.find_section(parsed, UNFILED)
        return existing.heading if existing else UNFILED


class _Answered(Exception):
    """Raised inside a save's transform when the answer is already known (a replayed request, a duplicate)."""

    def __init__(self, receipt: Receipt) -> None:
        super().__init__(receipt.message)
        self.receipt = receipt
