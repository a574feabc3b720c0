"""Time the offline curator (and the validation of its rewrite) on one large curated file.

    .venv/bin/python scripts/bench_offline.py --lines 1000,10000

The file is the hard case for pairwise comparison: lines of one shape ("Name verb adjective noun
…") built from a small vocabulary, so most pairs share several words; 5% exact duplicates, 5%
paraphrases (the same words in another order, which `relate` calls duplicates), and a tenth of
the lines in `## Unfiled`, each naming one person's section.
"""

from __future__ import annotations

import argparse
import random
import time

from wolfmem.core import markdown
from wolfmem.curation.contract import FileInput
from wolfmem.curation.evidence import Safeguards
from wolfmem.curation.offline import tidy
from wolfmem.curation.validate import validate

NAMES = [f"Person{chr(65 + i // 26)}{chr(97 + i % 26)}" for i in range(40)]
VERBS = "likes prefers enjoys avoids collects paints studies repairs sells buys".split()
ADJECTIVES = """red green blue old new small large quiet loud warm cold bright dark soft hard smooth rough
fresh stale heavy light sweet sour""".split()
NOUNS = """apples boats chairs drums engines fiddles gardens hats inks jackets kettles lamps maps nets
ovens pianos quilts rugs sails tables umbrellas vases wagons yarns zithers books clocks doors fans""".split()


def make_file(lines: int, seed: int = 7) -> str:
    """A people file of about `lines` fact lines with duplicates, paraphrases and unfiled facts."""
    rng = random.Random(seed)
    by_person: dict[str, list[str]] = {name: [] for name in NAMES}
    unfiled: list[str] = []
    made: list[str] = []
    for _ in range(lines):
        roll = rng.random()
        if made and roll < 0.05:
            fact = rng.choice(made)  # an exact duplicate
        elif made and roll < 0.10:
            words = rng.choice(made).rstrip(".").split(" ")
            fact = " ".join([words[0], *reversed(words[1:])]) + "."  # a paraphrase: same words, other order
        else:
            fact = (f"{rng.choice(NAMES)} {rng.choice(VERBS)} {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)} "
                    f"and {rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}.")
        made.append(fact)
        if rng.random() < 0.1:
            unfiled.append(fact)
        else:
            by_person[fact.split(" ", 1)[0]].append(fact)
    parts = ["# People", ""]
    for name, facts in by_person.items():
        parts += [f"## {name}", *(f"- {fact}" for fact in facts), ""]
    parts += ["## Unfiled", *(f"- {fact}" for fact in unfiled)]
    return "\n".join(parts) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", default="1000,10000", help="comma-separated fact-line counts")
    args = parser.parse_args()
    print("| lines | facts | tidy (s) | validate (s) | merged | filed |")
    print("|---:|---:|---:|---:|---:|---:|")
    for count in (int(n) for n in args.lines.split(",")):
        text = make_file(count)
        facts = len(markdown.parse(text).facts)
        started = time.perf_counter()
        new, changes = tidy(FileInput("knowledge/people.md", text))
        tidied = time.perf_counter() - started
        started = time.perf_counter()
        verdict = validate(text, new, changes, hand_lines=set(), title="People", guards=Safeguards(budget=False))
        checked = time.perf_counter() - started
        assert verdict.ok, verdict.reasons[:3]
        kinds = [change.kind for change in changes]
        print(f"| {count} | {facts} | {tidied:.2f} | {checked:.2f} "
              f"| {kinds.count('merged')} | {kinds.count('filed')} |")


if __name__ == "__main__":
    main()
