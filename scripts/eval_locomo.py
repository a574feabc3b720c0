"""Retrieval quality on LoCoMo: wolfmem's search against SQLite FTS5 and rank_bm25 on the same lines.

Usage: python scripts/eval_locomo.py DIR [--latency-facts N] [--show-misses] [--embeddings URL/MODEL]

DIR holds LoCoMo conversation files (`26.json`, ...). For each one a fresh vault gets one episode
bullet per dialog turn (`Speaker: text [image: caption]`) on the session's date, each category 1-4
question is asked through `Memory.search`, and recall@5, recall@10 and hit@10 of the evidence
dialog ids are reported, per conversation, per category and overall, as a markdown table.
Questions are asked the day after the conversation's last session, as a user would ask a vault
afterwards; the `dated` row holds the questions that name a date wolfmem recognises.

The ranking's neighbour and block rules are chosen by scripts/eval_rules.py (leave-one-benchmark-out
over LoCoMo and LongMemEval).

`--embeddings http://127.0.0.1:8000/v1/MODEL` also runs the hybrid search against that server (see
`hybrid_report`): it embeds each conversation, then picks the fusion weights by
leave-one-conversation-out cross-validation and reports the held-out recall per conversation.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import wolfmem
from wolfmem.core.tokens import STOP_WORDS, content_stems, tokens
from wolfmem.search import query_dates

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
K = 10
_SESSION = re.compile(r"^session_(\d+)$")


@dataclass(frozen=True)
class Turn:
    """One dialog turn as an episode line."""

    dia_id: str
    session: int
    when: datetime
    text: str


@dataclass(frozen=True)
class Question:
    """An answerable question and the dialog ids that answer it."""

    text: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class Conversation:
    """One LoCoMo conversation: its turns in order and its answerable questions."""

    name: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]

    @property
    def today(self) -> date:
        """The day the questions are asked: the day after the last session."""
        return self.turns[-1].when.date() + timedelta(days=1)

    def dated(self) -> list[Question]:
        """The questions that name a date wolfmem recognises."""
        return [q for q in self.questions if query_dates.read(q.text, self.today).phrases]


# -- loading ------------------------------------------------------------------
def session_time(value: str) -> datetime:
    """Parse LoCoMo's `1:56 pm on 8 May, 2023`."""
    return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y")


def turn_text(turn: dict) -> str:
    """The episode line of one dialog turn, on one line."""
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [image: {turn['blip_caption']}]"
    return " ".join(text.split())


def load(path: Path) -> Conversation:
    """Read one conversation file; drop category-5 questions and evidence ids that name no turn."""
    data = json.loads(path.read_text("utf-8"))
    data = data.get("conversation", data)  # the full release nests the dialog one level down
    turns = []
    numbers = sorted(int(m.group(1)) for key in data if (m := _SESSION.match(key)))
    for number in numbers:
        when = session_time(data[f"session_{number}_date_time"])
        turns.extend(Turn(t["dia_id"], number, when, turn_text(t)) for t in data[f"session_{number}"])
    known = {turn.dia_id for turn in turns}
    questions = []
    raw_qa = json.loads(path.read_text("utf-8")).get("qa", [])
    for qa in raw_qa:
        if qa["category"] not in CATEGORIES:
            continue
        # Some evidence is written "D8:6; D9:17" in one string.
        evidence = tuple(e for item in qa["evidence"] for e in re.split(r"[;,\s]+", item) if e in known)
        if evidence:
            questions.append(Question(qa["question"], evidence, qa["category"]))
    return Conversation(path.stem, tuple(turns), tuple(questions))


