"""Two Memory instances on one vault, each with its own caches, and a person editing the file by hand.

After every step, each instance's index holds exactly what building every file whole gives (ids, lines,
sections, dates), each search hit's line holds its text, and no acknowledged save or hand-written line
is lost. The steps are what real use does to the caches (the parse cache, line maps, remembered catalog
rows, line-diff bases, first-seen days): saves into a file of over 64 facts, hand edits written in place,
by rename or truncate-then-write, a copy of a line and its removal, a section moved, the file shrunk
below 64 facts, an earlier text written back (ABA), CRLF with a BOM, updates and forgets by ref, a
rebuild in one instance while the other holds its caches, and the clock moved by days.
"""

from __future__ import annotations

import shutil
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from cachekit import SECTIONS, WORDS, WRITERS, held, people, whole_build
from conftest import Clock
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from wolfmem import Config, Memory
from wolfmem.core import markdown
from wolfmem.errors import InvalidFact, UsageError

REL = "knowledge/people.md"
WRITES = st.sampled_from(WRITERS)


class SharedVault(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="wolfmem-caches-"))
        self.clock = Clock(datetime(2026, 1, 5, 12, tzinfo=UTC))
        config = Config(state_dir=str(self.root / "state"), log_dir=str(self.root / "logs"))
        self.memories = [Memory(self.root / "vault", config, clock=self.clock) for _ in range(2)]
        self.path = self.memories[0].vault.root / REL
        self.path.write_text(people())
        self.saved: dict[str, str] = {}  # fact -> its ref as last handed out
        self.hand: set[str] = set()
        self.texts: list[str] = []
        self.step = 0

    def teardown(self) -> None:
        for memory in self.memories:
            memory.close()
        shutil.rmtree(self.root, ignore_errors=True)

    def _text(self) -> str:
        text = self.path.read_bytes().decode("utf-8-sig")
        self.texts.append(text)
        self.step += 1
        return text

    def _ours(self, line: str) -> bool:
        return any(fact in line for fact in (*self.saved, *self.hand))

    @rule(who=st.integers(0, 1), person=st.integers(0, SECTIONS), word=st.sampled_from(WORDS))
    def save(self, who: int, person: int, word: str) -> None:
        self._text()
        fact = f"Person {person % SECTIONS} enjoys {word} as saved {self.step}."
        try:
            receipt = self.memories[who].save(fact, "people", topic=f"Person {person}")
        except InvalidFact:
            return
        if receipt.status == "saved":
            self.saved[fact] = receipt.ref

    @rule(at=st.integers(0, 200), write=WRITES)
    def hand_line(self, at: int, write) -> None:  # type: ignore[no-untyped-def]
        lines = markdown.lines_of(self._text())
        line = f"- Hand line {self.step} about {WORDS[self.step % 6]}."
        lines.insert(at % (len(lines) + 1), line + "\n")
        self.hand.add(line[2:])
        write(self.path, "".join(lines))

    @rule(source=st.integers(0, 200), to=st.integers(0, 200), remove=st.booleans(), write=WRITES)
    def copy_a_line(self, source: int, to: int, remove: bool, write) -> None:  # type: ignore[no-untyped-def]
        lines = markdown.lines_of(self._text())
        facts = [line.rstrip("\r\n") + "\n" for line in lines if line.startswith("- ")]
        copied = facts[source % len(facts)]
        lines.insert(to % (len(lines) + 1), copied)
        copies = [k for k, line in enumerate(lines) if line.strip() == copied.strip()]
        if remove and not self._ours(copied):
            del lines[copies[-1 if to % 2 else 0]]
        write(self.path, "".join(lines))

    @rule(which=st.integers(0, SECTIONS), write=WRITES)
    def move_a_section(self, which: int, write) -> None:  # type: ignore[no-untyped-def]
        lines = markdown.lines_of(self._text())
        heads = [k for k, line in enumerate(lines) if line.startswith("## ")]
        start = heads[which % len(heads)]
        end = next((k for k in heads if k > start), len(lines))
        block = lines[start:end]
        del lines[start:end]
        write(self.path, "".join([*lines, *block]))

    @rule(keep=st.integers(2, 5), write=WRITES)
    def shrink(self, keep: int, write) -> None:  # type: ignore[no-untyped-def]
        lines = markdown.lines_of(self._text())
        kept = [line for k, line in enumerate(lines) if not line.startswith("- Person") or self._ours(line)
                or k % keep]
        write(self.path, "".join(kept))

    @rule(back=st.integers(1, 6), who=st.integers(0, 1), write=WRITES)
    def write_back_an_earlier_text(self, back: int, who: int, write) -> None:  # type: ignore[no-untyped-def]
        current = self._text()
        write(self.path, self.texts[-min(back, len(self.texts))])
        self.memories[who].search("Person likes")  # the earlier text's parse, lines and rows are made again
        write(self.path, current)

    @rule(bom=st.booleans(), write=WRITES)
    def line_endings(self, bom: bool, write) -> None:  # type: ignore[no-untyped-def]
        text = self._text()
        flipped = text.replace("\r\n", "\n") if "\r\n" in text else text.replace("\n", "\r\n")
        write(self.path, ("\ufeff" if bom else "") + flipped)

    @rule(who=st.integers(0, 1), pick=st.integers(0, 1000), forget=st.booleans())
    def correct(self, who: int, pick: int, forget: bool) -> None:
        self._text()
        if not self.saved:
            return
        fact = sorted(self.saved)[pick % len(self.saved)]
        ref = self.saved[fact]
        try:
            if forget:
                self.memories[who].forget(ref, "test", expected=fact)
                del self.saved[fact]
            else:
                new = fact.replace("enjoys", "adores")
                correction = self.memories[who].update(ref, new, expected=fact)
                del self.saved[fact]
                self.saved[new] = correction.ref
        except UsageError:  # the line moved since: "search again"
            for hit in self.memories[who].search(fact):
                if hit.text == fact:
                    self.saved[fact] = hit.ref

    @rule(who=st.integers(0, 1))
    def rebuild(self, who: int) -> None:
        self.memories[who].reindex()

    @rule(days=st.sampled_from([1, 3, -1]))
    def move_the_clock(self, days: int) -> None:
        self.clock.now += timedelta(days=days)

    @invariant()
    def each_index_is_a_whole_build(self) -> None:
        for memory in self.memories:
            memory.sync()
        expected = whole_build(self.memories[0])
        for memory in self.memories:
            assert held(memory) == expected
            facts = {fact.line: fact.text for fact in markdown.parse(self.path.read_bytes().decode("utf-8-sig")
                                                                    ).searchable()}
            for hit in memory.search("Person likes enjoys hand"):
                if hit.path == REL:
                    assert facts.get(hit.line) == hit.text

    @invariant()
    def nothing_written_is_lost(self) -> None:
        text = self.path.read_bytes().decode("utf-8-sig")
        assert [fact for fact in (*self.saved, *self.hand) if fact not in text] == []


def test_two_instances_and_a_person_keep_every_cache_true() -> None:
    run_state_machine_as_test(SharedVault, settings=settings(max_examples=6, stateful_step_count=14, deadline=None))


@pytest.mark.slow
def test_longer_runs_keep_every_cache_true() -> None:
    run_state_machine_as_test(SharedVault, settings=settings(max_examples=40, stateful_step_count=30, deadline=None))
