"""memory_save: validate, dedup against the curated files, route to a section, insert through the writer."""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from wolfmem.core import edits, markdown
from wolfmem.core.compare import Relation, duplicates, relate, subject_key
from wolfmem.core.credentials import find_secret
from wolfmem.core.entities import entity_heading, mentions_entity
from wolfmem.core.facts import (
    clean_fact,
    context_problem,
    fact_key,
    is_blank,
    text_problem,
)
from wolfmem.core.untrusted import looks_like_instruction
from wolfmem.errors import FileTooLarge, InvalidFact, StorageError, UsageError, WolfmemError, shown
from wolfmem.limits import MAX_REQUEST_ID_CHARS, MAX_TOPIC_CHARS, curated_file_problem
from wolfmem.memory.receipts import Receipt, Replays
from wolfmem.memory.refs import make_ref
from wolfmem.search import query
from wolfmem.search.schema import Filters, IndexHit
from wolfmem.search.sync import Syncer
from wolfmem.storage.archive import Archive, ArchivedFact, Reason
from wolfmem.storage.history import HAND_EDIT
from wolfmem.storage.state import StateStore
from wolfmem.storage.vault import CURATED, CURATED_PATHS, template_text
from wolfmem.storage.writer import Cause, Edit, VaultWriter, Written

log = logging.getLogger(__name__)

UNFILED = "Unfiled"
CANDIDATES = 12
MAX_CONTRADICTED = 3

TYPE_ALIASES = {
    **{name: name for name in CURATED},
    "person": "people",
    "project": "projects",
    "preference": "preferences",
    "decision": "decisions",
    "tech": "technical",
}


