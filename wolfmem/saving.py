"""The write path: memory_save (validate, dedup, route, insert) and episode logging, under the vault lock."""

from __future__ import annotations

import random
import re
import time
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal

from . import markdown, query
from .cancellation import checkpoint
from .errors import InvalidFact, UsageError
from .facts import (
    Relation,
    clean_fact,
    has_lone_surrogate,
    is_blank,
    mentions_entity,
    relate,
    text_problem,
)
from .index import Filters
from .refs import make_ref
from .secrets import find_secret
from .state import StateStore
from .sync import Syncer, fact_key
from .validate import content_lines
from .vault import (
    CURATED,
    CURATED_PATHS,
    Vault,
    read_or_empty,
    replace_if_unchanged,
    template_text,
)

UNFILED = "Unfiled"
CANDIDATES = 12
MAX_CONTRADICTED = 3
MAX_TOPIC_CHARS = 80
MAX_REQUEST_ID_CHARS = 200
MAX_BULLET_CHARS = 500
MAX_HEADLINE_CHARS = 100
MAX_BULLETS = 50
CAS_SECONDS = 10.0

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

    status: Literal["saved", "duplicate"]
    path: str
    line: int
    section: str
    ref: str
    message: str
    duplicate_of: str | None = None
    possibly_contradicts: list[str] = field(default_factory=list)
    # True when a retry with the same request_id got the first call's receipt back.
    replayed: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form, without empty optional fields."""
        data = asdict(self)
        if data["duplicate_of"] is None:
            del data["duplicate_of"]
        if not data["possibly_contradicts"]:
            del data["possibly_contradicts"]
        return data


@dataclass(frozen=True)
class LoggedLine:
    """One bullet of a logged episode and its ref."""

    ref: str
    text: str


@dataclass(frozen=True)
class LogReceipt:
    """What memory_log tells the agent: the entry's section, and where it and each of its lines live."""

    path: str
    date: str
    section: str  # the entry's heading, "14:05 — Deployed v2"
    entry_ref: str  # the heading and its bullets
    ref: str  # the first bullet
    line: int  # the first bullet's line
    bullets: list[LoggedLine]
    message: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return asdict(self)


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


def one_line(text: str, cap: int) -> str:
    """Collapse whitespace and control characters to single spaces and cap the length with an ellipsis."""
    # A NUL would make the whole episode file read as binary, and so unsearchable.
    visible = "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in text)
    flat = re.sub(r"\s+", " ", unicodedata.normalize("NFC", visible)).strip()
    return flat if len(flat) <= cap else flat[: cap - 1].rstrip() + "…"


