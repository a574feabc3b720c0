"""Confinement: nothing outside the vault is read, indexed, shown, sent to an LLM or written.

Real symlinks on files, `.bak` files, episodes, curation logs and the top-level folders; every ref
form; the prompts a recording fake LLM receives; the CLI in a subprocess. Swap races live in
test_confinement_races.py.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from conftest import run_cli
from fakellm import FakeLLM

from wolfmem import Config, Memory
from wolfmem.curation.audit.run import run_audit
from wolfmem.curation.backups import diff_backup, restore_backup
from wolfmem.curation.run import make_curator, run
from wolfmem.errors import LinkOutside, OutsideVault
from wolfmem.jobs.digest import write_digest
from wolfmem.storage.vault import CURATED_PATHS, Vault
from wolfmem.storage.writer import Cause
from wolfmem.tools import execute

SECRET = "Zanzibar exfiltrated canary"
OUTSIDE_TEXT = f"# Outside\n\n## Outside Heading Zanzibar\n\n- {SECRET} one.\n- {SECRET} two.\n"
NOW = datetime(2026, 11, 29, 3, 0, tzinfo=UTC)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the vault holding a note, a folder of notes, and a would-be episode."""
    folder = tmp_path / "outside"
    (folder / "notes").mkdir(parents=True)
    (folder / "secret.md").write_text(OUTSIDE_TEXT, "utf-8")
    (folder / "notes" / "deep.md").write_text(OUTSIDE_TEXT, "utf-8")
    (folder / "2026-11-28.md").write_text(f"# 2026-11-28\n\n## 10:00 — out\n- {SECRET} episode.\n", "utf-8")
    return folder


