"""A write's index change from its line diff gives exactly what building the file whole gives, or nothing.

`increment.change` is checked against `documents.dated_facts` on random edits of random markdown
(sections, repeats, code fences, paragraphs, setext underlines, CRLF), and end to end: after saves and
edits through a real Memory, the index and catalog hold what a fresh rebuild of the same files holds.
"""

from __future__ import annotations

from pathlib import Path
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from wolfmem import Config, Memory
from wolfmem.core import markdown
from wolfmem.search import increment
from wolfmem.search import sync as sync_module
from wolfmem.search.documents import dated_facts
from wolfmem.storage.vault import content_hash

REL = "knowledge/people.md"
TODAY = "2026-12-02"

LINES = st.sampled_from([
    "- Sarah leads the data team.", "- Tom lives in Berlin.", "- Ana works from Porto.", "- Tom lives in Berlin.",
    "## Sarah", "## Tom", "", "Plain paragraph line.", "```", "- in a fence?", "---", "===", "> quoted fact",
    "- task two", "  indented continuation", "| a | b |", "| - | - |",
])
TEXTS = st.lists(LINES, min_size=0, max_size=40).map(lambda lines: "# People\n\n" + "\n".join(lines) + "\n")


def _edit(text: str, at: int, remove: int, insert: list[str]) -> str:
    lines = markdown.lines_of(text)
    at = min(at, len(lines))
    return "".join([*lines[:at], *(line + "\n" for line in insert), *lines[at + remove:]])


def _full(text: str, seen: dict[str, str]) -> list[tuple[object, ...]]:
    docs, _new = dated_facts(REL, text, seen, TODAY)
    return [(d.doc_id, d.line, d.section, d.text, d.date, d.key) for d in docs]


@settings(max_examples=250, deadline=None)
@given(TEXTS, st.integers(0, 45), st.integers(0, 3), st.lists(LINES, max_size=3), st.booleans(), st.booleans())
def test_a_change_is_exactly_the_whole_build_or_none(
    text: str, at: int, remove: int, insert: list[str], crlf: bool, forget_one: bool,
) -> None:
    if crlf:
        text = text.replace("\n", "\r\n")
    seen_docs, _ = dated_facts(REL, text, {}, "2026-11-01")
    seen = {doc.key: doc.date for doc in seen_docs}
    if forget_one and seen:
        seen.pop(next(iter(seen)))  # a day never recorded: only the whole build may date it
    before = increment.Indexed(content_hash(text.encode()), text, tuple(dated_facts(REL, text, seen, "2026-11-01")[0]))
    after = _edit(text, at, remove, insert)

    found = increment.change(before, content_hash(after.encode()), after, seen, TODAY, REL)

    if found is None:
        return
    change, new = found
    assert [(d.doc_id, d.line, d.section, d.text, d.date, d.key) for d in change.indexed.docs] == _full(after, seen)
    assert new == dated_facts(REL, after, seen, TODAY)[1]
    kept = {doc.doc_id for doc in before.docs} - set(change.removed)
    assert kept | {doc.doc_id for doc in change.added} == {doc.doc_id for doc in change.indexed.docs}


def test_an_insert_into_a_big_section_is_a_small_change() -> None:
    text = "# People\n\n## Stack\n" + "".join(f"- Item {n} uses port {n}.\n" for n in range(500))
    docs = tuple(dated_facts(REL, text, {}, TODAY)[0])
    seen = {doc.key: TODAY for doc in docs}
    after = _edit(text, 100, 0, ["- Item new uses port 9."])

    found = increment.change(increment.Indexed("r", text, docs), "s", after, seen, TODAY, REL)

    assert found is not None
    change, new = found
    assert change.removed == () and [doc.text for doc in change.added] == ["Item new uses port 9."]
    assert (change.after_line, change.delta) == (100, 1)
    assert len(new) == 1


@settings(max_examples=150, deadline=None)
@given(TEXTS, st.lists(st.tuples(st.integers(0, 45), st.integers(0, 2), st.lists(LINES, max_size=2)),
                       min_size=2, max_size=5))
