"""Retrieval quality on REALTALK: wolfmem's search against SQLite FTS5 and rank_bm25 on the same lines.

Usage: python scripts/eval_realtalk.py DIR

DIR holds REALTALK chats (`Chat_1_Emi_Elise.json`, ...; Lee et al. 2025, 21 days of real messaging
between two people, in LoCoMo's layout: `session_N` turns with `dia_id`, and `qa` with `question`,
`evidence` dia ids and `category` 1 multi-hop, 2 temporal, 3 commonsense). Each message carries its
own time (`29.12.2023, 22:42:04`), so a session that runs past midnight continues in the next day's
episode, as a daily log written live would. Everything else is scripts/eval_locomo.py's: one episode
bullet per message (`Speaker: text`), each question asked the day after the last message, recall@5,
recall@10 and hit@10 of the evidence per chat, per category and overall.

No rule or weight was chosen on REALTALK: it is the held-out benchmark of issue 27.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval_locomo import Conversation, Question, Tally, Turn, evaluate, json_files, table

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "commonsense"}
SYSTEMS = ("wolfmem", "fts5", "bm25okapi")
_SESSION = re.compile(r"^session_(\d+)$")


def message_time(value: str) -> datetime:
    """Parse REALTALK's `29.12.2023, 22:42:04`."""
    return datetime.strptime(value.strip(), "%d.%m.%Y, %H:%M:%S")


def load(path: Path) -> Conversation:
    """Read one chat; evidence ids that name no message are dropped, and questions left with none."""
    data = json.loads(path.read_text("utf-8"))
    numbers = sorted(int(m.group(1)) for key in data if (m := _SESSION.match(key)))
    turns = [
        Turn(message["dia_id"], number, message_time(message["date_time"]),
             " ".join(f"{message['speaker']}: {message['clean_text']}".split()))
        for number in numbers
        for message in data[f"session_{number}"]
    ]
    known = {turn.dia_id for turn in turns}
    questions = []
    for qa in data.get("qa", []):
        evidence = tuple(e for item in qa.get("evidence", []) for e in re.split(r"[;,\s]+", item) if e in known)
        if qa.get("category") in CATEGORIES and evidence:
            questions.append(Question(qa["question"], evidence, qa["category"]))
    return Conversation(path.stem, tuple(turns), tuple(questions))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, help="folder with REALTALK chat json files")
    args = parser.parse_args(argv)
    paths = json_files(parser, args.dir)
    started = time.perf_counter()
    overall = {system: Tally() for system in SYSTEMS}
    by_category = {(system, c): Tally() for system in SYSTEMS for c in CATEGORIES}
    rows: list[tuple[str, str, Tally]] = []
    with tempfile.TemporaryDirectory(prefix="wolfmem-realtalk-") as tmp:
        for path in paths:
            chat = load(path)
            results, _ = evaluate(chat, Path(tmp) / chat.name)
            for system in SYSTEMS:
                whole = Tally()
                for category, tally in results[system].items():
                    whole.extend(tally)
                    by_category[(system, category)].extend(tally)
                overall[system].extend(whole)
                rows.append((chat.name, system, whole))
    for category, name in CATEGORIES.items():
        rows.extend((f"cat {category} {name}", s, by_category[(s, category)]) for s in SYSTEMS)
    rows.extend(("**overall**", s, overall[s]) for s in SYSTEMS)
    print(table(rows))
    print(f"\ntotal {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