# -- the vault ----------------------------------------------------------------
def episode_files(turns: Sequence[Turn]) -> tuple[dict[str, str], dict[tuple[str, int], str]]:
    """Episode file texts by vault path, and which (path, line) holds which dialog id."""
    lines_by_file: dict[str, list[str]] = {}
    where: dict[tuple[str, int], str] = {}
    block = None
    for turn in turns:
        rel = f"episodes/{turn.when:%Y-%m-%d}.md"
        lines = lines_by_file.setdefault(rel, [f"# {turn.when:%Y-%m-%d}"])
        if (rel, turn.session) != block:  # a session past midnight goes on in the next day's episode
            block = (rel, turn.session)
            lines += ["", f"## {turn.when:%H:%M} — Session {turn.session}"]
        lines.append(f"- {turn.text}")
        where[(rel, len(lines))] = turn.dia_id
    return {rel: "\n".join(lines) + "\n" for rel, lines in lines_by_file.items()}, where


def build_vault(
    turns: Sequence[Turn], root: Path, config: wolfmem.Config | None = None
) -> tuple[wolfmem.Memory, dict[tuple[str, int], str]]:
    """A fresh synced vault under root holding the turns, watched; the caller closes the Memory.

    It watches as the daemon and the MCP server do, so a search's latency is theirs: without a watch,
    each search stats every file of the vault first (a one-shot CLI search's cost).
    """
    files, where = episode_files(turns)
    vault = root / "vault"
    memory = wolfmem.Memory(vault, config or wolfmem.Config(state_dir=str(root / "state")))
    for rel, text in files.items():
        (vault / rel).write_text(text, "utf-8")
    memory.sync()
    memory.watch()
    return memory, where


def conversations(folder: Path, work: Path, reader: Callable[[Path], Conversation] | None = None
                  ) -> Iterator[tuple[Conversation, wolfmem.Memory, dict[tuple[str, int], str]]]:
    """Each conversation of a folder (LoCoMo's layout, or what `reader` reads) with a synced Memory over its
    turns, closed when the next is asked for."""
    for path in sorted(folder.glob("*.json")):
        conversation = (reader or load)(path)
        memory, where = build_vault(conversation.turns, work / f"chat-{conversation.name}")
        try:
            yield conversation, memory, where
        finally:
            memory.close()


# -- systems ------------------------------------------------------------------
Ranker = Callable[[str], list[str]]


def wolfmem_ranker(memory: wolfmem.Memory, where: dict[tuple[str, int], str], today: date) -> Ranker:
    """Dialog ids of Memory.search's top K hits, asked on `today` (relative dates count from it)."""

    def rank(question: str) -> list[str]:
        hits = memory.search(question, limit=K, today=today)
        return [where.get((hit.path, hit.line), "?") for hit in hits]

    return rank


def _words(text: str) -> list[str]:
    return [w for w in tokens(text) if w not in STOP_WORDS]


def fts5_ranker(turns: Sequence[Turn]) -> Ranker:
    """SQLite FTS5 (porter unicode61): the question's non-stop words OR-ed, ranked by bm25()."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(dia_id UNINDEXED, text, tokenize='porter unicode61')")
    db.executemany("INSERT INTO t VALUES (?, ?)", [(turn.dia_id, turn.text) for turn in turns])

    def rank(question: str) -> list[str]:
        words = {w.replace('"', "") for w in _words(question)}
        if not words:
            return []
        match = " OR ".join(f'"{w}"' for w in sorted(words))
        rows = db.execute("SELECT dia_id FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (match, K))
        return [row[0] for row in rows]

    return rank


def bm25_ranker(turns: Sequence[Turn]) -> Ranker:
    """rank_bm25's BM25Okapi over Porter stems without stop words."""
    from rank_bm25 import BM25Okapi

    ids = [turn.dia_id for turn in turns]
    model = BM25Okapi([content_stems(turn.text) or ["_"] for turn in turns])

    def rank(question: str) -> list[str]:
        scores = model.get_scores(content_stems(question))
        best = sorted(range(len(ids)), key=lambda i: -scores[i])[:K]
        return [ids[i] for i in best if scores[i] > 0]

    return rank


# -- scoring ------------------------------------------------------------------
def recall(ranked: Sequence[str], evidence: Iterable[str], k: int) -> float:
    """The share of the evidence ids found in the first k ranked ids."""
    wanted = set(evidence)
    return len(wanted & set(ranked[:k])) / len(wanted)