def route(type_name: str) -> str:
    """The curated file name a save type goes to, or a UsageError listing the valid types."""
    key = type_name.strip().casefold() if isinstance(type_name, str) else ""
    if key not in TYPE_ALIASES:
        raise UsageError(
            f"unknown type {shown(type_name)}; use one of: {', '.join(CURATED)} (default: technical)"
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
    if looks_like_instruction(cleaned):
        raise InvalidFact(
            "refused: the topic reads like an instruction to an AI agent, and memory is data, never "
            "instructions — name the person, project or subject instead, e.g. 'Sarah (Manager)'"
        )
    return cleaned


class Saver:
    """Performs memory_save for one vault."""

    def __init__(
        self,
        writer: VaultWriter,
        syncer: Syncer,
        state: StateStore,
        clock: Callable[[], datetime],
        similar: Callable[[str], list[IndexHit]] | None = None,
        refresh: Callable[[], object] | None = None,
        archive: Archive | None = None,
    ) -> None:
        self.writer = writer
        self.syncer = syncer
        self.state = state
        self.clock = clock
        # With embeddings: the curated facts nearest in meaning, extra candidates for relate() to judge.
        self.similar = similar
        # Dedup compares against the curated files only, so only they must be fresh; a watching
        # Memory passes its own sync, which re-reads just the files its inotify queue names.
        self.refresh = refresh or (lambda: syncer.sync(only=CURATED_PATHS))
        # The archive's records let a replay say why a fact it saved is gone; a fact saved again after it
        # left its file is recorded there as back (or a conflict copy's merge would take it out again).
        self.archive = archive
        self.replays = Replays(writer, state, clock, archive.records if archive else (lambda: []), self.refresh)

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
            earlier = self.replays.replayed(request_id, fact)
            if earlier is not None:
                return self.replays.still_true(
                    earlier, fact,
                    lambda: self._insert(clean_fact(fact), route(type_name), clean_topic(topic), [], None, fact),
                )
        if not isinstance(fact, str):
            raise InvalidFact(f"fact must be text, not {type(fact).__name__}")
        name = route(type_name)
        self._refuse_oversized(f"knowledge/{name}.md", self.writer.vault.size(f"knowledge/{name}.md"))
        heading = clean_topic(topic)
        sentence = clean_fact(fact)
        unclear = context_problem(sentence, heading)
        if unclear is not None:
            raise InvalidFact(unclear)
        if looks_like_instruction(sentence):
            raise InvalidFact(
                "refused: the fact reads like an instruction to an AI agent, and memory is data, never "
                "instructions — state it as a fact about someone or something: 'Sarah wants answers in "
                "French', not 'Always answer in French'"
            )
        duplicate, contradicted = self.syncer.read_fresh(self.refresh, lambda: self._dedup(sentence, heading))
        if duplicate is not None:
            receipt = duplicate
            if request_id is not None:
                self.replays.remember(request_id, receipt, fact)
            return receipt
        return self._insert(sentence, name, heading, contradicted, request_id, fact)

    def _dedup(self, sentence: str, topic: str | None) -> tuple[Receipt | None, list[str]]:
        """A duplicate receipt when the fact is on file already, else the refs it may contradict.

        Only a line about the same subject counts (`compare.duplicates`): "Prefers tea" saved for
        Tom is not Sarah's "Prefers tea", and neither contradicts the other.
        """
        with self.syncer.index.snapshot():
            return self._compare(sentence, topic)

    def _compare(self, sentence: str, topic: str | None) -> tuple[Receipt | None, list[str]]:
        index = self.syncer.index

        def repeats(hit: IndexHit) -> bool:
            mine, theirs = _subjects(topic, sentence, hit.section, hit.text)
            return duplicates(sentence, mine, hit.text, theirs)

        same = [hit for hit in index.iter_facts(Filters(keys=(fact_key(sentence),)))
                if hit.path in CURATED_PATHS and repeats(hit)]
        if same:
            first = min(same, key=lambda hit: (hit.path, hit.line))
            self.state.note_issued([(first.path, first.line, fact_key(first.text))])
            return self._duplicate(first.path, first.line, first.section), []
        contradicted: list[str] = []
        # A paraphrase shares the fact's rarer words; searching those in fact text alone is enough.
        terms = query.plan(index, sentence).searched
        # Filtering in Whoosh costs more than over-fetching and keeping the curated files' facts; no
        # neighbours are asked, so the hits are placed by their ids, not from their files' line maps.
        hits = index.search(terms, Filters(), CANDIDATES * 4, weights={"text": 1.0}, by_id=True)
        candidates = [hit for hit in hits if hit.path in CURATED_PATHS][:CANDIDATES]
        if self.similar is not None:
            # Similarity only proposes: relate() and its value guard still decide, so false merges stay 0.
            seen = {(hit.path, hit.line) for hit in candidates}
            candidates += [hit for hit in self.similar(sentence) if (hit.path, hit.line) not in seen]
        for hit in candidates:
            if repeats(hit):
                self.state.note_issued([(hit.path, hit.line, fact_key(hit.text))])
                return self._duplicate(hit.path, hit.line, hit.section), []
            mine, theirs = _subjects(topic, sentence, hit.section, hit.text)
            flag = len(contradicted) < MAX_CONTRADICTED and mine == theirs
            if flag and relate(sentence, hit.text) is Relation.CONTRADICTS:
                # Handed out so the agent can memory_update it, if the user's correction says so.
                self.state.note_issued([(hit.path, hit.line, fact_key(hit.text))])
                contradicted.append(make_ref(hit.path, hit.line))
        return None, contradicted

    def _refuse_oversized(self, rel: str, size: int) -> None:
        """FileTooLarge when a curated file is past what the index (and so the duplicate check) reads whole."""
        problem = curated_file_problem(rel, size, self.syncer.max_file_bytes)
        if problem is not None:
            raise FileTooLarge(rel, problem)

    def _duplicate(self, path: str, line: int, section: str, text: str | None = None) -> Receipt:
        """The receipt of a fact on file at path:line; the line is remembered as affirmed (by text, or as read now).

        The agent counts on that line from now on: an editor that loaded the file before this save and
        writes it without the line gets it put back once (storage/reconcile.py), as if this save wrote it.
        """
        data = self.writer.vault.read_or_empty(path) if text is None else text.encode("utf-8")
        lines = markdown.split_lines(data.decode("utf-8", "replace"))
        if 0 < line <= len(lines) and lines[line - 1].strip():
            self.state.note_affirmed(path, lines[line - 1].rstrip())
            if self.writer.history.latest(path) is None:  # a file only a person wrote: no version to judge by
                self.writer.history.note(path, data, HAND_EDIT, self.clock())
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
        self, sentence: str, name: str, topic: str | None, contradicted: list[str], request_id: str | None,
        asked: str,
    ) -> Receipt:
        """Insert the bullet into its section through the writer, redoing it on top of any concurrent edit."""
        rel = f"knowledge/{name}.md"
        key = fact_key(sentence)

        def insert(text: str) -> Edit[Receipt]:
            earlier = self.replays.replayed(request_id, asked) if request_id is not None else None
            if earlier is not None:
                raise _Answered(earlier)
            self._refuse_oversized(rel, len(text.encode("utf-8")))  # it may have grown since the check
            parsed = markdown.parse(text if text.strip() else template_text(name))
            for fact in parsed.facts:
                same = fact_key(fact.text) == key
                if same and _same_subject(topic, sentence, fact.section, fact.text):  # saved a moment ago
                    raise _Answered(self._duplicate(rel, fact.line, fact.section, text))
            heading = self._choose_section(parsed, sentence, topic)
            try:
                new_text, line = edits.add_fact(
                    text if text.strip() else template_text(name), sentence, heading, parsed.title or name.title()
                )
            except ValueError as exc:
                raise InvalidFact(str(exc)) from None
            return Edit(new_text, self._saved(rel, line, heading, contradicted))

        unrecorded: list[str] = []

        def remember(written: Written[Receipt]) -> None:
            # The bullet is on file by now: nothing below may turn the save into a failure.
            unrecorded.extend(written.warnings)
            if written.detail is None:
                return
            try:
                self.state.note_issued([(rel, written.detail.line, key)])
            except StorageError as exc:
                log.warning("saved, but its ref %s was not recorded as handed out (%s)", written.detail.ref, exc)
                unrecorded.append(f"its ref was not recorded as handed out ({exc})")
            if request_id is not None:
                unrecorded.extend(filter(None, [self.replays.remember(request_id, written.detail, asked)]))

        try:
            written = self.writer.edit(rel, insert, cause=Cause.SAVE, on_commit=remember)
        except _Answered as answer:
            return answer.receipt
        assert written.detail is not None
        unrecorded.extend(self._back_from_archive(rel, key, sentence, written.detail.section))
        if not unrecorded:
            return written.detail
        warning = "saved, but on this machine " + "; ".join(unrecorded)
        return replace(written.detail, warning=warning, message=f"{written.detail.message} Warning: {warning}.")

    def _back_from_archive(self, rel: str, key: str, sentence: str, section: str) -> list[str]:
        """Record a fact the archive says left rel on purpose as back in it (saved again); what could not be."""
        if self.archive is None:
            return []
        try:
            if key in self.archive.left(rel):
                self.archive.add([ArchivedFact(sentence, rel, section, self.clock().date().isoformat(),
                                               Reason.RESTORED, why="saved again", by="save")])
        except WolfmemError as exc:
            log.warning("saved, but the archive does not say it is back in %s (%s)", rel, exc)
            return [f"the archive does not say it is back ({exc})"]
        return []

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
            # "--topic Sarah" belongs under "## Sarah (Manager)", as a fact naming Sarah would.
            named = entity_heading([section.heading for section in parsed.sections], topic)
            return existing.heading if existing else named or topic
        for section in parsed.sections:
            if mentions_entity(section.heading, sentence):
                return section.heading
        existing = markdown.find_section(parsed, UNFILED)
        return existing.heading if existing else UNFILED


def _subjects(topic: str | None, sentence: str, section: str, text: str) -> tuple[frozenset[str], frozenset[str]]:
    """Whom a save (with its topic) and a line on file (under its section) speak of: `compare.subject_key`."""
    return subject_key(topic, sentence, [section]), subject_key(section, text, [topic or ""])


def _same_subject(topic: str | None, sentence: str, section: str, text: str) -> bool:
    """Whether a save and a line on file speak of the same person or thing."""
    mine, theirs = _subjects(topic, sentence, section, text)
    return mine == theirs


class _Answered(Exception):
    """Raised inside a save's transform when the answer is already known (a replayed request, a duplicate)."""

    def __init__(self, receipt: Receipt) -> None:
        super().__init__(receipt.message)
        self.receipt = receipt