class Saver:
    """Performs saves and episode appends for one vault."""

    def __init__(self, vault: Vault, syncer: Syncer, state: StateStore, clock: Callable[[], datetime]) -> None:
        self.vault = vault
        self.syncer = syncer
        self.state = state
        self.clock = clock

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
                return _replayed(earlier)
        if not isinstance(fact, str):
            raise InvalidFact(f"fact must be text, not {type(fact).__name__}")
        name = route(type_name)
        heading = clean_topic(topic)
        sentence = clean_fact(fact)
        with self.vault.lock():
            # Cancelled before holding the lock: nothing written. From here on the save completes,
            # and a retry with the same request_id gets its receipt.
            checkpoint("saving")
            if request_id is not None:
                earlier = self.state.receipt(request_id)
                if earlier is not None:
                    return _replayed(earlier)
            # Dedup compares against the curated files only, so only they must be fresh here.
            self.syncer.sync_locked(only=CURATED_PATHS)
            with self.syncer.index.snapshot():
                duplicate, contradicted = self._dedup(sentence)
            receipt = duplicate or self._insert(sentence, name, heading, contradicted)
            if request_id is not None:
                self.state.put_receipt(request_id, asdict(receipt), self.clock().date().isoformat())
        return receipt

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

    def _insert(self, sentence: str, name: str, topic: str | None, contradicted: list[str]) -> Receipt:
        """Insert the bullet into its section, re-reading if someone else wrote the file meanwhile."""
        rel = f"knowledge/{name}.md"
        path = self.vault.resolve(rel)
        expected = base = read_or_empty(path)
        for _ in _cas_attempts():
            try:
                text = base.decode("utf-8") if base.strip() else template_text(name)
            except UnicodeDecodeError:
                raise UsageError(f"{rel} is not UTF-8 text; fix it before saving to it") from None
            parsed = markdown.parse(text)
            heading = self._choose_section(parsed, sentence, topic)
            try:
                new_text, line = markdown.add_fact(text, sentence, heading, parsed.title or name.title())
            except ValueError as exc:
                raise InvalidFact(str(exc)) from None
            data = new_text.encode("utf-8")
            # A person's editor does not take our lock: replace the file only if it is still what we read.
            found = replace_if_unchanged(path, expected, data)
            if found is None:
                break
            expected, base = found
        else:
            raise UsageError(f"{rel} kept changing while saving; try again")
        self.syncer.reindex_text(rel, data)
        # Every line this save wrote (the bullet, a new heading, a title) is wolfmem's, not a hand edit.
        self.state.add_snapshot_lines(rel, set(content_lines(new_text)) - set(content_lines(text)))
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

    # -- episodes -------------------------------------------------------------
    def log_episode(self, text: str | list[str], headline: str | None, when: datetime | None) -> LogReceipt:
        """Append one episode block and say where it and each of its bullets landed."""
        bullets, title = episode_fields(text, headline)
        moment = when or self.clock()
        day = moment.strftime("%Y-%m-%d")
        rel = f"episodes/{day}.md"
        path = self.vault.resolve(rel)
        with self.vault.lock():
            checkpoint("logging")
            for _ in _cas_attempts():
                before = read_or_empty(path)
                try:
                    old = before.decode("utf-8")
                except UnicodeDecodeError:
                    raise UsageError(f"{rel} is not UTF-8 text; fix or move it, then log again") from None
                newline = "\r\n" if "\r\n" in old else "\n"
                head = old if old.strip() else markdown.episode_title(day).replace("\n", newline)
                if not head.endswith(("\n", "\r")):
                    head += newline
                block = markdown.episode_block(moment.strftime("%H:%M"), title, bullets, newline)
                if read_or_empty(path) == before:
                    data = self.vault.write_text(rel, head + block)
                    break
            else:
                raise UsageError(f"{rel} kept changing while logging; try again")
            self.syncer.reindex_text(rel, data)
        # The block is a blank line, the `##` heading, then the bullets.
        first = len(markdown.split_lines(head)) + 3
        section = f"{moment:%H:%M} — {title}"
        lines = [LoggedLine(make_ref(rel, first + n), bullet) for n, bullet in enumerate(bullets)]
        entry_ref = f"file:{rel}#L{first - 1}-L{first + len(bullets) - 1}"
        message = f"Logged to {rel} ({lines[0].ref}) under '## {section}' ({entry_ref}); it is searchable now."
        return LogReceipt(rel, day, section, entry_ref, lines[0].ref, first, lines, message)


def episode_fields(text: str | list[str], headline: str | None) -> tuple[list[str], str]:
    """An episode's bullets and headline, each one capped line; refuses empty text and secrets."""
    if isinstance(text, str):
        items = [text]
    elif isinstance(text, list) and all(isinstance(item, str) for item in text):
        items = text
    else:
        raise UsageError("an episode is text or a list of texts, one line each")
    if len(items) > MAX_BULLETS:
        raise UsageError(
            f"the episode has {len(items)} lines; at most {MAX_BULLETS} — summarise, or log it in several entries"
        )
    if any(has_lone_surrogate(item) for item in (*items, headline if isinstance(headline, str) else "")):
        raise UsageError("the episode is not valid Unicode (it holds a lone surrogate such as \\ud800)")
    bullets = [one_line(re.sub(r"^\s*[-*+]\s+", "", item), MAX_BULLET_CHARS) for item in items]
    bullets = [markdown.as_bullet_text(bullet) for bullet in bullets if not is_blank(bullet)]
    if not bullets:
        raise UsageError("the episode is empty — say what happened, e.g. 'Deployed v2 to staging'")
    if headline is not None and not isinstance(headline, str):
        raise UsageError("headline must be text")
    title = one_line(headline or "", MAX_HEADLINE_CHARS)
    if is_blank(title):
        title = one_line(bullets[0], 60)
    for piece in (title, *bullets):
        kind = find_secret(piece)
        if kind:
            raise InvalidFact(f"refused: the episode looks like it holds a secret ({kind}); leave it out")
    return bullets, title


def _replayed(earlier: dict[str, Any]) -> Receipt:
    """The stored receipt of an earlier call with the same request_id, marked as a replay."""
    message = f"Replayed: an earlier call with this request_id did this. {earlier['message']}"
    return Receipt(**{**earlier, "replayed": True, "message": message})


def _cas_attempts() -> Iterator[int]:
    """Attempt numbers for a compare-and-swap write, backing off while another writer is busy."""
    deadline = time.monotonic() + CAS_SECONDS
    attempt = 0
    while True:
        yield attempt
        attempt += 1
        if time.monotonic() > deadline:
            return
        # An editor or sync tool writing in bursts settles faster if we stop racing it.
        time.sleep(min(0.001 * 2 ** attempt, 0.05) * random.uniform(0.5, 1.0))
