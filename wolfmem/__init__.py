"""wolfmem: local-first long-term memory for AI agents, kept in a markdown vault."""

from importlib.metadata import PackageNotFoundError, version

from .config import Config, load_config
from .errors import (
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
from .memory import Hit, Memory
from .refs import Excerpt
from .saving import Receipt

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
