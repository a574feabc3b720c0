"""A script that edits vault files the ways editors do and waits after each write (tests and bench).

Run as `python -c EDITS <vault> <rounds>`: for each round it writes "round<n>zq" into one of three
knowledge files — in place, by temp file and rename, or by appending — prints the round number once
the write has returned, and waits for a line on stdin before the next one.
"""

EDITS = """
import os, sys
from pathlib import Path
root, rounds = Path(sys.argv[1]), int(sys.argv[2])
for n in range(rounds):
    path = root / "knowledge" / f"loop-{n % 3}.md"
    text = f"- marker round{n}zq was written\\n"
    if n % 3 == 0:
        path.write_text(text, "utf-8")  # in place
    elif n % 3 == 1:
        tmp = path.with_name(f".{path.name}.tmp")  # temp file and rename, as most editors save
        tmp.write_text(text, "utf-8")
        os.replace(tmp, path)
    else:
        with open(path, "a", encoding="utf-8") as handle:  # append to what is there
            handle.write(text)
    print(n, flush=True)
    sys.stdin.readline()
"""