@dataclass
class Tally:
    """Per-question scores of one system on a set of questions."""

    r5: list[float] = field(default_factory=list)
    r10: list[float] = field(default_factory=list)
    hit10: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    def add(self, ranked: Sequence[str], evidence: Sequence[str], seconds: float) -> None:
        """Score one question's ranking."""
        self.r5.append(recall(ranked, evidence, 5))
        self.r10.append(recall(ranked, evidence, 10))
        self.hit10.append(1.0 if recall(ranked, evidence, 10) > 0 else 0.0)
        self.seconds.append(seconds)

    def extend(self, other: Tally) -> None:
        """Fold another tally into this one."""
        for name in ("r5", "r10", "hit10", "seconds"):
            getattr(self, name).extend(getattr(other, name))

    def means(self) -> tuple[float, float, float]:
        """Mean recall@5, recall@10 and hit@10."""
        return tuple(statistics.fmean(v) if v else 0.0 for v in (self.r5, self.r10, self.hit10))

    def latency_ms(self) -> tuple[float, float]:
        """p50 and p95 of the per-question search time, in milliseconds."""
        if not self.seconds:
            return 0.0, 0.0
        ordered = sorted(self.seconds)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        return statistics.median(ordered) * 1000, p95 * 1000


def ask(rank: Ranker, questions: Sequence[Question], misses: list | None = None) -> dict[int, Tally]:
    """Ask every question; tallies by category."""
    tallies: dict[int, Tally] = defaultdict(Tally)
    for question in questions:
        started = time.perf_counter()
        ranked = rank(question.text)
        elapsed = time.perf_counter() - started
        tallies[question.category].add(ranked, question.evidence, elapsed)
        if misses is not None and recall(ranked, question.evidence, K) < 1:
            misses.append((question, ranked))
    return tallies


SYSTEMS = ("wolfmem", "fts5", "bm25okapi")


def evaluate(
    conversation: Conversation, work: Path, misses: list | None = None
) -> tuple[dict[str, dict[int, Tally]], dict[str, Tally]]:
    """Tallies by system and category for one conversation, and by system on its dated questions."""
    memory, where = build_vault(conversation.turns, work)
    dated = conversation.dated()
    rankers: dict[str, Ranker] = {}
    try:
        memory.search("warm up the searcher", limit=1)
        rankers["wolfmem"] = wolfmem_ranker(memory, where, conversation.today)
        results = {"wolfmem": ask(rankers["wolfmem"], conversation.questions, misses)}
        dated_tallies = {"wolfmem": total(ask(rankers["wolfmem"], dated))}
    finally:
        memory.close()
    for system, rank in (("fts5", fts5_ranker(conversation.turns)), ("bm25okapi", bm25_ranker(conversation.turns))):
        results[system] = ask(rank, conversation.questions)
        dated_tallies[system] = total(ask(rank, dated))
    return results, dated_tallies


def total(tallies: dict[int, Tally]) -> Tally:
    """One tally of all categories."""
    whole = Tally()
    for tally in tallies.values():
        whole.extend(tally)
    return whole


def latency_on_large_vault(conversations: Sequence[Conversation], facts: int, work: Path) -> Tally:
    """Search latency on a vault of about `facts` lines: the turns repeated on shifted years."""
    turns: list[Turn] = []
    copy = 0
    while len(turns) < facts:
        for conversation in conversations:
            for turn in conversation.turns:
                when = turn.when.replace(year=turn.when.year + copy)
                turns.append(Turn(f"{copy}:{turn.dia_id}", turn.session + 100 * copy, when, turn.text))
        copy += 1
    memory, _ = build_vault(turns[:facts], work)
    tally = Tally()
    try:
        memory.search("warm up the searcher", limit=1)
        for conversation in conversations:
            for question in conversation.questions:
                started = time.perf_counter()
                memory.search(question.text, limit=K)
                tally.seconds.append(time.perf_counter() - started)
    finally:
        memory.close()
    return tally


# -- hybrid (embeddings) --------------------------------------------------------
DENSE_WEIGHTS = tuple(round(0.1 * n, 1) for n in range(11))
POOLS = (10, 20, 30, 50)


