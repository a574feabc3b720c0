"""wolfmem: local-first long-term memory for AI agents, kept in a markdown vault."""

from importlib.metadata import PackageNotFoundError, version

from wolfmem.config import Config, load_config
from wolfmem.errors import (
    ConfigError,
    CurationRejected,
    IndexUnavailable,
    InvalidFact,
    LLMError,
    NotAVault,
    NotFound,
    OutsideVault,
    SecretRefused,
    UsageError,
    VaultBusy,
    WolfmemError,
)
from wolfmem.memory.facade import Memory
from wolfmem.memory.receipts import Receipt
from wolfmem.memory.refs import Excerpt
from wolfmem.memory.searching import Hit

__all__ = [
    "Config",
    "ConfigError",
    "CurationRejected",
    "Excerpt",
    "Hit",
    "IndexUnavailable",
    "InvalidFact",
    "LLMError",
    "Memory",
    "NotAVault",
    "NotFound",
    "OutsideVault",
    "Receipt",
    "SecretRefused",
    "UsageError",
    "VaultBusy",
    "WolfmemError",
    "load_config",
]

try:
    __version__ = version("wolfmem")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
