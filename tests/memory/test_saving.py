"""memory_save through Memory.save: routing, topics, validation, secrets, dedup, bytes kept, idempotency."""

from __future__ import annotations

import json
import random
import threading
import unicodedata
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import run_cli, wait_until

from wolfmem import Memory
from wolfmem.errors import InvalidFact, SecretRefused, UsageError
from wolfmem.memory.receipts import Receipt
from wolfmem.storage.exchange import replace_if_unchanged
from wolfmem.storage.vault import CURATED

# Fake keys are assembled at runtime so secret scanners on the repo stay quiet.
SECRETS: list[tuple[str, str]] = [
    ("The key is sk-" + "T3BlbkFJx9Yq2LmN4pR7sV1wZ8cD5fG6", "OpenAI"),
    ("AWS key is AKIA" + "IOSFODNN7EXAMPLE", "AWS"),
    ("CI token ghp_" + "A1b2C3d4" * 4 + "E5f6", "GitHub"),
    ("CI token github_pat_" + "11ABCDEFG0_a1B2c3D4e5F6g7H8i9J0", "GitHub"),
    ("Slack bot uses xoxb-" + "1234567890-0987654321-AbCdEfGhIjKlMnOp", "Slack"),
    ("Stripe uses sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "Stripe"),
    ("Auth header is eyJ" + "hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fw", "JWT"),
    ("The key starts with -----BEGIN RSA " + "PRIVATE KEY-----", "PEM"),
    ("The database password: hunter2x", "password"),
    ("Prod DB is postgres://app:" + "s3cretPass@db.internal:5432/app", "connection string"),
    ("The signing key is " + "q8Zr3vN1xK7pL2mW9tB4yH6cJ0sD5fG8aE1uR", "high-entropy"),
]


def _files(vault: Path) -> dict[str, bytes]:
    """Every markdown file in the vault, by relative path."""
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in sorted(vault.rglob("*.md"))}


def _bullets(vault: Path, name: str) -> list[str]:
    return [
        line[2:] for line in (vault / "knowledge" / f"{name}.md").read_text("utf-8").splitlines()
        if line.startswith("- ")
    ]


# -- routing --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("type_name", "target"),
    [
        *[(name, name) for name in CURATED],
        ("person", "people"),
        ("project", "projects"),
        ("preference", "preferences"),
        ("decision", "decisions"),
        (" People ", "people"),
        ("DECISION", "decisions"),
    ],
)
def test_type_routes_to_its_curated_file(memory: Memory, vault: Path, type_name: str, target: str) -> None:
    receipt = memory.save("Kestrel is the codename of the billing rewrite", type=type_name)
    assert receipt.path == f"knowledge/{target}.md"
    assert _bullets(vault, target) == ["Kestrel is the codename of the billing rewrite"]


def test_default_type_is_technical(memory: Memory) -> None:
    assert memory.save("The staging cluster runs k3s").path == "knowledge/technical.md"


@pytest.mark.parametrize("type_name", ["episode", "custom", "notes", "", "knowledge/people.md"])
def test_unknown_type_lists_valid_ones_and_writes_nothing(memory: Memory, vault: Path, type_name: str) -> None:
    before = _files(vault)
    with pytest.raises(UsageError) as caught:
        memory.save("The staging cluster runs k3s", type=type_name)
    for name in CURATED:
        assert name in str(caught.value)
    assert _files(vault) == before


# -- topics and filing -------------------------------------------------------------
def test_topic_matches_existing_heading_ignoring_case_and_spacing(memory: Memory, vault: Path) -> None:
    people = vault / "knowledge" / "people.md"
    people.write_text("# People\n\n## Sarah  (Manager)\n- Sarah leads the infra team\n\n## Bob\n- Bob is on call\n")
    receipt = memory.save("Sarah prefers async standups", type="people", topic="  sarah (manager) ")
    assert receipt.section == "Sarah  (Manager)"
    assert receipt.line == 5
    lines = people.read_text().splitlines()
    assert lines[3:5] == ["- Sarah leads the infra team", "- Sarah prefers async standups"]
    assert lines.count("## Sarah  (Manager)") == 1