def outside_state(folder: Path) -> dict[str, bytes]:
    """Every file under the outside folder with its bytes (to prove nothing was written there)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def no_secret(text: object) -> bool:
    """Whether text (or anything JSON-able) carries none of the outside content."""
    flat = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False, default=str)
    return "Zanzibar" not in flat and "exfiltrated" not in flat


# -- files, refs, search, the map ----------------------------------------------------------------
REF_FORMS = [
    "knowledge/leak.md", "file:knowledge/leak.md", "FILE: knowledge/leak.md", "./knowledge/leak.md",
    "knowledge//leak.md", "knowledge/./leak.md", "file:knowledge/leak.md#L1", "knowledge/leak.md#L1-L9",
    "knowledge/leak.md#Outside Heading Zanzibar", "knowledge/leak.md#zanzibar", "knowledge/outdir/secret.md",
    "knowledge/outdir/notes/deep.md", "knowledge/hop.md", "knowledge/relative.md", "episodes/2026-11-28.md",
    "knowledge/people.md.bak", "knowledge/dangling.md",
]


@pytest.fixture
def linked(memory: Memory, outside: Path) -> Memory:
    """A vault with links out of it in every place a note can be, plus links that stay inside."""
    root = memory.vault.root
    os.symlink(outside / "secret.md", root / "knowledge" / "leak.md")
    os.symlink(outside, root / "knowledge" / "outdir")
    os.symlink(root / "knowledge" / "leak.md", root / "knowledge" / "hop.md")  # inside, then out
    os.symlink("../../outside/secret.md", root / "knowledge" / "relative.md")
    os.symlink(outside / "2026-11-28.md", root / "episodes" / "2026-11-28.md")
    os.symlink(outside / "secret.md", root / "knowledge" / "people.md.bak")
    os.symlink(outside / "missing.md", root / "knowledge" / "dangling.md")
    # Links that stay inside are followed.
    os.symlink(root / "knowledge" / "people.md", root / "knowledge" / "alias.md")
    (root / "notes").mkdir()
    (root / "notes" / "inner.md").write_text("- The quokka note lives in an inside folder.\n", "utf-8")
    os.symlink("../notes", root / "knowledge" / "innerdir")
    return memory


@pytest.mark.parametrize("ref", REF_FORMS)
def test_every_ref_form_through_a_link_out_is_refused(linked: Memory, ref: str) -> None:
    with pytest.raises(OutsideVault) as info:
        linked.get(ref)
    assert no_secret(str(info.value))
    result = execute(linked, "memory_get", {"ref": ref})
    assert result.is_error and "outside the vault" in result.text and no_secret(result.text)


def test_a_link_out_names_the_link_but_not_its_target(linked: Memory) -> None:
    with pytest.raises(LinkOutside) as info:
        linked.vault.read_bytes("knowledge/outdir/notes/deep.md")
    assert info.value.link == "knowledge/outdir" and info.value.target.endswith("outside")
    assert "knowledge/outdir" in str(info.value) and "/outside" not in str(info.value)


def test_links_that_stay_inside_are_followed(linked: Memory) -> None:
    root = linked.vault.root
    assert linked.get("knowledge/alias.md").text == (root / "knowledge" / "people.md").read_text("utf-8")
    assert "quokka" in linked.get("knowledge/innerdir/inner.md").text
    assert [hit.path for hit in linked.search("quokka note")] == ["knowledge/innerdir/inner.md"]


def test_search_never_indexes_what_lies_outside(linked: Memory) -> None:
    linked.save("The Zanzibar office opens at nine.", topic="Offices")  # an inside fact with the same word
    hits = linked.search("Zanzibar exfiltrated canary", limit=50)
    assert [hit.text for hit in hits] == ["The Zanzibar office opens at nine."]
    assert not any("leak" in rel or "outdir" in rel or "2026-11-28" in rel for rel in linked.syncer.manifest())


def test_memory_map_shows_no_heading_of_a_curated_file_that_links_out(memory: Memory, outside: Path) -> None:
    people = memory.vault.root / "knowledge" / "people.md"
    people.unlink()
    os.symlink(outside / "secret.md", people)
    assert no_secret(memory.memory_map())
    with pytest.raises(LinkOutside):
        memory.save("Sarah Chen is my manager.", type="people")
    assert outside_state(outside)["secret.md"] == OUTSIDE_TEXT.encode()


def test_status_lists_each_ignored_link_with_its_target(linked: Memory, outside: Path) -> None:
    from wolfmem.ops.status import collect, render

    data = collect(linked)
    links = {link["rel"]: link["target"] for link in data["ignored_links"]}
    assert links == {
        "knowledge/leak.md": str(outside / "secret.md"),
        "knowledge/outdir": str(outside),
        "knowledge/relative.md": "../../outside/secret.md",
        "episodes/2026-11-28.md": str(outside / "2026-11-28.md"),
        "knowledge/people.md.bak": str(outside / "secret.md"),
        "knowledge/dangling.md": str(outside / "missing.md"),
        "knowledge/hop.md": str(linked.vault.root / "knowledge" / "leak.md"),  # a chain that ends outside
    }  # alias.md and innerdir stay inside: not listed
    text = render(data)
    assert f"ignored link (it leads outside the vault, so it is never followed): knowledge/outdir -> {outside}" in text


# -- the top-level folders -----------------------------------------------------------------------
@pytest.mark.parametrize("top", ["knowledge", "episodes", "consolidated"])
def test_a_top_level_folder_linked_out_is_never_indexed_or_filled(tmp_path: Path, outside: Path, top: str) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    os.symlink(outside, root / top)
    before = outside_state(outside)
    with Memory(root, Config(state_dir=str(tmp_path / "state"))) as memory:
        assert memory.search("Zanzibar exfiltrated canary") == []
        assert memory.syncer.manifest().keys() <= set(CURATED_PATHS)
        assert no_secret(memory.memory_map())
        assert memory.vault.escaping_links()[0].rel == top
        if top == "episodes":
            with pytest.raises(LinkOutside):
                memory.log_episode("Deployed v2 to staging")
        if top == "knowledge":
            with pytest.raises(LinkOutside):
                memory.save("The billing service runs on Kubernetes.")
    # Opening the vault created no template (or anything else) in the outside folder.
    assert outside_state(outside) == before
    assert sorted(p.name for p in outside.iterdir()) == ["2026-11-28.md", "notes", "secret.md"]


def test_init_creates_nothing_behind_a_knowledge_link_out(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    os.symlink(outside / "notes", root / "knowledge")
    created = Vault(root, tmp_path / "state").init()
    assert created == ["episodes/"]
    assert sorted(p.name for p in (outside / "notes").iterdir()) == ["deep.md"]


# -- backups, diff and restore -------------------------------------------------------------------
def test_diff_and_restore_refuse_a_bak_that_links_out(linked: Memory, outside: Path) -> None:
    people = linked.vault.root / "knowledge" / "people.md"
    before, outside_before = people.read_bytes(), outside_state(outside)
    for action in (diff_backup, restore_backup):
        with pytest.raises(LinkOutside, match=r"people\.md\.bak"):
            action(linked, "people")
    assert people.read_bytes() == before and outside_state(outside) == outside_before


def test_a_backup_over_a_bak_link_replaces_the_link_never_writes_through_it(linked: Memory, outside: Path) -> None:
    bak = linked.vault.root / "knowledge" / "people.md.bak"
    before = (linked.vault.root / "knowledge" / "people.md").read_bytes()
    linked.writer.put("knowledge/people.md", before.decode() + "- Sarah Chen is my manager.\n", cause=Cause.UPDATE)
    assert not bak.is_symlink() and bak.read_bytes() == before
    assert (outside / "secret.md").read_text("utf-8") == OUTSIDE_TEXT


@pytest.mark.slow
def test_cli_diff_restore_and_status_over_links_out(linked: Memory, outside: Path) -> None:
    vault = str(linked.vault.root)
    before = outside_state(outside)
    for command in ("diff", "restore"):
        done = run_cli(command, "people", "--vault", vault)
        assert done.returncode == 2, done.stderr
        assert "to a place outside the vault" in done.stderr and no_secret(done.stdout + done.stderr)
    done = run_cli("status", "--vault", vault)
    assert done.returncode == 0, done.stderr
    assert f"knowledge/people.md.bak -> {outside / 'secret.md'}" in done.stdout
    done = run_cli("get", "knowledge/outdir/secret.md", "--vault", vault)
    assert done.returncode == 2 and no_secret(done.stdout + done.stderr)
    assert outside_state(outside) == before


# -- writes --------------------------------------------------------------------------------------
def test_a_missing_folder_behind_a_link_out_is_never_created(memory: Memory, outside: Path) -> None:
    os.symlink(outside / "notes", memory.vault.root / "consolidated")
    before = outside_state(outside)
    with pytest.raises(LinkOutside):
        memory.writer.put("consolidated/sub/digest.md", "# Digest\n", cause=Cause.DIGEST)
    with pytest.raises(LinkOutside):
        write_digest(memory.services, "2026-W48", date(2026, 11, 29))
    assert outside_state(outside) == before and not (outside / "notes" / "sub").exists()


# -- prompts sent to the LLM -----------------------------------------------------------------------
def test_curation_and_audit_send_nothing_from_outside_to_the_llm(tmp_path: Path, outside: Path) -> None:
    root = tmp_path / "vault"
    with FakeLLM(default={"status": "unchanged", "summary": "", "content": "", "changes": []}) as fake:
        config = Config(state_dir=str(tmp_path / "state"), llm_base_url=fake.base_url, llm_model="fake-model",
                        llm_timeout=5.0, llm_max_retries=0)
        with Memory(root, config, clock=lambda: NOW) as memory:
            memory.save("Sarah Chen is my manager.", type="people", topic="Sarah Chen")
            memory.log_episode("Deployed the walrus service", when=datetime(2026, 11, 28, 9, tzinfo=UTC))
            episode = root / "episodes" / "2026-11-28.md"
            episode.rename(root / "episodes" / "2026-11-27.md")
            os.symlink(outside / "2026-11-28.md", episode)
            os.symlink(outside / "secret.md", root / "knowledge" / "projects.md.bak")
            (root / "knowledge" / "projects.md").unlink()
            os.symlink(outside / "secret.md", root / "knowledge" / "projects.md")
            (root / "consolidated").mkdir(exist_ok=True)
            os.symlink(outside / "secret.md", root / "consolidated" / "2026-W47.md")
            os.symlink(outside / "secret.md", root / "consolidated" / "2026-W48.md")  # this run's log
            before = outside_state(outside)

            curated = run(memory.services, make_curator(config), date(2026, 11, 29), since=date(2026, 11, 20))
            fake.default = {"summary": "Nothing to report.", "findings": []}
            audited = run_audit(memory.services, "2026-11", NOW)

            assert fake.requests, "the model was asked something"
            assert all(no_secret(request) for request in fake.requests)
            assert any("walrus" in json.dumps(request) for request in fake.requests)
            assert no_secret(asdict(curated)) and no_secret(audited)
            # The file and this run's log that lead out are refused by name; the rest is curated.
            assert curated.status == "partial" and curated.log_path is None
            assert "outside the vault" in curated.files["knowledge/projects.md"].reasons[0]
            assert curated.files["knowledge/people.md"].status == "unchanged"
        assert outside_state(outside) == before
