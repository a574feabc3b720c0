"""The exceptions wolfmem raises. Every one says what went wrong and how to fix it."""

from __future__ import annotations

from pathlib import Path


class WolfmemError(Exception):
    """Base class of every error wolfmem raises on purpose."""


class UsageError(WolfmemError):
    """The caller passed an argument that cannot be used as given."""


class InvalidFact(UsageError):
    """A fact handed to memory_save is not one self-contained sentence."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SecretRefused(InvalidFact):
    """A fact (or a curated rewrite) looks like it contains a credential."""

    def __init__(self, kind: str) -> None:
        super().__init__(
            f"refused: this looks like a secret ({kind}). Save where the secret lives "
            "(e.g. 'The Stripe key is in 1Password'), never the secret itself"
        )
        self.kind = kind


class OutsideVault(UsageError):
    """A path or ref points outside the vault (.., absolute path, symlink escape)."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(
            f"refused: {path!s} is outside the vault; pass a vault-relative path "
            "such as 'knowledge/people.md'"
        )
        self.path = str(path)


class NotAVault(UsageError):
    """A command that needs an existing vault was pointed at a folder that is not one."""

    def __init__(self, path: str | Path) -> None:
        super().__init__(
            f"{path!s} is not a wolfmem vault (no knowledge/ folder); "
            f"run `wolfmem init --vault {path!s}` to create one"
        )
        self.path = str(path)


class NotFound(WolfmemError):
    """A ref names a file or section that does not exist."""


class IndexUnavailable(WolfmemError):
    """The search index could not be brought up to date with the files on disk."""


class VaultBusy(WolfmemError):
    """The vault lock could not be taken in time (another process holds it too long)."""


class ConfigError(UsageError):
    """A configuration file or environment variable holds an unknown key or a bad value."""


class LLMError(WolfmemError):
    """The configured LLM endpoint failed, refused, or answered with something unusable."""


class CurationRejected(WolfmemError):
    """A proposed rewrite of a knowledge file failed validation and was not written."""

    def __init__(self, path: str, reasons: list[str]) -> None:
        super().__init__(f"{path}: rewrite rejected: " + "; ".join(reasons))
        self.path = path
        self.reasons = reasons