def test_topic_creates_a_missing_section(memory: Memory, vault: Path) -> None:
    receipt = memory.save("wolfmem stores facts in markdown", type="projects", topic="wolfmem")
    assert receipt.section == "wolfmem"
    text = (vault / "knowledge" / "projects.md").read_text()
    assert text.endswith("\n## wolfmem\n- wolfmem stores facts in markdown\n")
    assert receipt.line == len(text.splitlines())


@pytest.mark.parametrize("topic", ["", "   ", "##", " # "])
def test_empty_topic_is_refused(memory: Memory, vault: Path, topic: str) -> None:
    before = _files(vault)
    with pytest.raises(UsageError, match="topic is empty"):
        memory.save("Sarah prefers tea", type="people", topic=topic)
    assert _files(vault) == before


@pytest.mark.parametrize(
    ("fact", "section"),
    [
        ("Sarah prefers async standups", "Sarah (Manager)"),
        ("Remind sarah about the offsite", "Sarah (Manager)"),
        ("Bob Jones is on call this week", "Bob Jones"),
        ("Atlas ships every Tuesday", "Project Atlas — billing"),
        ("Susan likes tea", "Unfiled"),
        ("Sarahs tea is green", "Unfiled"),  # a whole word, not a prefix
    ],
)
def test_fact_without_topic_is_filed_by_entity_else_unfiled(
    memory: Memory, vault: Path, fact: str, section: str
) -> None:
    (vault / "knowledge" / "people.md").write_text(
        "# People\n\n## Sarah (Manager)\n- Sarah leads infra\n\n## Bob Jones\n- Bob is new\n\n"
        "## Project Atlas — billing\n- Atlas is the billing rewrite\n"
    )
    receipt = memory.save(fact, type="people")
    assert receipt.section == section
    assert f"- {fact}" in (vault / "knowledge" / "people.md").read_text().splitlines()


def test_unfiled_section_is_reused(memory: Memory, vault: Path) -> None:
    memory.save("The office wifi is slow on Mondays")
    memory.save("The printer is on floor two")
    text = (vault / "knowledge" / "technical.md").read_text()
    assert text.count("## Unfiled") == 1
    assert text.endswith("## Unfiled\n- The office wifi is slow on Mondays\n- The printer is on floor two\n")


# -- validation -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("fact", "hint"),
    [
        ("", "empty"),
        ("   \t ", "empty"),
        ("- ", "empty"),
        ("Sarah prefers tea. Bob prefers coffee.", "2 sentences"),
        ("Sarah prefers tea! Bob prefers coffee", "2 sentences"),
        ("Sarah prefers tea\nBob prefers coffee", "several lines"),
        ("Sarah prefers tea\r\nBob prefers coffee", "several lines"),
        ("x" * 301, "301 characters"),
        ("# Sarah", "heading"),
        ("## Sarah (Manager)", "heading"),
        ("```python", "code fence"),
        ("run ~~~ this", "code fence"),
        ("| name | role |", "table row"),
    ],
)
def test_invalid_fact_is_refused_and_nothing_written(memory: Memory, vault: Path, fact: str, hint: str) -> None:
    before = _files(vault)
    with pytest.raises(InvalidFact, match=hint):
        memory.save(fact, type="people")
    assert _files(vault) == before
    assert memory.search("Sarah prefers tea coffee") == []


@pytest.mark.parametrize(
    "fact",
    [
        "Use linters, e.g. ruff, on every commit.",
        "Dr. Smith reviews the design docs.",
        "wolfmem v1.2.3 needs 3.5 GB of RAM",
        "The docs live at example.com and docs.python.org.",
        "Prefers short answers, i.e. no preamble.",
        "The U.S. office opens at 9 a.m. sharp",
        "Pi is about 3.14159 and e is about 2.718",
        "Node v20.1.0 is pinned in .nvmrc",
        "x" * 300,
    ],
)
def test_abbreviations_urls_versions_and_decimals_are_one_sentence(
    memory: Memory, vault: Path, fact: str
) -> None:
    receipt = memory.save(fact)
    assert receipt.status == "saved"
    assert _bullets(vault, "technical") == [fact]


