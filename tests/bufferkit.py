"""A person's editor buffer written over a vault file in place."""

from __future__ import annotations

from pathlib import Path


def write_in_place(path: Path, data: bytes) -> None:
    """The buffer written in place over the file (nano's ^O, vim's :w after its warning, emacs after its first save)."""
    with open(path, "wb") as handle:
        handle.write(data)