def test_a_chain_of_changes_is_exactly_the_whole_build_at_every_step(
    text: str, edits: list[tuple[int, int, list[str]]],
) -> None:
    """Kept documents carry the line they were built at; each step's diff and documents use their current lines."""
    seen = {doc.key: doc.date for doc in dated_facts(REL, text, {}, TODAY)[0]}
    indexed = increment.Indexed(content_hash(text.encode()), text, tuple(dated_facts(REL, text, seen, TODAY)[0]))
    for at, remove, insert in edits:
        after = _edit(indexed.text, at, remove, insert)
        found = increment.change(indexed, content_hash(after.encode()), after, seen, TODAY, REL)
        if found is None:
            docs, new = dated_facts(REL, after, seen, TODAY)
            seen.update(dict.fromkeys(new, TODAY))
            indexed = increment.Indexed(content_hash(after.encode()), after, tuple(docs))
            continue
        change, new = found
        seen.update(dict.fromkeys(new, TODAY))
        assert [(d.doc_id, d.line, d.section, d.text, d.date, d.key) for d in change.indexed.docs] == _full(after, seen)
        assert list(change.indexed.current_lines()) == [doc.line for doc in change.indexed.docs]
        indexed = change.indexed


def test_facts_below_a_change_are_not_made_again() -> None:
    """Issue 28: a save into the first section of a 2,000-fact file made every fact below it again, moved."""
    text = "# People\n\n## Stack\n" + "".join(f"- Item {n} uses port {n}.\n" for n in range(500))
    docs = tuple(dated_facts(REL, text, {}, TODAY)[0])
    seen = {doc.key: TODAY for doc in docs}
    made: list[object] = []
    with mock.patch.object(increment, "_moved", side_effect=lambda *args: made.append(args)):
        first = increment.change(increment.Indexed("r", text, docs), "s", _edit(text, 10, 0, ["- New one."]), seen,
                                 TODAY, REL)
        assert first is not None
        seen.update(dict.fromkeys(first[1], TODAY))
        after = _edit(first[0].indexed.text, 20, 0, ["- Newer one."])
        second = increment.change(first[0].indexed, "t", after, seen, TODAY, REL)
        assert second is not None and made == []  # 490 facts moved twice, none made again
    assert [(d.doc_id, d.line, d.section, d.text, d.date, d.key) for d in second[0].indexed.docs] == _full(after, seen)


def _index_state(memory: Memory) -> tuple[dict[str, tuple[int, str]], list[tuple[str, str, str]]]:
    """The catalog's rows of the file, and the documents Whoosh stores for it."""
    index = memory.index
    index.open()
    assert index.catalog is not None and index._folder.ix is not None
    rows = {doc_id: (row.line, row.digest) for doc_id, row in index.catalog.doc_rows(REL).items()}
    with index._folder.ix.searcher() as searcher:
        stored = sorted((doc["doc_id"], doc["text"], doc["date"]) for doc in searcher.documents(path=REL))
    return rows, stored


def test_saves_and_edits_leave_the_index_as_a_rebuild_would(tmp_path: Path) -> None:
    config = Config(state_dir=str(tmp_path / "state"))
    with Memory(tmp_path / "vault", config) as memory:
        path = memory.vault.root / REL
        path.write_text("# People\n\n## Stack\n" + "".join(f"- Item {n} uses port {n}.\n" for n in range(200)))
        memory.sync()
        changes = []
        original = memory.index.apply_change

        def counted(*args: object, **kwargs: object) -> bool:
            done = original(*args, **kwargs)  # type: ignore[arg-type]
            changes.append(done)
            return done

        memory.index.apply_change = counted  # type: ignore[method-assign]
        for n in range(5):
            memory.save(f"Service {n} listens on port {7000 + n}.", type="people", topic="Stack")
        memory.save("Tom runs the port audit.", type="people", topic="Tom")
        memory.update(memory.search("Service 2 listens")[0].ref, "Service 2 listens on port 7102.")
        memory.forget(memory.search("Service 3 listens")[0].ref, "decommissioned")
        assert changes.count(True) >= 6  # the saves took the line diff, not a whole build
        incremental = _index_state(memory)
        memory.reindex()
        assert _index_state(memory) == incremental


