"""Hybrid search through Memory, the save path, status, reindex and the daemon, against the fake embedder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest
from conftest import REPO, run_cli, wait_until
from fakeembed import embed

from wolfmem import Config, Memory
from wolfmem.core import markdown
from wolfmem.core.facts import fact_key
from wolfmem.ops.status import collect, render
from wolfmem.search import query_dates
from wolfmem.search.schema import Filters
from wolfmem.semantic.fusion import FusionRule

EPISODE = (
    "# 2024-05-01\n\n## 10:00 — Weekend\n"
    "- Caroline went to a benefit game for the kids' hospital\n"
    "- Melanie painted a sunset over the lake\n"
    "- Caroline said the weather was rainy all weekend\n"
)


def write_episode(vault: Path, text: str = EPISODE, day: str = "2024-05-01") -> None:
    (vault / "episodes").mkdir(parents=True, exist_ok=True)
    (vault / f"episodes/{day}.md").write_text(text, "utf-8")


@pytest.fixture
def hybrid(vault: Path, hybrid_config: Config):
    with Memory(vault, hybrid_config) as memory:
        yield memory


def test_unset_model_loads_no_embedding_client(vault: Path) -> None:
    # numpy is the lexical scorer's too (search.scoring); the embedding side and openai stay unloaded.
    code = (
        "import sys; from wolfmem import Memory\n"
        f"m = Memory({str(vault)!r}); m.save('Tom lives in Berlin', type='people'); m.search('Berlin')\n"
        "print(m.hybrid, 'wolfmem.semantic.hybrid' in sys.modules, 'openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                         env=dict(os.environ), timeout=60)
    assert out.stdout.split() == ["None", "False", "False"], out.stderr


def test_hybrid_finds_a_fact_that_shares_no_word_with_the_query(vault: Path, hybrid: Memory, config: Config) -> None:
    write_episode(vault)
    with Memory(vault, config) as lexical:
        assert lexical.search("charity event") == []
    hybrid.sync()
    assert hybrid.hybrid.embed_all().embedded == 3
    hits = hybrid.search("charity event")
    assert hits[0].text.startswith("Caroline went to a benefit game")
    assert (hits[0].path, hits[0].line, hits[0].date) == ("episodes/2024-05-01.md", 4, "2024-05-01")
    # Filters still hold for dense candidates.
    assert hybrid.search("charity event", sources="knowledge") == []
    assert hybrid.search("charity event", before="2024-04-30") == []


def test_facts_without_vectors_and_a_down_endpoint_give_the_lexical_answer(
    vault: Path, hybrid: Memory, config: Config, embed_server
) -> None:
    write_episode(vault)
    with Memory(vault, config) as lexical:
        expected = [(hit.path, hit.line) for hit in lexical.search("sunset lake")]
    # Nothing embedded yet: the lexical ranking, and status says how far embedding got.
    assert [(hit.path, hit.line) for hit in hybrid.search("sunset lake")] == expected
    assert collect(hybrid)["embeddings"]["embedded"] == 0
    hybrid.hybrid.embed_all()
    embed_server.down = True
    hybrid.hybrid._vectors.clear()  # forget cached query vectors, as a new query would be
    assert [(hit.path, hit.line) for hit in hybrid.search("sunset lake")] == expected
    calls = embed_server.calls
    assert [(hit.path, hit.line) for hit in hybrid.search("rainy weekend")]  # backing off: no new request
    assert embed_server.calls == calls
    status = collect(hybrid)["embeddings"]
    assert (status["endpoint"], status["embedded"], status["total"]) == ("down", 3, 3)
    assert "HTTP 503" in status["error"]
    assert "embeddings endpoint DOWN" in render(collect(hybrid))


def test_moved_and_unchanged_facts_are_never_embedded_again(vault: Path, hybrid: Memory, embed_server) -> None:
    write_episode(vault)
    hybrid.sync()
    hybrid.hybrid.embed_all()
    sent = len(embed_server.texts)
    # Move the charity line into another file, and rebuild the whole index.
    lines = EPISODE.splitlines()
    write_episode(vault, "\n".join(lines[:3] + lines[4:]) + "\n")
    write_episode(vault, "# 2024-06-02\n\n## 09:00 — Later\n" + lines[3] + "\n", day="2024-06-02")
    hybrid.reindex()
    report = hybrid.hybrid.embed_all()
    assert report.embedded == 0 and len(embed_server.texts) == sent
    hits = hybrid.search("charity event")
    assert (hits[0].path, hits[0].line) == ("episodes/2024-06-02.md", 4)


def test_a_save_embeds_its_fact_at_once_and_reuses_the_dedup_vector(hybrid: Memory, embed_server) -> None:
    receipt = hybrid.save("Sarah adopted a kitten named Tom", type="people", topic="Sarah")
    assert receipt.status == "saved"
    key = fact_key("Sarah adopted a kitten named Tom")
    assert hybrid.hybrid.store.missing([key]) == set()
    assert key in hybrid.hybrid.store.layout("knowledge/people.md").keys
    assert embed_server.texts.count("Sarah adopted a kitten named Tom") == 1
    hits = hybrid.search("feline pet")
    assert hits[0].ref == receipt.ref


def test_a_save_with_the_endpoint_down_still_saves(hybrid: Memory, embed_server) -> None:
    embed_server.down = True
    receipt = hybrid.save("Deploys run on Fridays", type="technical")
    assert receipt.status == "saved"
    assert hybrid.search("Fridays")[0].ref == receipt.ref
    assert collect(hybrid)["embeddings"]["endpoint"] == "down"


def test_similar_facts_only_propose_dedup_candidates_relate_decides(hybrid: Memory) -> None:
    first = hybrid.save("Sarah adopted a kitten named Tom in 2021", type="people", topic="Sarah")
    near = hybrid.hybrid.similar("Sarah adopted a feline named Tom in 2022")
    assert [hit.line for hit in near] == [first.line]
    # Nearest in meaning, but the year differs: relate's value guard keeps them apart.
    second = hybrid.save("Sarah adopted a feline named Tom in 2022", type="people", topic="Sarah")
    assert second.status == "saved"
    assert second.possibly_contradicts == [first.ref]
    assert hybrid.save("Sarah adopted a kitten named Tom in 2021.", type="people").status == "duplicate"


@pytest.mark.slow
def test_reindex_and_status_from_the_cli_and_another_process_sees_the_vectors(
    vault: Path, hybrid_config: Config, embed_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_episode(vault)
    monkeypatch.setenv("WOLFMEM_EMBEDDINGS_BASE_URL", embed_server.base_url)
    monkeypatch.setenv("WOLFMEM_EMBEDDINGS_MODEL", "fake-embed")
    result = run_cli("reindex", "--vault", str(vault))
    assert result.returncode == 0, result.stderr
    assert "Embedded 3 new facts" in result.stdout
    status = run_cli("status", "--vault", str(vault))
    assert "hybrid; 3 of 3 facts embedded with fake-embed" in status.stdout
    with Memory(vault, hybrid_config) as memory:  # this process: vectors another process stored
        sent = embed_server.calls
        assert memory.search("charity event")[0].line == 4
        assert embed_server.calls == sent + 1  # only the query was embedded here
    embed_server.down = True
    write_episode(vault, "# 2024-05-02\n\n## 10:00 — x\n- Melanie adopted a kitten\n", day="2024-05-02")
    result = run_cli("reindex", "--vault", str(vault))
    assert result.returncode == 0 and "Indexed 4 facts" in result.stdout
    assert "Embeddings not updated" in result.stdout and "HTTP 503" in result.stdout


@pytest.mark.slow
def test_the_daemon_embeds_new_facts_in_the_background(
    tmp_path: Path, hybrid_config: Config, embed_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WOLFMEM_EMBEDDINGS_BASE_URL", embed_server.base_url)
    monkeypatch.setenv("WOLFMEM_EMBEDDINGS_MODEL", "fake-embed")
    monkeypatch.setenv("WOLFMEM_WATCHER_DEBOUNCE_MS", "50")
    vault = tmp_path / "daemon-vault"
    Memory(vault, hybrid_config).close()  # `wolfmem daemon --vault` runs only on an existing vault
    proc = subprocess.Popen([sys.executable, "-m", "wolfmem", "daemon", "--vault", str(vault)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ), cwd=REPO)
    try:
        wait_until(lambda: proc.poll() is not None or (vault / "episodes").is_dir(), timeout=30)
        write_episode(vault)
        with Memory(vault, replace(hybrid_config, vault=str(vault))) as memory:
            lines = {fact.text for fact in markdown.parse(EPISODE).facts}

            def embedded() -> bool:
                info = collect(memory)["embeddings"]
                return lines <= set(embed_server.texts) and info["embedded"] >= len(lines)

            wait_until(embedded, timeout=30)
            assert memory.search("charity event")[0].line == 4
            embed_server.down = True
            write_episode(vault, "# 2024-05-02\n\n## 10:00 — x\n- Melanie adopted a kitten\n", day="2024-05-02")
            wait_until(lambda: collect(memory)["embeddings"]["endpoint"] == "down", timeout=30)
            assert memory.search("kitten")[0].path == "episodes/2024-05-02.md"  # lexical meanwhile
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr


POOLED = (
    "# 2024-05-01\n\n## 10:00 — Plans\n"
    "- Caroline wrote the charity budget, the charity letters and the charity list\n"
    "- Melanie went to a charity gala downtown\n"
    "- Caroline painted the charity poster\n"
)


def _order(memory: Memory, text: str, rule: FusionRule | None = None) -> list[int]:
    with memory.index.snapshot():
        return [hit.line for hit in memory.hybrid.search(text, Filters(), 10, rule)]


def test_the_lexical_pool_is_re_ranked_by_fused_ranks(vault: Path, hybrid: Memory, config: Config) -> None:
    write_episode(vault, POOLED)
    with Memory(vault, config) as lexical:
        words = [hit.line for hit in lexical.search("charity event")]
    hybrid.sync()
    cosines = {line: sum(a * b for a, b in zip(embed(fact), embed("charity event"), strict=True))
               for line, fact in zip((4, 5, 6), POOLED.splitlines()[3:], strict=True)}
    by_meaning = sorted(words, key=lambda line: -cosines[line])
    assert words != by_meaning  # the case is one where the two rankings disagree
    assert _order(hybrid, "charity event", FusionRule(dense=0.0)) == words
    assert _order(hybrid, "charity event", FusionRule(dense=1.0)) == by_meaning
    # Only the first `pool` candidates are re-ranked; the rest keep their lexical place.
    assert _order(hybrid, "charity event", FusionRule(pool=1, dense=1.0)) == words
    with hybrid.index.snapshot():
        scores = [hit.score for hit in hybrid.hybrid.search("charity event", Filters(), 10, FusionRule(pool=2))]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 3  # one scale, past the pool too


def test_a_search_embeds_its_pool_once_and_the_background_pass_reuses_it(
    vault: Path, hybrid: Memory, embed_server
) -> None:
    write_episode(vault, POOLED)
    hybrid.sync()
    hybrid.search("charity event")
    first = embed_server.texts
    assert sorted(first) == sorted(["charity event", *(line[2:] for line in POOLED.splitlines()[3:])])
    hybrid.search("charity poster")  # the same pool: only the new query is sent
    assert embed_server.texts == [*first, "charity poster"]
    assert hybrid.hybrid.embed_all().embedded == 0  # the pool's vectors are the store's
    assert collect(hybrid)["embeddings"]["fell_back"] == 0


def test_a_search_that_falls_back_says_so_in_status(vault: Path, hybrid: Memory, embed_server) -> None:
    write_episode(vault, POOLED)
    hybrid.sync()
    hybrid.hybrid.settings = replace(hybrid.hybrid.settings, batch=1)  # one missing fact embedded per search
    hybrid.search("charity event")
    status = collect(hybrid)["embeddings"]
    assert status["fell_back"] == 1 and "2 of 3 candidates had no vector yet" in status["fell_back_last"]
    embed_server.down = True
    hits = hybrid.search("charity gala")
    assert hits and collect(hybrid)["embeddings"]["fell_back"] == 2
    assert "the query got no vector" in collect(hybrid)["embeddings"]["fell_back_last"]
    assert "2 searches fell back to lexical ranking" in render(collect(hybrid))


def test_a_query_of_dates_alone_keeps_the_listing_of_its_day(vault: Path, hybrid: Memory) -> None:
    write_episode(vault, "# 2024-05-01\n\n## 10:00 — Day\n- Caroline baked bread\n- Melanie swam\n"
                         "- Tom told me about it\n")
    hybrid.sync()
    hybrid.hybrid.embed_all()

    def lines(text: str, rule: FusionRule) -> list[int]:
        dates = query_dates.read(text, date(2024, 5, 3))
        with hybrid.index.snapshot():
            return [hit.line for hit in hybrid.hybrid.search(dates.text, Filters(), 10, rule, dates=dates)]

    # "what about me" holds no word wolfmem searches for, but the fake model embeds "about" and "me".
    assert lines("what about me on 1 May 2024?", FusionRule(dense=1.0)) == [4, 5, 6]  # the day, in order


def test_the_curated_facts_and_the_newest_days_are_embedded_first(vault: Path, hybrid: Memory, embed_server) -> None:
    for day in ("2024-05-01", "2024-06-10", "2024-05-20"):
        write_episode(vault, f"# {day}\n\n## 10:00 — Day\n- Caroline told a story on {day}\n", day=day)
    (vault / "knowledge/notes.md").write_text("# Notes\n\n- The boat is moored at pier nine\n", "utf-8")
    (vault / "knowledge/people.md").write_text("# People\n\n## Sarah\n- Sarah moved to Lisbon in spring\n", "utf-8")
    hybrid.sync()
    sent = len(embed_server.texts)
    hybrid.hybrid.embed_all()
    assert embed_server.texts[sent:] == [
        "Sarah moved to Lisbon in spring", "The boat is moored at pier nine", "Caroline told a story on 2024-06-10",
        "Caroline told a story on 2024-05-20", "Caroline told a story on 2024-05-01"]
