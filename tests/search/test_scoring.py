"""BM25F from cached posting arrays: the ranking Whoosh's matchers give, and a bounded cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from whoosh import query as wq

from wolfmem import Memory
from wolfmem.search import scoring
from wolfmem.search.schema import FIELD_WEIGHTS, Filters

WORDS = "tea kayak garden fence puppy river budget harbour depot station lamp".split()


@pytest.fixture
def filled(memory: Memory, vault: Path) -> Memory:
    """Two files written in two syncs (two segments), one of them then edited (deletions)."""
    lines = [f"- {WORDS[n % 11]} {WORDS[(n * 7) % 11]} and {WORDS[(n * 3) % 11]} note {n}" for n in range(60)]
    (vault / "episodes").mkdir(exist_ok=True)

    def write(day: str, bullets: list[str]) -> None:
        (vault / "episodes" / f"{day}.md").write_text(f"# {day}\n\n## 10:00 — Chat\n" + "\n".join(bullets) + "\n")
        memory.sync()

    write("2024-01-01", lines[:30])
    write("2024-01-02", lines[30:])
    write("2024-01-01", lines[:20])
    return memory


@pytest.mark.parametrize(
    "terms", [{"kayak": 1.0}, {"tea": 1.0, "garden": 0.5}, {"puppy": 0.7, "lamp": 1.0, "river": 0.2}]
)
def test_the_ranking_is_whooshs_own(filled: Memory, terms: dict[str, float]) -> None:
    index = filled.index
    ours = [(h.doc_id, round(h.score, 9)) for h in index.search(terms, Filters(), limit=15)]
    searcher = index._folder.current_searcher()
    tree = wq.Or([wq.Term(field, term, boost=weight * boost)
                  for term, boost in terms.items() for field, weight in FIELD_WEIGHTS.items()])
    theirs = [(r["doc_id"], round(r.score, 9)) for r in searcher.search(tree, limit=15, optimize=False)]
    assert ours == theirs and ours


def test_scores_kept_between_searches_follow_a_commit_that_moves_idf_and_lengths(filled: Memory, vault: Path
                                                                                  ) -> None:
    terms = {"tea": 1.0, "garden": 0.5}
    test_the_ranking_is_whooshs_own(filled, terms)  # the postings' scores are kept from here on
    longer = "".join(f"- tea with kettle spoon sugar lemon milk honey saucer bowl {n}\n" for n in range(9))
    (vault / "episodes" / "2024-01-03.md").write_text("# 2024-01-03\n\n## 10:00 — Chat\n" + longer)
    filled.sync()  # a new segment: more facts hold tea, and the text field's average length grows
    test_the_ranking_is_whooshs_own(filled, terms)


def test_deleted_facts_are_never_scored(filled: Memory) -> None:
    texts = [h.text for h in filled.index.search({"note": 1.0}, Filters(), limit=50)]
    assert len(texts) == 50 and not any(text.endswith(f"note {n}") for n in range(20, 30) for text in texts)


def test_the_cache_keeps_postings_within_its_budget(filled: Memory) -> None:
    cache = scoring.PostingCache(budget=12)
    for reader, _ in filled.index._folder.current_searcher().reader().leaf_readers():
        for word in WORDS:
            cache.postings(reader, "text", word)
    assert 0 < cache._size <= 12


def test_field_lengths_read_in_one_go_are_whooshs_own(filled: Memory) -> None:
    for reader, _ in filled.index._folder.current_searcher().reader().leaf_readers():
        for field in FIELD_WEIGHTS:
            codes = scoring.field_lengths(reader, field)
            assert len(codes) == reader.doc_count_all() > 0
            assert [scoring._BYTE_LENGTH[code] if code else None for code in codes] == [
                reader.doc_field_length(n, field) for n in range(reader.doc_count_all())]


def test_the_idf_counted_from_cached_postings_is_whooshs_to_the_bit(filled: Memory) -> None:
    searcher = filled.index._folder.current_searcher()
    assert searcher.reader().has_deletions()
    cache = scoring.PostingCache()
    for word in [*WORDS, "absent"]:
        for field in FIELD_WEIGHTS:
            ours = scoring._idf(searcher, cache, scoring.Clause(field, word, 1.0))
            assert ours == searcher.weighting.idf(searcher, field, word)


def test_frequencies_are_kept_in_the_smallest_type_that_gives_back_each_value() -> None:
    assert scoring._compact(np.array([1.0, 3.0, 255.0])).dtype == np.uint8
    assert scoring._compact(np.array([1.0, 256.0])).dtype == np.uint16
    for odd in ([1.0, 70000.0], [1.0, 2.5]):
        kept = scoring._compact(np.array(odd))
        assert kept.dtype == np.float64 and kept.tolist() == odd


def test_compact_postings_score_as_the_float_arrays_they_replace(filled: Memory) -> None:
    cache = scoring.PostingCache()
    for reader, _ in filled.index._folder.current_searcher().reader().leaf_readers():
        postings = cache.postings(reader, "text", "tea")
        assert postings.ids.dtype == np.int32 and postings.codes.dtype == np.uint8 and postings.tf.dtype == np.uint8
        tf, length = postings.tf.astype(np.float64), scoring._BYTE_LENGTH[postings.codes]
        wide = 1.3 * ((tf * 2.2) / (tf + 1.2 * (0.25 + 0.75 * length / 7.5)))
        assert postings.bm25(1.3, 7.5).tobytes() == wide.tobytes()


def test_a_common_terms_bonus_goes_to_exactly_the_chosen_documents_holding_it() -> None:
    rng = np.random.default_rng(5)
    for _ in range(500):
        postings = np.unique(rng.integers(0, 300, rng.integers(0, 40))).astype(np.int32)  # in document order
        chosen = rng.integers(0, 320, rng.integers(0, 35))
        assert (scoring._held(postings, chosen) == np.isin(chosen, postings)).all()
