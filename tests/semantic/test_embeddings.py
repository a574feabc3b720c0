"""The embeddings client (real openai client, fake server), the vector store, the dense view and fusion."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fakeembed import FakeEmbed, embed

from wolfmem.config import Config, embeddings_api_key, load_config
from wolfmem.llm.embeddings import (
    EmbeddingClient,
    EmbeddingSettings,
    EmbeddingsUnavailable,
)
from wolfmem.semantic.dense import DenseView
from wolfmem.semantic.fusion import neighbour_scores, rank_fuse
from wolfmem.semantic.store import VectorSpaceMismatch, VectorStore

REPO = Path(__file__).resolve().parents[2]


def settings(server: FakeEmbed, **extra) -> EmbeddingSettings:
    values = dict(base_url=server.base_url, model="fake-embed", api_key="sk-test-123456", timeout=5.0)
    values.update(extra)
    return EmbeddingSettings(**values)


# -- settings -----------------------------------------------------------------------
def test_embeddings_settings_come_from_env_and_the_key_variable_wins():
    config = load_config(environ={"WOLFMEM_EMBEDDINGS_MODEL": "nomic-embed-text",
                                  "WOLFMEM_EMBEDDINGS_BASE_URL": "http://localhost:11434/v1",
                                  "WOLFMEM_EMBEDDINGS_BATCH": "16"}, config_file=Path("/nonexistent"))
    assert (config.embeddings_model, config.embeddings_base_url, config.embeddings_batch) == (
        "nomic-embed-text", "http://localhost:11434/v1", 16)
    named = Config(embeddings_api_key_env="MY_EMBED_KEY")
    assert embeddings_api_key(named, {"MY_EMBED_KEY": "k1"}) == "k1"
    assert embeddings_api_key(named, {"MY_EMBED_KEY": "k1", "WOLFMEM_EMBEDDINGS_API_KEY": "k2"}) == "k2"
    assert "k2" not in repr(EmbeddingSettings.from_config(named))


def test_the_vector_space_changes_with_model_endpoint_or_prefix(embed_server):
    base = settings(embed_server)
    assert base.identity == settings(embed_server).identity
    assert base.identity != settings(embed_server, model="other").identity
    assert base.identity != settings(embed_server, query_prefix="query: ").identity
    assert base.identity.startswith("fake-embed-")


# -- client ---------------------------------------------------------------------------
def test_client_returns_unit_vectors_in_input_order_with_prefixes(embed_server):
    client = EmbeddingClient(settings(embed_server, document_prefix="passage: ", query_prefix="query: "))
    try:
        texts = ["Sarah adopted a kitten", "the charity gala", "deploys run on Fridays"]
        matrix = client.embed(texts, "document")
        client.embed(["a cat"], "query")
    finally:
        client.close()
    # The fake answers in reverse order; the client must restore the input order.
    assert np.allclose(matrix, np.array([embed("passage: " + t) for t in texts]), atol=1e-6)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0)
    assert embed_server.texts[-1] == "query: a cat"
    assert embed_server.headers[-1]["authorization"] == "Bearer sk-test-123456"


def test_client_errors_say_what_failed(embed_server):
    client = EmbeddingClient(settings(embed_server))
    embed_server.down = True
    with pytest.raises(EmbeddingsUnavailable, match="HTTP 503"):
        client.embed(["x"], "query")
    client.close()
    dead = EmbeddingClient(EmbeddingSettings("http://127.0.0.1:9/v1", "m", None, timeout=1.0))
    with pytest.raises(EmbeddingsUnavailable, match="cannot reach the embeddings endpoint"):
        dead.embed(["x"], "query")
    dead.close()
    with pytest.raises(EmbeddingsUnavailable, match="no embeddings model"):
        EmbeddingClient(EmbeddingSettings(None, None, None))


def test_a_wrong_route_is_reported_with_a_hint(embed_server):
    client = EmbeddingClient(settings(embed_server, base_url=f"http://127.0.0.1:{embed_server.port}/v2"))
    with pytest.raises(EmbeddingsUnavailable, match=r"404.*base URL ends in /v1"):
        client.embed(["x"], "document")
    client.close()


# -- store ----------------------------------------------------------------------------------
def unit(rows: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    matrix = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_store_keeps_one_vector_per_key_across_reopening(tmp_path):
    store = VectorStore(tmp_path / "space")
    vectors = unit(3)
    assert store.add(["a", "b", "a"], vectors) == 2
    assert store.add(["b", "c"], unit(2, seed=1)) == 1
    assert store.missing(["a", "b", "c", "d"]) == {"d"}
    store.close()
    reopened = VectorStore(tmp_path / "space")
    rows = reopened.rows_of(["a", "b", "c"])
    matrix = reopened.matrix()
    assert matrix.shape == (3, 8)
    assert np.allclose(matrix[rows["a"]], vectors[0]) and np.allclose(matrix[rows["b"]], vectors[1])
    with pytest.raises(VectorSpaceMismatch, match="16-dimensional"):
        reopened.add(["z"], unit(1, dim=16))
    reopened.close()


def test_bytes_past_the_committed_rows_are_ignored_and_overwritten(tmp_path):
    """A writer that died after writing rows but before committing their keys leaves no trace."""
    store = VectorStore(tmp_path / "space")
    store.add(["a"], unit(1))
    with open(store.matrix_path, "ab") as handle:
        handle.write(b"\xff" * 8 * 4 * 3)  # three rows of garbage from a crashed writer
    assert store.matrix().shape == (1, 8)
    fresh = unit(1, seed=4)
    store.add(["b"], fresh)
    assert np.allclose(store.matrix()[store.rows_of(["b"])["b"]], fresh[0])
    store.close()


_WRITER = """
import sys
import numpy as np
from wolfmem.semantic.store import VectorStore
folder, worker = sys.argv[1], int(sys.argv[2])
store = VectorStore(__import__("pathlib").Path(folder))
for n in range(40):
    keys = [f"w{worker}-{n}-{k}" for k in range(3)] + [f"shared-{n}"]
    vectors = np.array([[worker, n, k, 1.0] for k in range(3)] + [[0.0, n, 0.0, 1.0]], dtype=np.float32)
    store.add(keys, vectors)