def test_list_marker_and_whitespace_are_stripped(memory: Memory, vault: Path) -> None:
    receipt = memory.save("  - The build uses uv  ")
    assert _bullets(vault, "technical") == ["The build uses uv"]
    assert receipt.status == "saved"


@pytest.mark.parametrize(("fact", "kind"), SECRETS)
def test_secret_is_refused_and_nothing_written(memory: Memory, vault: Path, fact: str, kind: str) -> None:
    before = _files(vault)
    with pytest.raises(SecretRefused) as caught:
        memory.save(fact)
    assert kind.lower() in caught.value.kind.lower()
    assert "1Password" in str(caught.value)  # says what to save instead
    assert _files(vault) == before


@pytest.mark.parametrize(
    "fact",
    [
        "My Stripe key is in 1Password",
        "The OpenAI key lives in the OPENAI_API_KEY env var",
        "The database password is stored in Vault",
        "We use sk-learn style pipelines",
    ],
)
def test_where_a_secret_lives_is_fine(memory: Memory, fact: str) -> None:
    assert memory.save(fact).status == "saved"


SPLIT_KEY = "AKIA" + "\u200b" + "IOSFODNN7EXAMPLE"  # a zero-width space inside an AWS key


def test_a_secret_split_by_a_zero_width_space_is_refused_on_save_log_and_update(memory: Memory, vault: Path) -> None:
    receipt = memory.save("The deploy user is ops", topic="Deploy")
    before = _files(vault)
    with pytest.raises(SecretRefused):
        memory.save(f"The deploy key is {SPLIT_KEY}", topic="Deploy")
    with pytest.raises(InvalidFact, match="secret"):
        memory.log_episode(f"Rotated the deploy key to {SPLIT_KEY}")
    with pytest.raises(SecretRefused):
        memory.update(receipt.ref, f"The deploy user is ops with key {SPLIT_KEY}")
    assert _files(vault) == before


def test_secret_topic_is_refused(memory: Memory, vault: Path) -> None:
    before = _files(vault)
    with pytest.raises(InvalidFact, match="secret"):
        memory.save("The CI token is rotated monthly", topic="ghp_" + "A1b2C3d4" * 4 + "E5f6")
    assert _files(vault) == before


# -- receipts ---------------------------------------------------------------------
def test_saved_receipt_fields(memory: Memory, vault: Path) -> None:
    receipt = memory.save("Sarah is my manager", type="person", topic="Sarah (Manager)")
    assert receipt.status == "saved"
    assert receipt.path == "knowledge/people.md"
    assert receipt.section == "Sarah (Manager)"
    assert receipt.ref == f"file:knowledge/people.md#L{receipt.line}"
    lines = (vault / "knowledge" / "people.md").read_text().splitlines()
    assert lines[receipt.line - 1] == "- Sarah is my manager"
    assert receipt.ref in receipt.message and "Sarah (Manager)" in receipt.message
    assert receipt.duplicate_of is None and receipt.possibly_contradicts == []
    data = receipt.to_dict()
    assert set(data) == {"status", "path", "line", "section", "ref", "message", "replayed"}
    assert memory.get(receipt.ref).text.strip() == "- Sarah is my manager"


# -- dedup ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "again",
    [
        "Sarah is my manager",
        "sarah is my manager.",
        "- Sarah  is my   manager!",
        "\u201cSarah is my manager\u201d",
    ],
)
def test_exact_duplicate_across_files_writes_nothing(memory: Memory, vault: Path, again: str) -> None:
    first = memory.save("Sarah is my manager", type="people", topic="Sarah")
    before = _files(vault)
    receipt = memory.save(again, type="technical")
    assert receipt.status == "duplicate"
    assert receipt.duplicate_of == first.ref
    assert (receipt.path, receipt.line, receipt.section) == (first.path, first.line, "Sarah")
    assert "nothing was written" in receipt.message
    assert _files(vault) == before


