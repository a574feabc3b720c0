"""wolfmem: local-first long-term memory for AI agents, kept in a markdown vault.

Every name here is imported on first use (`__getattr__`), so that `import wolfmem.cli` (a command's
first step) takes a few milliseconds and the command takes over Ctrl+C before the search engine, the
index and the rest load (about half a second).
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

    __version__: str

_ON_FIRST_USE = {
    "Config": "wolfmem.config",
    "load_config": "wolfmem.config",
    **dict.fromkeys(
        ["ConfigError", "CurationRejected", "IndexUnavailable", "InvalidFact", "LLMError", "NotAVault", "NotFound",
         "OutsideVault", "SecretRefused", "UsageError", "VaultBusy", "WolfmemError"],
        "wolfmem.errors",
    ),
    "Memory": "wolfmem.memory.facade",
    "Receipt": "wolfmem.memory.receipts",
    "Excerpt": "wolfmem.memory.refs",
    "Hit": "wolfmem.memory.searching",
}

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


def __getattr__(name: str) -> Any:
    """A public name (and `__version__`), imported when first asked for."""
    if name == "__version__":
        value: Any = _version()
    elif name in _ON_FIRST_USE:
        value = getattr(importlib.import_module(_ON_FIRST_USE[name]), name)
    else:
        raise AttributeError(f"module 'wolfmem' has no attribute {name!r}")
    globals()[name] = value
    return value


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("wolfmem")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"
