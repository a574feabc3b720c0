"""The SQLite FTS5 baseline of scripts/bench.py: the same fact lines, the same questions, the same saves.

FTS5 (`porter unicode61`) holds one row per fact (text, section, path, key), in a WAL database file
beside the vault. A question is its non-stop words OR-ed, ranked by bm25(). A save does what
wolfmem's does in spirit: an exact-key lookup, a candidate search for paraphrases, an insert and a
commit. Nothing here is part of wolfmem.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from wolfmem.core.facts import fact_key
from wolfmem.core.markdown import parse
from wolfmem.core.tokens import STOP_WORDS, tokens

CANDIDATES = 48


class Fts5:
    """An FTS5 index of a vault's facts."""

    def __init__(self, path: Path, root: Path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(
            "CREATE VIRTUAL TABLE facts USING fts5(text, section, path UNINDEXED, key UNINDEXED, "
            "tokenize='porter unicode61')"
        )
        self.db.execute("CREATE TABLE keys (key TEXT PRIMARY KEY, fact INTEGER)")
        rows = []
        for folder in ("knowledge", "episodes"):
            for file in sorted((root / folder).glob("*.md")):
                for fact in parse(file.read_text("utf-8")).facts:
                    rows.append((fact.text, fact.section, f"{folder}/{file.name}", fact_key(fact.text)))
        self.db.execute("BEGIN")
        self.db.executemany("INSERT INTO facts VALUES (?, ?, ?, ?)", rows)
        self.db.execute("INSERT OR IGNORE INTO keys SELECT key, rowid FROM facts")
        self.db.execute("COMMIT")
        self.count = len(rows)

    def close(self) -> None:
        """Close the database."""
        self.db.close()

    @staticmethod
    def match(text: str) -> str:
        """The question's non-stop words, OR-ed (each quoted, so FTS5 syntax in them is inert)."""
        words = [word for word in tokens(text) if word not in STOP_WORDS]
        return " OR ".join(f'"{word}"' for word in dict.fromkeys(words))

    def search(self, text: str, limit: int = 10) -> list[tuple[str, str]]:
        """The best facts for a question."""
        match = self.match(text)
        if not match:
            return []
        return self.db.execute(
            "SELECT path, text FROM facts WHERE facts MATCH ? ORDER BY rank LIMIT ?", (match, limit)
        ).fetchall()

    def save(self, text: str, path: str) -> bool:
        """Insert a fact unless its key is on file; candidates for paraphrases are fetched as wolfmem does."""
        key = fact_key(text)
        if self.db.execute("SELECT 1 FROM keys WHERE key = ?", (key,)).fetchone():
            return False
        match = self.match(text)
        if match:
            self.db.execute(
                "SELECT path, text FROM facts WHERE facts MATCH ? AND path LIKE 'knowledge/%' ORDER BY rank LIMIT ?",
                (match, CANDIDATES),
            ).fetchall()
        self.db.execute("BEGIN IMMEDIATE")
        cursor = self.db.execute("INSERT INTO facts VALUES (?, ?, ?, ?)", (text, "", path, key))
        self.db.execute("INSERT INTO keys VALUES (?, ?)", (key, cursor.lastrowid))
        self.db.execute("COMMIT")
        return True

