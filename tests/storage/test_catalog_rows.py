"""The catalog writes only the rows that changed, and still ends up holding exactly the rows given."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from wolfmem.storage.catalog import Catalog, DocRow, ManifestEntry

ENTRY = ManifestEntry(1, 1, "r", 1)


def stored(path: Path, file: str) -> dict[str, DocRow]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT doc_id, line, digest FROM docs WHERE path = ?", (file,)).fetchall()
    return {row[0]: DocRow(*row) for row in rows}


def edited(rows: list[DocRow], rng: random.Random, step: int) -> list[DocRow]:
    """Insert, delete and rewrite a few lines, as an editor or a save would; later lines shift."""
    out = list(rows)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(out) + 1)
        kind = rng.choice(["insert", "delete", "rewrite"]) if out else "insert"
        if kind == "insert":
            out.insert(at, DocRow(f"new{step}.{at}.{rng.random()}", 0, "d"))
        elif kind == "delete" and at < len(out):
            del out[at]
        elif at < len(out):
            out[at] = DocRow(out[at].doc_id, 0, f"d{step}")
    return [DocRow(row.doc_id, line, row.digest) for line, row in enumerate(out, 1)]


def test_random_edits_leave_exactly_the_given_rows(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    catalog, other = Catalog(path), Catalog(path)
    rng = random.Random(8)
    rows = [DocRow(f"id{n}", n, "d") for n in range(1, 200)]
    catalog.commit({"a.md": ENTRY}, {"a.md": rows})
    for step in range(60):
        rows = edited(rows, rng, step)
        # Now and then another process commits in between, so remembered rows must not be trusted.
        writer = other if step % 7 == 0 else catalog
        entries = {"a.md": ManifestEntry(step, 1, "r", 1), "b.md": ENTRY if step % 2 else None}
        writer.commit(entries, {"a.md": rows})
        assert stored(path, "a.md") == {row.doc_id: row for row in rows}, step
        assert catalog.doc_rows("a.md") == other.doc_rows("a.md") == {row.doc_id: row for row in rows}
        # The manifest each process keeps follows its own commits and notices the other's.
        assert catalog.manifest() == other.manifest() == Catalog(path).manifest(), step


def test_a_shift_below_an_insert_is_one_update(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    catalog = Catalog(path)
    rows = [DocRow(f"id{n}", n, "d") for n in range(1, 1001)]
    catalog.commit({"a.md": ENTRY}, {"a.md": rows})
    statements: list[str] = []
    catalog._db.set_trace_callback(statements.append)
    moved = rows[:500] + [DocRow("inserted", 501, "d")] + [DocRow(r.doc_id, r.line + 1, r.digest) for r in rows[500:]]
    catalog.commit({"a.md": ENTRY}, {"a.md": moved})
    assert stored(path, "a.md") == {row.doc_id: row for row in moved}
    assert sum(statement.startswith("INSERT OR REPLACE INTO docs") for statement in statements) == 1
    assert sum(statement.startswith("UPDATE docs") for statement in statements) == 2  # shift, then un-negate


def test_dropping_a_file_forgets_its_rows(tmp_path: Path) -> None:
    catalog = Catalog(tmp_path / "catalog.sqlite")
    catalog.commit({"a.md": ENTRY}, {"a.md": [DocRow(f"id{n}", n, "d") for n in range(100)]})
    catalog.commit({"a.md": None}, {})
    assert catalog.doc_rows("a.md") == {}
    catalog.commit({"a.md": ENTRY}, {"a.md": [DocRow("x", 1, "d")]})
    assert catalog.doc_rows("a.md") == {"x": DocRow("x", 1, "d")}


def test_a_file_shrinking_below_the_remembered_size_is_read_back(tmp_path: Path) -> None:
    """A forget in a 64-fact file left the 64 rows remembered as current: the next commit shifted by them."""
    path = tmp_path / "catalog.sqlite"
    catalog = Catalog(path)
    rows = [DocRow(f"id{n}", n, "d") for n in range(1, 65)]
    catalog.commit({"a.md": ENTRY}, {"a.md": rows})
    shrunk = [DocRow(row.doc_id, row.line - (row.line > 10), row.digest) for row in rows if row.line != 10]
    catalog.commit({"a.md": ManifestEntry(2, 1, "r", 2)}, {"a.md": shrunk})
    assert catalog.doc_rows("a.md") == stored(path, "a.md") == {row.doc_id: row for row in shrunk}
    grown = [*shrunk[:20], DocRow("inserted", 21, "d"), *(DocRow(r.doc_id, r.line + 1, r.digest) for r in shrunk[20:])]
    catalog.commit({"a.md": ManifestEntry(3, 1, "r", 3)}, {"a.md": grown})
    assert stored(path, "a.md") == {row.doc_id: row for row in grown}
