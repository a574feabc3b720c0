"""Dense re-ranking of the lexical pool (issue 27): choose the pool size and fusion by leave-one-benchmark-out.

Usage: python scripts/eval_dense_pool.py LOCOMO_DIR LONGMEMEVAL_DIR --embeddings URL/MODEL [--pool 50]
       [--cache FILE] [--limit N] [--full-dense] [--cached-only] [--realtalk DIR] [--heldout DIR]

For every question of both benchmarks and each pool size K the lexical search (`Memory.search` with
limit K, the candidates `Hybrid.search` re-ranks) gives a pool of lines; each line and the question
are embedded once (vectors kept in --cache by model, kind and text, so a rerun asks the endpoint
nothing), the smaller pools first. Every variant re-ranks its pool: by cosine alone (dense-only
inside the pool), by weighted reciprocal-rank fusion (`fusion.rank_fuse`: weight w on the dense rank,
constant c) or by a min-max score mix with dense share w. The variant chosen on one benchmark is
scored on the other (lexical listed first, so a tie keeps the dense side off); with more than two
benchmarks a fold chooses on the mean of the others' means, so each counts once whatever its size.
The per-type table shows the shipped rule and each fold's choice, dated questions re-ranked as
`Hybrid.search` re-ranks them (the folds' table also gives each choice with them kept lexical).
`--realtalk` adds REALTALK's chats and `--heldout` more LoCoMo conversations (reported as "LoCoMo
held-out"). `--full-dense` also embeds every line of the conversation benchmarks (not LongMemEval's
haystacks): dense-only over the whole vault, and the pool joined with the whole vault's dense top K.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import logging
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import eval_locomo
import eval_longmemeval
import eval_realtalk
from eval_locomo import fts5_ranker, recall

import wolfmem
from wolfmem.llm.embeddings import EmbeddingClient, EmbeddingSettings
from wolfmem.search import query_dates
from wolfmem.semantic.fusion import DEFAULT_RULE, rank_fuse

KS = (10, 20, 30, 50)
RRF_C = (5, 10, 20, 60)
RRF_W = (0.3, 0.4, 0.5, 0.6, 0.7)
MIX_W = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@dataclass(frozen=True)
class Pool:
    """One lexical search's lines: dialog ids, texts and scores, best first."""

    ids: list[str]
    texts: list[str]
    scores: list[float]


@dataclass
class Asked:
    """One question: its lexical pool at each size (what Hybrid.search re-ranks), evidence and FTS5's ranking."""

    benchmark: str
    conversation: str  # the conversation's name (LoCoMo, REALTALK), "" for a LongMemEval haystack
    group: str
    text: str
    dated: bool
    evidence: tuple[str, ...]
    pools: dict[int, Pool]
    fts5: list[str]

    @property
    def lexical10(self) -> list[str]:
        """The lexical top 10 (the search without embeddings)."""
        return self.pools[10].ids


class Cache:
    """Vectors by (model, kind, text) digest in one SQLite file."""

    def __init__(self, path: Path, client: EmbeddingClient, model: str) -> None:
        self.db = sqlite3.connect(path)
        self.db.execute("CREATE TABLE IF NOT EXISTS v (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")
        self.client, self.model = client, model
        self.read: dict[str, np.ndarray] = {}

    def key(self, kind: str, text: str) -> str:
        """The digest a vector is kept under."""
        return hashlib.sha1(f"{self.model}\0{kind}\0{text}".encode()).hexdigest()

    def get(self, kind: str, text: str) -> np.ndarray | None:
        """A cached vector, or None (one read from the file per vector: the report asks for each many times)."""
        key = self.key(kind, text)
        if key not in self.read:
            row = self.db.execute("SELECT vec FROM v WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            self.read[key] = np.frombuffer(row[0], dtype=np.float32)
        return self.read[key]

    def fill(self, kind: str, texts: Sequence[str], batch: int = 16) -> None:
        """Embed the texts that have no vector yet, in order, committing each batch."""
        todo = list(dict.fromkeys(t for t in texts if self.get(kind, t) is None))
        started = time.perf_counter()
        for start in range(0, len(todo), batch):
            chunk = todo[start:start + batch]
            vectors = self.client.embed(chunk, "query" if kind == "query" else "document")
            rows = [(self.key(kind, t), v.astype(np.float32).tobytes()) for t, v in zip(chunk, vectors, strict=True)]
            self.db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)", rows)
            self.db.commit()
            print(f"  {kind}: {start + len(chunk)}/{len(todo)} embedded, {time.perf_counter() - started:.0f} s",
                  file=sys.stderr, flush=True)