def test_a_unit_in_another_case_is_another_value_and_other_words_fold(memory: Memory, vault: Path) -> None:
    megabytes = memory.save("The office link is 10MB per second.", type="technical", topic="Network")
    megabits = memory.save("The office link is 10Mb per second.", type="technical", topic="Network")
    assert megabits.status == "saved" and megabits.possibly_contradicts == [megabytes.ref]
    before = _files(vault)
    assert memory.save("the office link is 10MB per second", type="technical", topic="Network").status == "duplicate"
    assert _files(vault) == before
    # memory_update from megabytes to megabits is a change, not "already says that".
    assert memory.update(megabytes.ref, "The office link is 10Gb per second.").status == "updated"
    assert memory.update(megabits.ref, "The office link is 10mb per second.").status == "updated"
    assert "- The office link is 10mb per second." in (vault / "knowledge/technical.md").read_text("utf-8")


@pytest.mark.parametrize(
    ("first", "again"),
    [
        ("I prefer conventional commits.", "User prefers conventional commits"),
        ("Sarah is my manager", "My manager is Sarah"),
        ("Deploys go through GitHub Actions", "We deploy via GitHub Actions"),
        ("The staging database is Postgres 16", "Postgres 16 is the staging database"),
        ("Releases are tagged with semver", "We tag releases with semver"),
        # The kinds of issue 14.
        ("Uses Kafka and Postgres", "Uses Postgres and Kafka"),  # a list in another order
        ("The Slack channel for Atlas is atlas-dev", "The Atlas Slack channel is atlas-dev"),  # a compound
        ("This quarter the team is focusing on search", "This quarter the team focuses on search"),
        ("Omar works on the payments API", "Omar is on the payments API"),  # a light verb
        ("Jin leads the mobile team", "Jin is the leader of the mobile team"),  # an agent noun
        ("Kai is writing the ingestion service", "Kai writes the ingestion service"),  # a verb form
        ("The team built the dashboards", "The dashboards were built by the team"),  # a passive
    ],
)
def test_paraphrase_is_a_duplicate(memory: Memory, vault: Path, first: str, again: str) -> None:
    original = memory.save(first, type="preferences")
    memory.save("Backups are stored in S3")  # an unrelated neighbour
    before = _files(vault)
    receipt = memory.save(again, type="technical")
    assert receipt.status == "duplicate"
    assert receipt.duplicate_of == original.ref
    assert _files(vault) == before


def test_a_hand_written_fact_counts_for_dedup(memory: Memory, vault: Path) -> None:
    (vault / "knowledge" / "decisions.md").write_text("# Decisions\n\n## Build\n- We chose uv over pip\n")
    receipt = memory.save("We chose uv over pip.", type="technical")
    assert receipt.status == "duplicate"
    assert receipt.duplicate_of == "file:knowledge/decisions.md#L4"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My manager is Sarah", "My manager is Susan"),
        ("Sarah is my manager", "My manager is Susan"),
        ("The project uses Python 3.11", "The project uses Python 3.12"),
        ("Prefers tabs", "Does not prefer tabs"),
        ("Meeting on June 3rd", "Meeting on June 4th"),
        ("The API runs on port 8080", "The API runs on port 9090"),
    ],
)
def test_value_change_is_saved_and_names_the_older_fact(memory: Memory, vault: Path, old: str, new: str) -> None:
    older = memory.save(old, type="people")
    receipt = memory.save(new, type="people")
    assert receipt.status == "saved"
    assert receipt.possibly_contradicts == [older.ref]
    assert older.ref in receipt.message
    assert receipt.to_dict()["possibly_contradicts"] == [older.ref]
    assert _bullets(vault, "people") == [old, new]


def test_refinement_is_saved_without_contradiction(memory: Memory, vault: Path) -> None:
    memory.save("Prefers dark mode", type="preferences")
    receipt = memory.save("Prefers dark mode in VS Code", type="preferences")
    assert receipt.status == "saved" and receipt.possibly_contradicts == []