def hybrid_recall(
    conversation: Conversation, work: Path, config: wolfmem.Config
) -> tuple[dict[tuple[float, float], Tally], str]:
    """recall tallies of Memory's hybrid ranking for every (dense weight, pool size), and an embedding note."""
    from wolfmem.search.schema import Filters
    from wolfmem.semantic.fusion import DEFAULT_RULE, FusionRule

    files, where = episode_files(conversation.turns)
    vault = work / "vault"
    memory = wolfmem.Memory(vault, config)
    try:
        for rel, text in files.items():
            (vault / rel).write_text(text, "utf-8")
        memory.sync()
        assert memory.hybrid is not None
        started = time.perf_counter()
        report = memory.hybrid.embed_all()
        seconds = time.perf_counter() - started
        note = f"conv {conversation.name}: embedded {report.embedded} lines in {seconds:.1f} s " \
               f"({report.embedded / seconds:.0f} lines/s)"
        tallies: dict[tuple[float, float], Tally] = {}
        with memory.index.snapshot():
            for dense in DENSE_WEIGHTS:
                for pool in POOLS:
                    rule = FusionRule(pool, dense, DEFAULT_RULE.constant)

                    def rank(question: str, rule: FusionRule = rule) -> list[str]:
                        # As Memory.search asks: the dates read from the question, relative to its day.
                        dates = query_dates.read(question, conversation.today)
                        hits = memory.hybrid.search(dates.text, Filters(), K, rule, dates=dates)
                        return [where.get((hit.path, hit.line), "?") for hit in hits]

                    tally = Tally()
                    for category_tally in ask(rank, conversation.questions).values():
                        tally.extend(category_tally)
                    tallies[(dense, pool)] = tally
    finally:
        memory.close()
    return tallies, note


def hybrid_report(conversations: Sequence[Conversation], spec: str, query_prefix: str, document_prefix: str) -> str:
    """Leave-one-conversation-out choice of the dense weight and pool size, and held-out recall per conversation."""
    base_url, _, model = spec.rpartition("/")
    if not base_url or not model:
        raise SystemExit("--embeddings wants URL/MODEL, e.g. http://127.0.0.1:8000/v1/multilingual-e5-small")
    results: dict[str, dict[tuple[float, float], Tally]] = {}
    notes = []
    with tempfile.TemporaryDirectory(prefix="wolfmem-hybrid-") as tmp:
        for conversation in conversations:
            work = Path(tmp) / conversation.name
            config = wolfmem.Config(state_dir=str(work / "state"), embeddings_base_url=base_url,
                                    embeddings_model=model, embeddings_query_prefix=query_prefix,
                                    embeddings_document_prefix=document_prefix)
            results[conversation.name], note = hybrid_recall(conversation, work, config)
            notes.append(note)
    out = ["", f"## hybrid search with {model} at {base_url}", "", *notes, "",
           "| held-out conv | chosen on the others (dense weight, pool) | lexical r@10 | hybrid r@5 | "
           "hybrid r@10 | hybrid hit@10 |", "|---|---|---:|---:|---:|---:|"]
    names = list(results)
    for held_out in names:
        others = [name for name in names if name != held_out] or [held_out]

        def mean_r10(weights: tuple[float, int], others: list[str] = others) -> float:
            pooled = Tally()
            for name in others:
                pooled.extend(results[name][weights])
            return pooled.means()[1]

        chosen = max(results[held_out], key=lambda w: (round(mean_r10(w), 4), -w[0]))
        r5, r10, hit = results[held_out][chosen].means()
        lexical = results[held_out][(0.0, POOLS[0])].means()[1]
        out.append(f"| {held_out} | {chosen} | {lexical:.3f} | {r5:.3f} | {r10:.3f} | {hit:.3f} |")
    out += ["", "recall@10 of every pair (rows: dense weight; columns: pool size), all conversations:", "",
            "| dense \\ pool | " + " | ".join(str(p) for p in POOLS) + " |",
            "|---|" + "---:|" * len(POOLS)]
    for dense in DENSE_WEIGHTS:
        cells = []
        for pool in POOLS:
            pooled = Tally()
            for name in names:
                pooled.extend(results[name][(dense, pool)])
            cells.append(f"{pooled.means()[1]:.3f}")
        out.append(f"| {dense} | " + " | ".join(cells) + " |")
    return "\n".join(out)