def dated_query(text: str, today: date) -> bool:
    """Whether the query names a window or period, so Hybrid.search keeps it lexical."""
    dates = query_dates.read(text, today)
    return dates.window is not None or dates.period is not None


def pooled(memory: wolfmem.Memory, where: dict, text: str, today: object) -> dict[int, Pool]:
    """The lexical search at each pool size, as Hybrid.search runs it (query.run with limit K)."""
    pools = {}
    for size in KS:
        hits = memory.search(text, limit=size, today=today)
        pools[size] = Pool([where.get((h.path, h.line), "?") for h in hits], [h.text for h in hits],
                           [h.score for h in hits])
    return pools


def collect(chats: dict[str, Path], lme_dir: Path, limit: int, work: Path) -> tuple[list[Asked], dict]:
    """Every question's pool; also each conversation's lines by (benchmark, name), for dense over the whole vault.

    `chats` maps a benchmark's name to its folder: "REALTALK" is read as REALTALK, any other as LoCoMo.
    """
    asked: list[Asked] = []
    conversations = {}
    for bench, folder in chats.items():
        reader = eval_realtalk.load if bench == "REALTALK" else eval_locomo.load
        for conv, memory, where in eval_locomo.conversations(folder, work / bench.replace(" ", "-"), reader):
            conversations[(bench, conv.name)] = conv
            fts = fts5_ranker(conv.turns)
            names = eval_realtalk.CATEGORIES if bench == "REALTALK" else eval_locomo.CATEGORIES
            memory.search("warm up", limit=1)
            for q in conv.questions:
                asked.append(Asked(bench, conv.name, names[q.category], q.text, dated_query(q.text, conv.today),
                                   q.evidence, pooled(memory, where, q.text, conv.today), fts(q.text)))
    for item, memory, where in eval_longmemeval.haystacks(lme_dir, work, limit):
        dated = dated_query(item.text, item.today)
        asked.append(Asked("LongMemEval", "", item.kind, item.text, dated, item.evidence,
                           pooled(memory, where, item.text, item.today), fts5_ranker(item.turns)(item.text)))
    return asked, conversations


Variant = tuple[str, int, float, float]  # (kind, K, weight, constant)
SHIPPED: Variant = ("rrf", DEFAULT_RULE.pool, DEFAULT_RULE.dense, DEFAULT_RULE.constant)


def variants() -> list[Variant]:
    """Every re-ranking tried: dense-only, reciprocal-rank fusion, score mix, at each pool size."""
    out: list[Variant] = [("lexical", 10, 0.0, 0.0)]
    for k in KS:
        out.append(("rrf", k, 0.0, 10))  # the pool's own lexical order: what a larger lexical limit alone gives
        out.append(("dense", k, 1.0, 0.0))
        out += [("rrf", k, w, c) for w, c in itertools.product(RRF_W, RRF_C)]
        out += [("mix", k, w, 0.0) for w in MIX_W]
    return out