def test_facts_outside_curated_files_do_not_count_as_duplicates(memory: Memory, vault: Path) -> None:
    (vault / "knowledge" / "reading-list.md").write_text("# Reading\n\n- The staging cluster runs k3s\n")
    memory.log_episode("The staging cluster runs k3s")
    assert memory.save("The staging cluster runs k3s").status == "saved"


# -- the file's other bytes -----------------------------------------------------------
@pytest.mark.parametrize(
    ("before", "after"),
    [
        (  # CRLF endings
            "# People\r\n\r\n## Sarah\r\n- Sarah leads infra\r\n",
            "# People\r\n\r\n## Sarah\r\n- Sarah leads infra\r\n- Sarah prefers tea\r\n",
        ),
        (  # no trailing newline
            "# People\n\n## Sarah\n- Sarah leads infra",
            "# People\n\n## Sarah\n- Sarah leads infra\n- Sarah prefers tea",
        ),
        (  # front matter and wikilinks
            "---\ntags: [people]\naliases: ['[[Team]]']\n---\n# People\n\nSee [[Org Chart]] and [[Sarah|S.]].\n\n"
            "## Sarah\n- Sarah reports to [[Dana]]\n\n## Bob\n- Bob is new\n",
            "---\ntags: [people]\naliases: ['[[Team]]']\n---\n# People\n\nSee [[Org Chart]] and [[Sarah|S.]].\n\n"
            "## Sarah\n- Sarah reports to [[Dana]]\n- Sarah prefers tea\n\n## Bob\n- Bob is new\n",
        ),
        (  # odd spacing, tabs, trailing spaces and an HTML comment stay as written
            "# People  \n<!-- keep me -->\n\n\n## Sarah\t\n* Sarah leads infra   \n\n\n",
            "# People  \n<!-- keep me -->\n\n\n## Sarah\t\n* Sarah leads infra   \n- Sarah prefers tea\n\n\n",
        ),
    ],
)
def test_other_bytes_are_preserved(memory: Memory, vault: Path, before: str, after: str) -> None:
    path = vault / "knowledge" / "people.md"
    path.write_bytes(before.encode())
    receipt = memory.save("Sarah prefers tea", type="people", topic="Sarah")
    assert path.read_bytes() == after.encode()
    assert receipt.line == after.splitlines().index("- Sarah prefers tea") + 1


@pytest.mark.parametrize("state", ["missing", "empty", "blank"])
def test_first_save_into_missing_or_empty_file_creates_it_with_title(
    memory: Memory, vault: Path, state: str
) -> None:
    path = vault / "knowledge" / "decisions.md"
    if state == "missing":
        path.unlink()
    else:
        path.write_text("" if state == "empty" else "\n  \n")
    receipt = memory.save("We chose Whoosh over SQLite FTS", type="decision", topic="Search")
    text = path.read_text()
    assert text.startswith("# Decisions\n")
    assert text.endswith("## Search\n- We chose Whoosh over SQLite FTS\n")
    assert text.splitlines()[receipt.line - 1] == "- We chose Whoosh over SQLite FTS"


# -- freshness and idempotency ---------------------------------------------------------
def test_saved_fact_is_searchable_immediately(memory: Memory) -> None:
    receipt = memory.save("The nightly backup runs at 02:00 on the NAS", type="technical")
    hits = memory.search("when does the nightly backup run")
    assert hits and hits[0].ref == receipt.ref
    # A second Memory (another process's view) sees it too, with no watcher running.
    with Memory(memory.vault.root, memory.config) as other:
        assert other.search("nightly backup NAS")[0].ref == receipt.ref


def replay_of(receipt: Receipt) -> Receipt:
    """What a retry with the same request_id gets: the first receipt, marked as a replay."""
    message = f"Replayed: an earlier call with this request_id did this. {receipt.message}"
    return replace(receipt, replayed=True, message=message)


