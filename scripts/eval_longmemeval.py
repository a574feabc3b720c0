"""Retrieval quality on LongMemEval: wolfmem's search against SQLite FTS5 and rank_bm25 on the same lines.

Usage: python scripts/eval_longmemeval.py DIR [--limit N] [--show-misses]

DIR holds LongMemEval questions, one JSON file each (`question`, `question_type`, `question_date`,
`haystack_dates`, `haystack_sessions` of `role`/`content` turns, `has_answer` on the turns that
answer). For each question a fresh vault gets its haystack: each session, in date order, as a
`## HH:MM — Session N` block of `User:` / `Assistant:` lines in the episode of its day. The question
is asked through `Memory.search` with `today` = its question date; the evidence is the `has_answer`
turns. Reported as markdown: recall@5, recall@10 and hit@10 per question type and overall, how
many sessions the top 10 spans (and how many of its slots the largest session takes), and for the
abstention questions (ids ending `_abs`, whose answer is not in the history) the share where a
system still returns a confident hit: a line holding at least half of the question's content words.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval_locomo import K, Ranker, Tally, Turn, bm25_ranker, build_vault, fts5_ranker, table, wolfmem_ranker

import wolfmem
from wolfmem.core.tokens import content_stems

SYSTEMS = ("wolfmem", "fts5", "bm25okapi")
# A LongMemEval day may hold a dozen long sessions; the default 512 kB cap would cut some away.
MAX_FILE_BYTES = 8_000_000


@dataclass(frozen=True)
class Item:
    """One LongMemEval question with its haystack as episode turns."""

    qid: str
    kind: str
    text: str
    today: date
    turns: tuple[Turn, ...]
    evidence: tuple[str, ...]

    @property
    def abstention(self) -> bool:
        """The answer is not in the history."""
        return self.qid.endswith("_abs")


def when(value: str) -> datetime:
    """Parse LongMemEval's `2023/05/30 (Tue) 17:51`."""
    day, _, clock = value.partition(") ")
    return datetime.strptime(f"{day.split(' (')[0]} {clock}", "%Y/%m/%d %H:%M")


def load(path: Path) -> Item:
    """Read one question file: its sessions in date order, one turn per line."""
    data = json.loads(path.read_text("utf-8"))
    sessions = sorted(zip(data["haystack_dates"], data["haystack_sessions"], strict=True),
                      key=lambda pair: when(pair[0]))
    turns, evidence = [], []
    for number, (stamp, session) in enumerate(sessions, 1):
        for position, turn in enumerate(session):
            dia_id = f"{number}:{position}"
            speaker = "User" if turn["role"] == "user" else "Assistant"
            turns.append(Turn(dia_id, number, when(stamp), " ".join(f"{speaker}: {turn['content']}".split())))
            if turn.get("has_answer"):
                evidence.append(dia_id)
    return Item(data["question_id"], data["question_type"], data["question"],
                when(data["question_date"]).date(), tuple(turns), tuple(evidence))


def confident(ranked_texts: Sequence[str], question: str) -> bool:
    """Whether a returned line holds at least half of the question's content words."""
    wanted = set(content_stems(question))
    if not wanted:
        return False
    return any(len(wanted & set(content_stems(text))) * 2 >= len(wanted) for text in ranked_texts)


@dataclass
class Spread:
    """How the top 10 is spread over sessions: sessions spanned, slots of the largest session."""

    sessions: list[int]
    largest: list[int]

    def add(self, ranked: Sequence[str]) -> None:
        """Count one ranking's sessions."""
        counts = Counter(dia_id.split(":")[0] for dia_id in ranked[:K] if dia_id != "?")
        self.sessions.append(len(counts))
        self.largest.append(max(counts.values(), default=0))


def haystacks(folder: Path, work: Path, limit: int = 0
              ) -> Iterator[tuple[Item, wolfmem.Memory, dict[tuple[str, int], str]]]:
    """Each question with evidence (the first `limit` files; 0: all) and a Memory over its haystack,
    closed when the next is asked for."""
    for path in sorted(folder.glob("*.json"))[: limit or None]:
        item = load(path)
        if not item.evidence:
            continue
        config = wolfmem.Config(state_dir=str(work / item.qid / "state"), index_max_file_bytes=MAX_FILE_BYTES)
        memory, where = build_vault(item.turns, work / item.qid, config)
        try:
            yield item, memory, where
        finally:
            memory.close()


def rankers(item: Item, work: Path) -> tuple[dict[str, Ranker], wolfmem.Memory]:
    """The three systems over one haystack; the caller closes the Memory."""
    config = wolfmem.Config(state_dir=str(work / "state"), index_max_file_bytes=MAX_FILE_BYTES)
    memory, where = build_vault(item.turns, work, config)
    memory.search("warm up the searcher", limit=1)
    return {"wolfmem": wolfmem_ranker(memory, where, item.today),
            "fts5": fts5_ranker(item.turns), "bm25okapi": bm25_ranker(item.turns)}, memory


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print markdown tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, help="folder with LongMemEval question json files")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions (0: all)")
    parser.add_argument("--show-misses", action="store_true", help="print wolfmem's incomplete answers")
    args = parser.parse_args(argv)
    logging.getLogger("wolfmem").setLevel(logging.ERROR)
    paths = sorted(args.dir.glob("*.json"))[: args.limit or None]
    if not paths:
        parser.error(f"no .json files in {args.dir}")
    started = time.perf_counter()
    by_kind: dict[tuple[str, str], Tally] = defaultdict(Tally)
    spread = {system: Spread([], []) for system in SYSTEMS}
    abstained: dict[str, list[bool]] = defaultdict(list)
    misses = []
    with tempfile.TemporaryDirectory(prefix="wolfmem-lme-") as tmp:
        for path in paths:
            item = load(path)
            texts = {turn.dia_id: turn.text for turn in item.turns}
            systems, memory = rankers(item, Path(tmp) / item.qid)
            try:
                for system, rank in systems.items():
                    began = time.perf_counter()
                    ranked = rank(item.text)
                    seconds = time.perf_counter() - began
                    spread[system].add(ranked)
                    if item.abstention:
                        abstained[system].append(confident([texts.get(i, "") for i in ranked], item.text))
                    if item.evidence:
                        by_kind[(item.kind, system)].add(ranked, item.evidence, seconds)
                        if system == "wolfmem" and set(item.evidence) - set(ranked):
                            misses.append((item, ranked))
            finally:
                memory.close()
    kinds = sorted({kind for kind, _ in by_kind})
    rows = [(kind, system, by_kind[(kind, system)]) for kind in kinds for system in SYSTEMS]
    for system in SYSTEMS:
        whole = Tally()
        for kind in kinds:
            whole.extend(by_kind[(kind, system)])
        rows.append(("**overall**", system, whole))
    print(table(rows))
    print("\n| system | sessions in top 10 | slots of the largest session | "
          "abstention questions with a confident hit |")
    print("|---|---:|---:|---:|")
    for system in SYSTEMS:
        share = statistics.fmean(abstained[system]) if abstained[system] else 0.0
        print(f"| {system} | {statistics.fmean(spread[system].sessions):.2f} | "
              f"{statistics.fmean(spread[system].largest):.2f} | {share:.2f} ({len(abstained[system])}) |")
    if args.show_misses:
        print("\n## wolfmem misses")
        for item, ranked in misses:
            print(f"- [{item.kind}] {item.text} want {list(item.evidence)} got {ranked}")
    print(f"\ntotal {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