def rerank(a: Asked, query: np.ndarray, cache: Cache, v: Variant) -> list[str] | None:
    """The top 10 of one variant, or None when a line of its pool has no vector yet."""
    kind, k, weight, constant = v
    if kind == "lexical":
        return a.lexical10
    pool = a.pools[k]
    ids, lex = pool.ids, pool.scores
    vectors = [cache.get("doc", t) for t in pool.texts]
    if any(vec is None for vec in vectors):
        return None
    cos = [float(vec @ query) for vec in vectors]  # type: ignore[operator]
    if kind == "dense":
        order = sorted(range(len(ids)), key=lambda i: -cos[i])
    elif kind == "rrf":
        order = [i for i, _ in rank_fuse(len(ids), cos, weight, int(constant))]
    else:
        mix = [(1 - weight) * s + weight * c for s, c in zip(unit(lex), unit(cos), strict=True)]
        order = sorted(range(len(ids)), key=lambda i: -mix[i])
    return [ids[i] for i in order][:10]


def unit(values: list[float]) -> list[float]:
    """Min-max scaled to 0..1 (all 1 when equal)."""
    low, high = min(values, default=0.0), max(values, default=1.0)
    return [(v - low) / (high - low) if high > low else 1.0 for v in values]


def main(argv: Sequence[str] | None = None) -> int:
    """Collect pools, embed them, score every variant and print the folds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("locomo", type=Path)
    parser.add_argument("longmemeval", type=Path)
    parser.add_argument("--embeddings", required=True, metavar="URL/MODEL")
    parser.add_argument("--pool", type=int, choices=KS, default=max(KS), help="embed the pools up to this size")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/wolfmem-dense-cache.sqlite"))
    parser.add_argument("--limit", type=int, default=0, help="only the first N LongMemEval questions")
    parser.add_argument("--full-dense", action="store_true")
    parser.add_argument("--cached-only", action="store_true", help="embed nothing; score what the cache holds")
    parser.add_argument("--realtalk", type=Path, help="also a folder of REALTALK chats")
    parser.add_argument("--heldout", type=Path, help="also a folder of LoCoMo conversations held out from tuning")
    args = parser.parse_args(argv)
    logging.getLogger("wolfmem").setLevel(logging.ERROR)
    base_url, _, model = args.embeddings.rpartition("/")
    client = EmbeddingClient(EmbeddingSettings(base_url, model, None, timeout=600.0))
    cache = Cache(args.cache, client, model)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="wolfmem-densepool-") as tmp:
        chats = {"LoCoMo": args.locomo, "REALTALK": args.realtalk, "LoCoMo held-out": args.heldout}
        asked, conversations = collect({b: f for b, f in chats.items() if f}, args.longmemeval, args.limit, Path(tmp))
    print(f"collected {len(asked)} pools in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if args.cached_only:
        cache.fill = lambda *_a, **_k: None  # type: ignore[method-assign]
    cache.fill("query", [a.text for a in asked])
    if args.full_dense:
        cache.fill("doc", [t.text for c in conversations.values() for t in c.turns])
    for size in KS[: KS.index(args.pool) + 1]:
        cache.fill("doc", [t for a in asked for t in a.pools[size].texts])
    print(report(asked, cache, conversations if args.full_dense else {}))
    if args.full_dense:
        print("\n" + union_report(asked, cache, conversations))
    print(f"\ntotal {time.perf_counter() - started:.1f} s")
    return 0


def report(asked: list[Asked], cache: Cache, conversations: dict) -> str:
    """Markdown: per benchmark the folds, per type the chosen variants, and every variant's recall@10."""
    benches = sorted({a.benchmark for a in asked})
    per_q: dict[Variant, list[float | None]] = defaultdict(list)
    for a in asked:
        q = cache.get("query", a.text)
        assert q is not None
        for v in variants():
            top = rerank(a, q, cache, v)
            per_q[v].append(None if top is None else recall(top, a.evidence, 10))
    complete = [v for v in variants() if all(r is not None for r in per_q[v])]
    if len(complete) < 2:
        return "no pool has all its vectors yet"
    lexical = per_q[variants()[0]]
    extra = {"FTS5": [recall(a.fts5, a.evidence, 10) for a in asked]}
    if conversations:
        extra["dense, whole vault"] = [full_dense(a, cache, conversations) for a in asked]

    def mean(values: list, bench: str | None = None, group: str | None = None, dated: bool | None = None) -> float:
        picked = [v for v, a in zip(values, asked, strict=True) if v is not None and bench in (None, a.benchmark)
                  and group in (None, a.group) and dated in (None, a.dated)]
        return statistics.fmean(picked) if picked else float("nan")

    def dated_lexical(v: Variant) -> list[float | None]:
        """The variant with dated questions kept lexical, as Hybrid.search did before it re-ranked them too."""
        return [lex if a.dated else r for r, lex, a in zip(per_q[v], lexical, asked, strict=True)]

    out = ["| held-out | chosen on the other (kind, K, w, c) | lexical | FTS5 | dense in pool (same K) | "
           "chosen r@10 | chosen, dated lexical |", "|---|---|---:|---:|---:|---:|---:|"]
    chosen: dict[str, Variant] = {}
    fused = complete  # lexical first: a tie keeps the dense side off
    for held in benches:
        others = [b for b in benches if b != held]

        def there(v: Variant, others: list[str] = others) -> float:
            return round(statistics.fmean(mean(per_q[v], b) for b in others), 6)

        best = max(fused, key=there)
        chosen[held] = best
        dense = ("dense", best[1], 1.0, 0.0)
        out.append(f"| {held} | {best} ({there(best):.3f} there) | {mean(lexical, held):.3f} | "
                   f"{mean(extra['FTS5'], held):.3f} | {mean(per_q[dense], held):.3f} | "
                   f"{mean(per_q[best], held):.3f} | {mean(dated_lexical(best), held):.3f} |")
    both = max(fused, key=lambda v: round(statistics.fmean(mean(per_q[v], b) for b in benches), 6))
    out.append(f"\nbest over every benchmark (mean of means): {both}: "
               + ", ".join(f"{b} {mean(per_q[both], b):.3f}" for b in benches))
    columns = {"lexical": lexical, **extra, f"{SHIPPED} (shipped)": per_q[SHIPPED],
               f"dense in pool K={SHIPPED[1]}": per_q[("dense", SHIPPED[1], 1.0, 0.0)],
               f"{both} (best pooled)": per_q[both]}
    for held, v in chosen.items():
        columns[f"{v} (chosen without {held})"] = per_q[v]
    out += ["", "| benchmark: type (questions) | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    for bench in benches:
        for g in [*sorted({a.group for a in asked if a.benchmark == bench}), None]:
            n = sum(1 for a in asked if a.benchmark == bench and g in (None, a.group))
            cells = " | ".join(f"{mean(vals, bench, g):.3f}" for vals in columns.values())
            out.append(f"| {bench}: {g or '**overall**'} ({n}) | {cells} |")
        n = sum(1 for a in asked if a.benchmark == bench and a.dated)
        cells = " | ".join(f"{mean(vals, bench, dated=True):.3f}" for vals in columns.values())
        out.append(f"| {bench}: dated ({n}) | {cells} |")
    out += ["", "| kind | K | w | c | " + " | ".join(benches) + " | dated only: " + " | ".join(benches) + " |",
            "|---|---:|---:|---:|" + "---:|" * (2 * len(benches))]
    for v in complete:
        cells = [mean(per_q[v], b) for b in benches] + [mean(per_q[v], b, dated=True) for b in benches]
        out.append(f"| {v[0]} | {v[1]} | {v[2]} | {v[3]} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")
    left = sorted({v[1] for v in variants() if v not in complete})
    if left:
        out.append(f"\nleft out: pool sizes {left} (some pool line had no vector)")
    return "\n".join(out)


def union_report(asked: list[Asked], cache: Cache, conversations: dict) -> str:
    """Conversation benchmarks: RRF over the lexical pool alone, and over it joined with the whole vault's dense top K.

    With `credit` > 0 a line's dense score is its cosine plus that part of its best same-session neighbour's
    (up to two lines away), as the hybrid before the pool re-ranking scored it. Needs every line embedded.
    """
    benches = sorted({a.benchmark for a in asked if a.conversation})
    out = ["| K | w | c | credit | " + " | ".join(f"{b}: pool only | pool + dense top K" for b in benches) + " |",
           "|---:|---:|---:|---:|" + "---:|---:|" * len(benches)]
    parts = (0.0, 0.5, 0.75)
    dense = {}
    for a in asked:
        if a.conversation:
            conv = conversations[(a.benchmark, a.conversation)]
            cos = np.stack([cache.get("doc", t.text) for t in conv.turns]) @ cache.get("query", a.text)
            sessions = np.array([t.session for t in conv.turns])
            dense[id(a)] = (conv, {part: credited(sessions, cos, part) for part in parts})
    for k, w, c, part in itertools.product((30, 50), RRF_W, (10, 20), parts):
        cells = []
        for bench in benches:
            alone, joined = [], []
            for a in (a for a in asked if a.benchmark == bench):
                conv, scores = dense[id(a)]
                fused = rerank(a, cache.get("query", a.text), cache, ("rrf", k, w, c)) or []
                alone.append(recall(fused, a.evidence, 10))
                top = joined_top(a.pools[k].ids, conv, scores[part], k, w, c)
                joined.append(recall(top, a.evidence, 10))
            cells += [statistics.fmean(alone), statistics.fmean(joined)]
        out.append(f"| {k} | {w} | {c} | {part} | " + " | ".join(f"{v:.3f}" for v in cells) + " |")
    return "\n".join(out)


def credited(sessions: np.ndarray, cos: np.ndarray, part: float) -> np.ndarray:
    """Each line's cosine plus `part` of its best same-session neighbour's, up to two lines away."""
    if not part:
        return cos
    best = np.full(len(cos), -np.inf)
    for shift in (1, 2):
        same = sessions[shift:] == sessions[:-shift]  # line i and line i + shift share a session
        best[:-shift] = np.where(same, np.maximum(best[:-shift], cos[shift:]), best[:-shift])
        best[shift:] = np.where(same, np.maximum(best[shift:], cos[:-shift]), best[shift:])
    return cos + part * np.where(np.isfinite(best), best, 0.0)


def joined_top(pool: list[str], conv: eval_locomo.Conversation, scores: np.ndarray, k: int, w: float, c: float
               ) -> list[str]:
    """The top 10 of RRF over the lexical pool joined with the K lines of the best dense scores."""
    ids = [t.dia_id for t in conv.turns]
    by_id = dict(zip(ids, scores.tolist(), strict=True))
    lex_rank = {d: i + 1 for i, d in enumerate(pool)}
    candidates = list(dict.fromkeys(pool + [ids[i] for i in np.argsort(-scores, kind="stable")[:k]]))
    dense_rank = {d: i + 1 for i, d in enumerate(sorted(candidates, key=lambda d: -by_id.get(d, -1.0)))}
    fused = {d: ((1 - w) / (c + lex_rank[d]) if d in lex_rank else 0.0) + w / (c + dense_rank[d]) for d in candidates}
    return sorted(candidates, key=lambda d: -fused[d])[:10]


def full_dense(a: Asked, cache: Cache, conversations: dict) -> float | None:
    """recall@10 of cosine over every line of the conversation holding the question (None for LongMemEval)."""
    if not a.conversation:
        return None
    conv = conversations[(a.benchmark, a.conversation)]
    q = cache.get("query", a.text)
    vecs = np.stack([cache.get("doc", t.text) for t in conv.turns])
    best = np.argsort(-(vecs @ q), kind="stable")[:10]
    return recall([conv.turns[i].dia_id for i in best], a.evidence, 10)


if __name__ == "__main__":
    raise SystemExit(main())