def test_retry_with_same_request_id_returns_original_receipt(memory: Memory, vault: Path) -> None:
    first = memory.save("Sarah prefers tea", type="people", request_id="req-1")
    assert not first.replayed
    after_first = _files(vault)
    again = memory.save("Sarah prefers tea", type="people", request_id="req-1")
    assert again == replay_of(first)
    # A different fact with the same id is an error naming the first fact and its ref, and writes nothing.
    taken = r"already used for another fact, 'Sarah prefers tea' \(file:knowledge/people\.md#L\d+\)"
    with pytest.raises(UsageError, match=taken):
        memory.save("Bob prefers coffee", type="people", request_id="req-1")
    assert _files(vault) == after_first
    # The record survives a restart.
    with Memory(vault, memory.config) as reopened:
        assert reopened.save("Sarah prefers tea", type="people", request_id="req-1") == replay_of(first)
        with pytest.raises(UsageError, match="already used for another fact"):
            reopened.save("Bob prefers coffee", request_id="req-1")
    assert _files(vault) == after_first


def test_duplicate_receipt_is_also_replayed(memory: Memory) -> None:
    memory.save("Sarah prefers tea", type="people")
    first = memory.save("sarah prefers tea", request_id="req-dup")
    assert first.status == "duplicate"
    assert memory.save("sarah prefers tea", request_id="req-dup") == replay_of(first)


@pytest.mark.parametrize("request_id", ["", "   ", "x" * 201])
def test_bad_request_id_is_refused(memory: Memory, vault: Path, request_id: str) -> None:
    before = _files(vault)
    with pytest.raises(UsageError, match="request_id"):
        memory.save("Sarah prefers tea", request_id=request_id)
    assert _files(vault) == before


def test_idempotent_retry_across_processes(vault: Path) -> None:
    args = ("save", "Deploys go through GitHub Actions", "--type", "technical",
            "--request-id", "agent-42", "--vault", str(vault), "--json")
    first = run_cli(*args)
    assert first.returncode == 0, first.stderr
    after_first = _files(vault)
    second = run_cli(*args)
    assert second.returncode == 0, second.stderr
    original = Receipt(**json.loads(first.stdout))
    assert Receipt(**json.loads(second.stdout)) == replay_of(original)
    assert original.status == "saved"
    assert _files(vault) == after_first
    assert _bullets(vault, "technical") == ["Deploys go through GitHub Actions"]


def test_cli_save_errors_exit_nonzero_and_write_nothing(vault: Path) -> None:
    before = _files(vault)
    result = run_cli("save", "One. Two.", "--vault", str(vault))
    assert result.returncode != 0
    assert "sentence" in result.stderr
    result = run_cli("save", "Fine fact", "--type", "bogus", "--vault", str(vault))
    assert result.returncode == 2
    assert "people" in result.stderr
    assert _files(vault) == before


# -- a person's editor ---------------------------------------------------------------
def _editor_append(path: Path, line: str, by_rename: bool) -> None:
    """Append a line the way a careful editor saves: in place, or a whole new file swapped in by rename.

    A check-then-rename editor can itself overwrite a save that lands between its check and its
    rename; wolfmem cannot prevent that. This editor swaps atomically, so every loss would be ours.
    """
    if not by_rename:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line)
        return
    expected = base = path.read_bytes()
    while (found := replace_if_unchanged(path, expected, base + line.encode())) is not None:
        expected, base = found


@pytest.mark.slow
def test_concurrent_editor_writes_are_never_clobbered(memory: Memory, vault: Path) -> None:
    """An "editor" thread keeps appending its own lines, in place and by rename, while saves happen."""
    path = vault / "knowledge" / "technical.md"
    stop = threading.Event()
    written: list[str] = []

    def editor() -> None:
        n = 0
        while not stop.is_set() and n < 40:  # a bounded burst, so saves are sure to get through
            line = f"- editor note {n}\n"
            _editor_append(path, line, by_rename=n % 2 == 0)
            written.append(line.strip())
            n += 1
            # Faster than any person, yet slow enough for a save (which parses the file) to get in.
            stop.wait(random.uniform(0.01, 0.06))

    thread = threading.Thread(target=editor)
    thread.start()
    try:
        facts = [f"Service {n} listens on port {9000 + n}" for n in range(40)]
        for fact in facts:
            memory.save(fact)
    finally:
        stop.set()
        thread.join()
    assert len(written) > 10
    # An in-place append that reached the inode a save had just swapped out is in the kept displaced
    # version; a sync merges it back once that version has been quiet for its grace period.
    def merged() -> list[str] | None:
        memory.sync()
        lines = path.read_text("utf-8").splitlines()
        return lines if all(line in lines for line in written) else None

    lines = wait_until(merged, timeout=15, interval=0.2)
    assert isinstance(lines, list)
    for fact in facts:
        assert lines.count(f"- {fact}") == 1, fact