store.close()
"""


def test_concurrent_writer_processes_never_mix_up_rows(tmp_path):
    folder = tmp_path / "space"
    VectorStore(folder).close()
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(folder), str(w)], cwd=REPO) for w in (1, 2, 3)]
    assert all(proc.wait(timeout=120) == 0 for proc in procs)
    store = VectorStore(folder)
    keys = [f"w{w}-{n}-{k}" for w in (1, 2, 3) for n in range(40) for k in range(3)]
    rows = store.rows_of(keys + [f"shared-{n}" for n in range(40)])
    matrix = store.matrix()
    assert matrix.shape == (3 * 40 * 3 + 40, 4)  # each shared key stored once, whoever won
    for key in keys:
        worker, n, k = (int(part) for part in key[1:].split("-"))
        assert matrix[rows[key]].tolist() == [worker, n, k, 1.0]
    store.close()


def test_endpoint_state_is_shared_and_written_only_on_change(tmp_path):
    one, two = VectorStore(tmp_path / "s"), VectorStore(tmp_path / "s")
    assert one.endpoint().state == "unknown"
    one.note_endpoint("down", "connection refused")
    seen = two.endpoint()
    assert (seen.state, seen.error) == ("down", "connection refused")
    generation = two.generation()
    two.note_endpoint("down", "connection refused")
    assert one.endpoint().since == seen.since and two.generation() == generation
    one.close()
    two.close()


# -- dense view --------------------------------------------------------------------------
def test_dense_view_scores_lines_with_their_neighbours(tmp_path):
    store = VectorStore(tmp_path / "s")
    vectors = np.eye(4, dtype=np.float32)
    store.add(["k0", "k1", "k2", "k3"], vectors)
    # a.md: lines 1, 2 are neighbours; line 6 is past a heading; b.md line 1 is alone.
    store.set_layouts({"a.md": ("r1", [(1, "k0"), (2, "k1"), (6, "k2")]), "b.md": ("r1", [(1, "k3")])})
    view = DenseView(store)
    view.refresh()
    scores = view.scores(vectors[1], neighbour=0.5)
    assert view.score_at(scores, "a.md", 2, "k1") == pytest.approx(1.0)   # its neighbour k0 scores 0
    assert view.score_at(scores, "a.md", 1, "k0") == pytest.approx(0.5)   # half of its neighbour's 1.0
    assert view.score_at(scores, "a.md", 6, "k2") == pytest.approx(0.0)   # a heading separates it
    assert view.score_at(scores, "a.md", 2, "stale-key") is None          # lines shifted since
    top = view.top(scores, 2)
    assert [(hit.path, hit.line) for hit in top] == [("a.md", 2), ("a.md", 1)]
    assert [hit.path for hit in view.top(scores, 5, lambda path: path == "b.md")] == ["b.md"]
    store.set_layouts({"a.md": ("r2", [(3, "k1")])})
    view.refresh()
    assert view.size == 2 and view.top(view.scores(vectors[1], 0.0), 1)[0].line == 3
    store.close()


# -- fusion -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "cosines, prev, next_, part, expected",
    [
        ([0.2, 0.9, 0.1], [-1, 0, 1], [1, 2, -1], 0.5, [0.65, 0.9 + 0.1, 0.1 + 0.45]),
        ([0.4], [-1], [-1], 0.5, [0.6]),  # alone: its own cosine stands in for a neighbour's
        ([0.4, 0.8], [-1, 0], [1, -1], 0.0, [0.4, 0.8]),
    ],
)
def test_neighbour_scores(cosines, prev, next_, part, expected):
    got = neighbour_scores(np.array(cosines), np.array(prev), np.array(next_), part)
    assert got.tolist() == pytest.approx(expected)


def test_rank_fuse_weighs_the_two_ranks_and_a_missing_vector_keeps_its_lexical_rank():
    # Lexical order a, b, c; dense order c, a, b.
    dense = [0.5, 0.1, 0.9]
    assert [i for i, _ in rank_fuse(3, dense, 0.0, 20)] == [0, 1, 2]
    assert [i for i, _ in rank_fuse(3, dense, 1.0, 20)] == [2, 0, 1]
    fused = dict(rank_fuse(3, dense, 0.5, 1))
    assert fused[2] == pytest.approx(0.5 / 4 + 0.5 / 2)  # lexical rank 3, dense rank 1
    assert [i for i, _ in rank_fuse(3, dense, 0.5, 1)] == [0, 2, 1]
    # No vector for b: it takes its lexical rank 2 on the dense side too.
    assert dict(rank_fuse(3, [0.5, float("nan"), 0.9], 0.5, 1))[1] == pytest.approx(0.5 / 3 + 0.5 / 3)
    # A dense-only candidate after the pool has only the dense term.
    assert dict(rank_fuse(1, [0.1, 0.9], 0.5, 1))[1] == pytest.approx(0.5 / 2)
