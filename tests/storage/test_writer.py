"""The one write path: every site that writes a vault file, with an editor striking at the worst instant.

The editor strikes once, synchronously, from the writer's own stage hook: right after wolfmem read the
file, or right after `<file>.bak` appeared (just before the exchange). It writes in place (an append)
or by rename (an atomic save). Whatever wolfmem then does, the editor's line is never lost: it is in
the file, or, for the writes that replace a generated file whole, in its `.bak` and history.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path

import pytest

from wolfmem import Memory
from wolfmem.core.markdown import content_lines
from wolfmem.curation.backups import restore_backup, restore_version
from wolfmem.curation.contract import Change, ChangeKind
from wolfmem.curation.landing import RunEvidence, apply_rewrite
from wolfmem.curation.log import append_log
from wolfmem.jobs.digest import write_digest
from wolfmem.storage.archive import ArchivedFact, Reason
from wolfmem.storage.vault import content_hash
from wolfmem.storage.writer import Cause, Edit, Stage

PEOPLE = "knowledge/people.md"
EDITOR_LINE = "- Typed by a person at the worst instant."
DAY = datetime(2026, 11, 30, 10, 0).astimezone()


def _save(memory: Memory) -> str:
    memory.save("Ann is the CTO.", type="people", topic="Ann")
    return PEOPLE


def _episode(memory: Memory) -> str:
    memory.log_episode("Deployed v2 to staging", when=DAY)
    return "episodes/2026-11-30.md"


def _curation(memory: Memory, cause: Cause = Cause.CURATION) -> str:
    old = (memory.vault.root / PEOPLE).read_text()
    new = old + "\n## Ann\n- Ann is the CTO.\n"
    changes = [Change(ChangeKind.ADDED, new="- Ann is the CTO.", source="episode")]
    evidence = RunEvidence(lines=("Ann is the CTO.",))  # an addition needs a line that backs it
    outcome = apply_rewrite(
        memory.services, PEOPLE, old, new, changes, base_revision=content_hash(old.encode()), cause=cause, run=evidence
    )
    assert outcome.status in ("written", "skipped-cas"), outcome  # validated; written, or left to the editor
    return PEOPLE


def _audit(memory: Memory) -> str:
    return _curation(memory, Cause.AUDIT)


def _curation_log(memory: Memory) -> str:
    return append_log(memory.writer, date(2026, 11, 30), "## Curation 2026-11-30\n\nNo-op.\n")


def _digest(memory: Memory) -> str:
    return write_digest(memory.services, "2026-W48", date(2026, 11, 29))["path"]


def _restore(memory: Memory) -> str:
    restore_backup(memory.services, "people")
    return PEOPLE


def _restore_version(memory: Memory) -> str:
    oldest = memory.history.versions(PEOPLE)[-1]
    restore_version(memory.services, "people", str(oldest.id))
    return PEOPLE


def _archive(memory: Memory) -> str:
    record = ArchivedFact("Ann was the CTO.", PEOPLE, "Ann", "2026-11-30", Reason.REMOVED, "test")
    return memory.archive.add([record])[0].removeprefix("file:").split("#")[0]


def _saved_bob(memory: Memory) -> str:
    memory.save("Bob is the CFO.", type="people", topic="Bob")
    return PEOPLE


def _update(memory: Memory) -> str:
    memory.update(memory.search("Bob CFO")[0].ref, "Bob is the CEO.")
    return PEOPLE


def _forget(memory: Memory) -> str:
    memory.forget(memory.search("Bob CFO")[0].ref, "wrong")
    return PEOPLE


def _nothing(memory: Memory) -> str:
    return ""


# Each site: what makes its file exist first (as a person would have it open), then the write itself.
SITES: dict[str, tuple[Callable[[Memory], str], Callable[[Memory], str]]] = {
    "save": (_nothing, _save),
    "episode": (_episode, _episode),
    "curation": (_nothing, _curation),
    "audit": (_nothing, _audit),
    "curation-log": (_curation_log, _curation_log),
    "digest": (_digest, _digest),
    "restore": (_curation, _restore),
    "restore-version": (_curation, _restore_version),
    "archive": (_archive, _archive),
    "update": (_saved_bob, _update),
    "forget": (_saved_bob, _forget),
}


def _in_place(path: Path) -> None:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(("" if path.read_text().endswith("\n") else "\n") + EDITOR_LINE + "\n")


def _by_rename(path: Path) -> None:
    text = path.read_text()
    tmp = path.with_name(path.name + ".editor-tmp")
    tmp.write_text(text + ("" if text.endswith("\n") else "\n") + EDITOR_LINE + "\n")
    os.replace(tmp, path)


def _survives(memory: Memory, rel: str) -> bool:
    path = memory.vault.root / rel
    places = [path.read_text()]
    backup = path.with_name(path.name + ".bak")
    if backup.exists():
        places.append(backup.read_text())
    places += [memory.history.data(v.id).decode() for v in memory.history.versions(rel)]
    return any(EDITOR_LINE in content_lines(text) for text in places)


# The writes that keep a `.bak` have a second worst instant: the backup is on disk, the exchange not yet done.
BACKED_UP = ("curation", "audit", "restore", "restore-version")
STRIKES = [(site, Stage.READ) for site in SITES] + [(site, Stage.BACKED_UP) for site in BACKED_UP]


@pytest.mark.parametrize("style", [_in_place, _by_rename], ids=["in-place", "by-rename"])
@pytest.mark.parametrize(("site", "stage"), STRIKES, ids=[f"{site}-after-{stage}" for site, stage in STRIKES])
def test_an_editor_striking_at_the_worst_instant_is_never_lost(
    memory: Memory, site: str, stage: Stage, style: Callable[[Path], None]
) -> None:
    struck: list[str] = []
    setup, target = SITES[site]
    setup(memory)

    def editor(at: Stage, rel: str) -> None:
        if at is stage and not struck and (memory.vault.root / rel).exists() and not rel.startswith(".wolfmem"):
            struck.append(rel)
            style(memory.vault.root / rel)

    memory.writer.on_stage = editor
    target(memory)
    memory.writer.on_stage = None

    assert struck, f"{site} never reached {stage}"
    assert _survives(memory, struck[0]), f"{site}: the editor's line was lost"


def test_an_edit_lands_on_top_of_a_concurrent_write_and_backs_up_what_it_replaced(memory: Memory) -> None:
    path = memory.vault.root / PEOPLE
    calls: list[str] = []

    def editor(stage: Stage, rel: str) -> None:
        if stage is Stage.BACKED_UP and not calls:
            calls.append(rel)
            _in_place(path)

    memory.writer.on_stage = editor
    written = memory.writer.edit(PEOPLE, lambda text: Edit(text + "- Added by wolfmem.\n"),
                                 cause=Cause.SAVE, backup=True)

    lines = content_lines(path.read_text())
    assert written.changed and EDITOR_LINE in lines and "- Added by wolfmem." in lines
    assert EDITOR_LINE in content_lines(path.with_name("people.md.bak").read_text())


def test_history_keeps_versions_with_their_cause_and_the_hand_edits_between(memory: Memory) -> None:
    memory.save("Ann is the CTO.", type="people", topic="Ann")
    path = memory.vault.root / PEOPLE
    path.write_text(path.read_text() + "- Ann likes tea.\n")  # by hand
    memory.save("Bob is the CFO.", type="people", topic="Bob")

    kept = memory.history.versions(PEOPLE)

    assert [v.cause for v in kept] == ["save", "hand edit", "save", "original"]
    assert b"Ann likes tea." in memory.history.data(kept[1].id)
    assert memory.history.data(kept[0].id) == path.read_bytes()


def test_every_recent_save_is_a_version_and_history_is_bounded(memory: Memory) -> None:
    for number in range(5):
        memory.save(f"Server {number} runs Debian {number + 10}.", type="technical", topic="Servers")
    # Any of them may be the version a person's editor loaded: each is kept (see test_history for thinning).
    assert [v.cause for v in memory.history.versions("knowledge/technical.md")] == ["save"] * 5 + ["original"]


def test_a_hand_line_kept_word_for_word_stays_a_hand_line(memory: Memory) -> None:
    path = memory.vault.root / PEOPLE
    path.write_text(path.read_text() + "\n## Ann\n- Ann is the CTO.\n")  # by hand
    _curation_rewrite_keeping_everything(memory)
    assert "- Ann is the CTO." not in memory.state.snapshot_lines(PEOPLE)
    assert "- Wolfmem wrote this." in memory.state.snapshot_lines(PEOPLE)


def _curation_rewrite_keeping_everything(memory: Memory) -> None:
    memory.writer.edit(PEOPLE, lambda t: Edit(t + "- Wolfmem wrote this.\n"), cause=Cause.CURATION)


def test_the_write_module_is_the_only_writer_of_vault_files() -> None:
    package = Path(__file__).resolve().parents[2] / "wolfmem"
    writers = {"storage/exchange.py", "storage/writer.py"}
    offenders = []
    for source in package.rglob("*.py"):
        rel = source.relative_to(package).as_posix()
        text = source.read_text()
        if rel not in writers and ("os.replace(" in text or "atomic_write(" in text or "replace_if_unchanged(" in text):
            offenders.append(rel)
    # These write files of the per-machine state folder, never of the vault: the machine id, and a
    # damaged database moved aside.
    assert sorted(offenders) == ["storage/db.py", "storage/machine.py"]


def test_a_file_that_is_not_utf8_is_never_overwritten_by_default(memory: Memory) -> None:
    from wolfmem.errors import UsageError

    raw = b"# People\n\n## Ann\n- Ann likes caf\xe9 au lait.\n"  # Latin-1: a person's file, not ours to guess at
    (memory.vault.root / PEOPLE).write_bytes(raw)
    with pytest.raises(UsageError, match=r"knowledge/people\.md is not UTF-8 text"):
        memory.save("Ann is the CTO.", type="people", topic="Ann")
    with pytest.raises(UsageError, match="not UTF-8"):
        memory.writer.edit(PEOPLE, lambda text: Edit(text + "- more\n"), cause=Cause.SAVE)
    assert (memory.vault.root / PEOPLE).read_bytes() == raw
    assert not (memory.vault.root / f"{PEOPLE}.bak").exists()


def test_a_caller_that_says_how_to_decode_can_replace_a_file_that_is_not_utf8(memory: Memory) -> None:
    rel = ".wolfmem/scratch.json"
    (memory.vault.root / ".wolfmem").mkdir(exist_ok=True)
    (memory.vault.root / rel).write_bytes(b"\xff\xfe{")
    seen: list[str] = []

    def transform(text: str) -> Edit[None]:
        seen.append(text)
        return Edit("{}\n")

    memory.writer.edit(rel, transform, cause=Cause.LEASE, backup=True,
                       decode=lambda data: data.decode("utf-8", errors="replace"))
    assert seen == ["\ufffd\ufffd{"]
    assert (memory.vault.root / rel).read_text() == "{}\n"
    assert (memory.vault.root / f"{rel}.bak").read_bytes() == b"\xff\xfe{"