# -- report -------------------------------------------------------------------
def table(rows: list[tuple[str, str, Tally]]) -> str:
    """A markdown table of (scope, system, tally) rows."""
    out = [
        "| scope | system | questions | recall@5 | recall@10 | hit@10 | p50 ms | p95 ms |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for scope, system, tally in rows:
        r5, r10, hit = tally.means()
        p50, p95 = tally.latency_ms()
        out.append(
            f"| {scope} | {system} | {len(tally.r10)} | {r5:.3f} | {r10:.3f} | {hit:.3f} | {p50:.2f} | {p95:.2f} |"
        )
    return "\n".join(out)


def json_files(parser: argparse.ArgumentParser, folder: Path) -> list[Path]:
    """The benchmark's .json files in a folder (a usage error if none), with wolfmem's new-index warnings off."""
    logging.getLogger("wolfmem").setLevel(logging.ERROR)  # every fresh vault warns that its index is new
    paths = sorted(folder.glob("*.json"))
    if not paths:
        parser.error(f"no .json files in {folder}")
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, help="folder with LoCoMo conversation json files")
    parser.add_argument("--latency-facts", type=int, default=10_000,
                        help="also time wolfmem search on a vault of this many facts (0: skip)")
    parser.add_argument("--show-misses", action="store_true", help="print wolfmem's incomplete answers")
    parser.add_argument("--embeddings", metavar="URL/MODEL",
                        help="also evaluate hybrid search with this OpenAI-compatible embeddings server and model")
    parser.add_argument("--query-prefix", default="", help="embeddings.query_prefix for --embeddings")
    parser.add_argument("--document-prefix", default="", help="embeddings.document_prefix for --embeddings")
    args = parser.parse_args(argv)
    paths = json_files(parser, args.dir)
    started = time.perf_counter()
    conversations = [load(path) for path in paths]
    overall = {system: Tally() for system in SYSTEMS}
    by_category = {(system, c): Tally() for system in SYSTEMS for c in CATEGORIES}
    dated = {system: Tally() for system in SYSTEMS}
    rows: list[tuple[str, str, Tally]] = []
    misses: list | None = [] if args.show_misses else None
    with tempfile.TemporaryDirectory(prefix="wolfmem-locomo-") as tmp:
        for conversation in conversations:
            results, dated_results = evaluate(conversation, Path(tmp) / conversation.name, misses)
            for system in SYSTEMS:
                dated[system].extend(dated_results[system])
                conv_tally = Tally()
                for category, tally in results[system].items():
                    conv_tally.extend(tally)
                    by_category[(system, category)].extend(tally)
                overall[system].extend(conv_tally)
                rows.append((f"conv {conversation.name}", system, conv_tally))
        for category, name in CATEGORIES.items():
            rows.extend((f"cat {category} {name}", s, by_category[(s, category)]) for s in SYSTEMS)
        rows.extend(("dated", s, dated[s]) for s in SYSTEMS)
        rows.extend(("**overall**", s, overall[s]) for s in SYSTEMS)
        print(table(rows))
        if args.latency_facts:
            tally = latency_on_large_vault(conversations, args.latency_facts, Path(tmp) / "large")
            p50, p95 = tally.latency_ms()
            print(f"\nwolfmem search on a {args.latency_facts:,}-fact vault: "
                  f"p50 {p50:.2f} ms, p95 {p95:.2f} ms ({len(tally.seconds)} questions)")
    if args.embeddings:
        print(hybrid_report(conversations, args.embeddings, args.query_prefix, args.document_prefix))
    if misses:
        print("\n## wolfmem misses")
        for question, ranked in misses:
            print(f"- [{question.category}] {question.text} want {list(question.evidence)} got {ranked}")
    print(f"\ntotal {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