def test_outside_edits_synced_by_line_diff_leave_the_index_as_a_rebuild_would(tmp_path: Path) -> None:
    """Issue 28: a file an outside script appends to every 20 ms was indexed whole on every sync."""
    config = Config(state_dir=str(tmp_path / "state"))
    with Memory(tmp_path / "vault", config) as memory:
        path = memory.vault.root / REL
        path.write_text("# People\n\n## Stack\n" + "".join(f"- Item {n} uses port {n}.\n" for n in range(300)))
        memory.sync()  # a whole build, remembered as the base of the next change
        built = []
        original = increment.fact_doc

        def counted(*args: object, **kwargs: object) -> object:
            built.append(args)
            return original(*args, **kwargs)  # type: ignore[arg-type]

        increment.fact_doc = counted  # type: ignore[assignment]
        try:
            for n in range(4):
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(f"- Script line {n} appended by an outside writer.\n")
                memory.sync()
            path.write_text(path.read_text().replace("- Item 150 uses port 150.\n", "- Item 150 moved to 9150.\n"))
            memory.sync()
            assert len(built) == 5  # one document per changed line, none for the 300 others
            assert [hit.line for hit in memory.search("Script line 3 appended")][:1] == [307]
            # A heading moves every line below it to another section: built whole, not by line diff.
            path.write_text(path.read_text().replace("- Item 150 moved to 9150.\n", "## Tom\n- Item 150 moved.\n"))
            memory.sync()
        finally:
            increment.fact_doc = original
        assert memory.search("Item 151 uses port")[0].section == "Tom"
        incremental = _index_state(memory)
        memory.reindex()
        assert _index_state(memory) == incremental


def test_a_base_another_process_indexed_past_still_builds_only_the_changed_lines(tmp_path: Path) -> None:
    """With a daemon and agents syncing one appended-to file, the last commit is usually another process's."""
    config = Config(state_dir=str(tmp_path / "state"))
    with Memory(tmp_path / "vault", config) as agent, Memory(tmp_path / "vault", config) as daemon:
        path = agent.vault.root / REL
        path.write_text("# People\n\n## Stack\n" + "".join(f"- Item {n} uses port {n}.\n" for n in range(300)))
        agent.sync()
        for name, memory in (("daemon", daemon), ("agent", agent)):
            with path.open("a", encoding="utf-8") as handle:
                handle.write(f"- A line appended before the {name} syncs.\n")
            with mock.patch.object(sync_module, "dated_facts", wraps=sync_module.dated_facts) as built:
                memory.sync()
            assert built.call_count == (memory is daemon)  # the daemon never indexed the file; the agent did
        assert agent.search("appended before the agent syncs")[0].line == 305
        incremental = _index_state(agent)
        agent.reindex()
        assert _index_state(agent) == incremental


def test_a_sync_another_process_overtook_still_diffs_from_its_base_in_the_next_round(tmp_path: Path) -> None:
    """A round whose file another process committed meanwhile commits nothing; its base must survive it."""
    config = Config(state_dir=str(tmp_path / "state"))
    with Memory(tmp_path / "vault", config) as agent, Memory(tmp_path / "vault", config) as daemon:
        path = agent.vault.root / REL

        def append(line: str) -> None:
            with path.open("a", encoding="utf-8") as handle:
                handle.write(f"- {line}\n")

        path.write_text("# People\n\n## Stack\n" + "".join(f"- Item {n} uses port {n}.\n" for n in range(300)))
        daemon.sync()  # each process holds a base of its own
        append("A line the agent indexes first.")
        agent.sync()
        apply = agent.index.apply_change
        overtaken: list[int] = []

        def overtaken_once(*args: object, **kwargs: object) -> bool:
            if not overtaken:  # the daemon commits a newer version while the agent's round is under way
                overtaken.append(1)
                append("A line the daemon commits first.")
                daemon.sync()
                append("A line only the agent's next round reads.")
            return apply(*args, **kwargs)  # type: ignore[arg-type]

        agent.index.apply_change = overtaken_once  # type: ignore[method-assign]
        append("A line the agent reads first.")
        with mock.patch.object(sync_module, "dated_facts", wraps=sync_module.dated_facts) as built:
            agent.sync()
        assert overtaken and built.call_count == 0  # every round built the changed lines only
        assert agent.search("line only the agent's next round reads")[0].line == 307
        incremental = _index_state(agent)
        agent.reindex()
        assert _index_state(agent) == incremental