# -- value changes beside the paraphrase kinds (issue 14) ----------------------------------------
@pytest.mark.parametrize(
    ("first", "again"),
    [
        ("Uses Kafka and Postgres", "Uses Kafka and MySQL"),
        ("The deploy key for GitHub lives in 1Password", "The deploy key for GitLab lives in 1Password"),
        ("The payment service for EU calls the US gateway", "The payment service for US calls the EU gateway"),
        ("Ana likes Python but not Java", "Ana likes Java but not Python"),
        ("The backup runs before the deploy", "The backup runs after the deploy"),
        (
            "On my personal work laptop the integrated terminal color theme in VS Code is always set to light mode",
            "On my personal work laptop the integrated terminal color theme in VS Code is always set to dark mode",
        ),
    ],
)
def test_changed_values_are_saved_beside_the_older_fact(memory: Memory, vault: Path, first: str, again: str) -> None:
    memory.save(first, type="projects")
    receipt = memory.save(again, type="projects")
    assert receipt.status == "saved"
    assert _bullets(vault, "projects")[-2:] == [first, again]


@pytest.mark.slow
def test_cli_save_of_a_reordered_list_is_a_duplicate(tmp_path: Path) -> None:
    vault = str(tmp_path / "vault")
    assert run_cli("init", "--vault", vault).returncode == 0
    first = run_cli("save", "Meetings are on Tuesday and Friday", "--vault", vault, "--json")
    assert first.returncode == 0, first.stderr
    again = run_cli("save", "Meetings are on Friday and Tuesday", "--vault", vault, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["duplicate_of"] == json.loads(first.stdout)["ref"]
    changed = run_cli("save", "Meetings are on Tuesday and Thursday", "--vault", vault, "--json")
    receipt = json.loads(changed.stdout)
    assert receipt["status"] == "saved"
    assert receipt["possibly_contradicts"] == [json.loads(first.stdout)["ref"]]


# -- topics name entities; wikilink headings (issue 16, items 6 and 7) ---------------------------
PEOPLE_WITH_LINKS = (
    "# People\n\n## Sarah (Manager)\n- Sarah leads infra\n\n## [[Dave Smith|Dave]]\n- Dave owns billing\n\n"
    "## [[people/Priya Patel]]\n- Priya runs QA\n"
)


@pytest.mark.parametrize(
    ("topic", "section"),
    [
        ("Sarah", "Sarah (Manager)"),  # the same section the fact goes to with no topic
        ("sarah", "Sarah (Manager)"),
        ("Sarah (Team lead)", "Sarah (Manager)"),
        ("Dave", "[[Dave Smith|Dave]]"),
        ("Dave Smith", "[[Dave Smith|Dave]]"),
        ("[[Dave Smith]]", "[[Dave Smith|Dave]]"),
        ("Priya Patel", "[[people/Priya Patel]]"),
        ("Sarah Connor", "Sarah Connor"),  # someone else: a new section
        ("Tom", "Tom"),
    ],
)
def test_topic_finds_the_section_about_its_entity(memory: Memory, vault: Path, topic: str, section: str) -> None:
    people = vault / "knowledge" / "people.md"
    people.write_text(PEOPLE_WITH_LINKS)
    receipt = memory.save("They asked for the quarterly numbers", type="people", topic=topic)
    assert receipt.section == section
    lines = people.read_text().splitlines()
    assert lines[receipt.line - 1] == "- They asked for the quarterly numbers"
    headings = [line for line in lines if line.startswith("## ")]
    assert headings.count(f"## {section}") == 1
    assert len(headings) == 3 + (section in ("Sarah Connor", "Tom"))


@pytest.mark.parametrize(
    ("fact", "section"),
    [
        ("Dave prefers chess", "[[Dave Smith|Dave]]"),  # the alias
        ("Smith approved the budget", "[[Dave Smith|Dave]]"),
        ("Priya is out on Friday", "[[people/Priya Patel]]"),
        ("Sarah prefers async standups", "Sarah (Manager)"),
        ("Susan likes tea", "Unfiled"),
    ],
)
def test_fact_is_filed_under_a_wikilink_heading(memory: Memory, vault: Path, fact: str, section: str) -> None:
    (vault / "knowledge" / "people.md").write_text(PEOPLE_WITH_LINKS)
    receipt = memory.save(fact, type="people")
    assert receipt.section == section
    lines = (vault / "knowledge" / "people.md").read_text().splitlines()
    assert lines[receipt.line - 1] == f"- {fact}"
    assert sum(line.startswith("## ") for line in lines) == 3 + (section == "Unfiled")


@pytest.mark.slow
def test_cli_topic_and_wikilink_heading_then_curation_joins_a_bare_name(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    people = vault / "knowledge" / "people.md"

    def save(*args: str) -> dict:
        result = run_cli("save", *args, "--type", "people", "--vault", str(vault), "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    assert run_cli("init", "--vault", str(vault)).returncode == 0
    assert save("Sarah likes tea", "--topic", "Sarah")["section"] == "Sarah"  # nothing else yet
    with people.open("a") as file:  # a person adds the sections their way
        file.write("\n## Sarah (Manager)\n- Sarah is my manager\n\n## [[Dave Smith|Dave]]\n- Dave owns billing\n")
    assert save("Dave prefers chess")["section"] == "[[Dave Smith|Dave]]"
    assert save("Dave is on call in May", "--topic", "Dave")["section"] == "[[Dave Smith|Dave]]"
    curated = run_cli("curate", "--vault", str(vault))
    assert curated.returncode == 0, curated.stderr
    text = people.read_text()
    assert "## Sarah\n" not in text
    assert "## Sarah (Manager)\n- Sarah is my manager\n- Sarah likes tea\n" in text
    assert save("Sarah prefers async standups", "--topic", "Sarah")["section"] == "Sarah (Manager)"


# -- text as people's editors write it ----------------------------------------------


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_byte_order_mark_survives_a_save_with_one_title(memory: Memory, vault: Path, newline: str) -> None:
    people = vault / "knowledge/people.md"
    people.write_bytes(newline.join(["\ufeff# People", "", "## Sarah", "- Sarah likes green tea", ""]).encode())
    receipt = memory.save("Sarah manages the platform team", type="people")
    assert receipt.status == "saved" and receipt.section == "Sarah"
    text = people.read_bytes().decode("utf-8")
    assert text.startswith("\ufeff# People" + newline)
    assert text.count("# People") == 1 and "\ufeff" not in text[1:]
    assert text.splitlines()[receipt.line - 1] == "- Sarah manages the platform team"
    # The title is a heading, never a fact a search returns.
    assert [hit.text for hit in memory.search("People") if hit.path == "knowledge/people.md"] == []


def test_a_fact_written_decomposed_is_a_duplicate_of_the_same_fact_composed(memory: Memory, vault: Path) -> None:
    people = vault / "knowledge/people.md"
    people.write_text(unicodedata.normalize("NFD", "# People\n\n## Zoë\n- Zoë runs the café on Rua Augusta\n"))
    before = people.read_bytes()
    receipt = memory.save(unicodedata.normalize("NFC", "Zoë runs the café on Rua Augusta"), type="people")
    assert (receipt.status, receipt.line) == ("duplicate", 4)
    assert people.read_bytes() == before
