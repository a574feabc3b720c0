"""One settings table → a frozen Config. Precedence: flag > environment > TOML file > default."""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import platformdirs

from wolfmem.errors import ConfigError

APP = "wolfmem"


@dataclass(frozen=True)
class Setting:
    """One configuration key: its TOML name, type, default and help text."""

    key: str
    type: type
    default: Any
    help: str
    choices: tuple[str, ...] = ()

    @property
    def env(self) -> str:
        """The environment variable that overrides this key."""
        return "WOLFMEM_" + self.key.replace(".", "_").upper()

    @property
    def field(self) -> str:
        """The Config attribute holding this key's value."""
        return self.key.replace(".", "_")


SETTINGS: tuple[Setting, ...] = (
    Setting("vault", str, None, "The vault folder. Default: <user data dir>/wolfmem/vault."),
    Setting("state_dir", str, None,
            "Where this machine keeps the index, manifest, locks and run records for each vault. "
            "Default: <user state dir>/wolfmem. Never inside the vault, so sync tools leave it alone."),
    Setting("log_dir", str, None,
            "Where the daemon writes its log, one file per vault named like its state folder. "
            "Default: <user log dir>/wolfmem."),
    Setting("log_level", str, "info", "How much the daemon logs; debug adds a line per index sync.",
            choices=("debug", "info", "warning", "error")),
    Setting("index.max_file_bytes", int, 512_000,
            "Bytes of one file that are indexed; the rest of a larger file is skipped with a warning."),
    Setting("watcher.debounce_ms", int, 100, "Quiet time after a file event before the file is re-indexed."),
    Setting("watcher.reconcile_seconds", int, 300,
            "Seconds between full reconcile scans, the safety net for lost file events."),
    Setting("llm.base_url", str, None,
            "OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (Ollama). Unset: OpenAI, if a model is set."),
    Setting("llm.model", str, None, "Model name for curation and audits. Unset: the offline curator runs."),
    Setting("llm.api_key_env", str, "OPENAI_API_KEY",
            "Name of the environment variable holding the API key (the key itself is never stored). "
            "WOLFMEM_LLM_API_KEY, when set, wins."),
    Setting("llm.timeout", float, 120.0, "Seconds to wait for one LLM reply (the client default is 600)."),
    Setting("llm.max_retries", int, 1, "Retries of a failed LLM request; keep 0-1 for local models."),
    Setting("embeddings.base_url", str, None,
            "OpenAI-compatible endpoint serving /v1/embeddings, e.g. http://localhost:11434/v1 (Ollama). "
            "Unset: OpenAI, if a model is set."),
    Setting("embeddings.model", str, None,
            "Embedding model for hybrid search, e.g. nomic-embed-text. Unset: search is lexical only."),
    Setting("embeddings.api_key_env", str, "OPENAI_API_KEY",
            "Name of the environment variable holding the embeddings API key. "
            "WOLFMEM_EMBEDDINGS_API_KEY, when set, wins."),
    Setting("embeddings.timeout", float, 30.0, "Seconds to wait for one batch of embeddings."),
    Setting("embeddings.batch", int, 64, "Facts sent in one embeddings request."),
    Setting("embeddings.query_prefix", str, "",
            "Text put before a search query, as some models want, e.g. 'search_query: ' (nomic-embed-text)."),
    Setting("embeddings.document_prefix", str, "",
            "Text put before each fact, e.g. 'search_document: ' (nomic-embed-text)."),
    Setting("schedule.curate", str, "03:00", "Local time of the nightly curation, HH:MM."),
    Setting("schedule.audit", str, "1 04:00", "Day of month and local time of the monthly audit, 'D HH:MM'."),
    Setting("schedule.digest", str, "sun 19:00",
            "Weekday and local time of the weekly digest, 'ddd HH:MM', or 'off'."),
    Setting("schedule.heartbeat_minutes", int, 5, "Minutes between checks for overdue jobs."),
    Setting("audit.apply", bool, True, "Apply audit changes (true) or only stage them in the report (false)."),
    Setting("curation.max_added_per_run", int, 20,
            "New facts or sections one curation run may add to a file; more is staged for a person."),
    Setting("curation.max_added_per_month", int, 100,
            "New facts or sections curation may add to a file in any 30 days; more is staged for a person."),
    Setting("curation.max_requests", int, 60,
            "LLM requests one curation run (or one audit) may send; the backlog waits for the next run."),
    Setting("curation.max_tokens", int, 600_000,
            "LLM tokens (prompt and reply) one curation run (or one audit) may spend; the backlog waits."),
    Setting("lease.hours", float, 36.0,
            "Hours a machine's curation lease stays fresh before another machine may take over."),
)

_BY_KEY = {setting.key: setting for setting in SETTINGS}


@dataclass(frozen=True)
class Config:
    """Resolved settings, passed down explicitly; nothing reads configuration at import time."""

    vault: str | None = None
    state_dir: str | None = None
    log_dir: str | None = None
    log_level: str = "info"
    index_max_file_bytes: int = 512_000
    watcher_debounce_ms: int = 100
    watcher_reconcile_seconds: int = 300
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key_env: str = "OPENAI_API_KEY"
    llm_timeout: float = 120.0
    llm_max_retries: int = 1
    embeddings_base_url: str | None = None
    embeddings_model: str | None = None
    embeddings_api_key_env: str = "OPENAI_API_KEY"
    embeddings_timeout: float = 30.0
    embeddings_batch: int = 64
    embeddings_query_prefix: str = ""
    embeddings_document_prefix: str = ""
    schedule_curate: str = "03:00"
    schedule_audit: str = "1 04:00"
    schedule_digest: str = "sun 19:00"
    schedule_heartbeat_minutes: int = 5
    audit_apply: bool = True
    curation_max_added_per_run: int = 20
    curation_max_added_per_month: int = 100
    curation_max_requests: int = 60
    curation_max_tokens: int = 600_000
    lease_hours: float = 36.0

    def vault_path(self) -> Path:
        """The vault folder these settings name."""
        if self.vault:
            return Path(self.vault).expanduser()
        return Path(platformdirs.user_data_dir(APP, appauthor=False)) / "vault"

    def state_root(self) -> Path:
        """The machine-local folder under which each vault gets its state folder."""
        if self.state_dir:
            return Path(self.state_dir).expanduser()
        return Path(platformdirs.user_state_dir(APP, appauthor=False))

    def log_path(self, vault_name: str) -> Path:
        """The daemon's log file for one vault, named like the vault's state folder."""
        base = Path(self.log_dir).expanduser() if self.log_dir else Path(
            platformdirs.user_log_dir(APP, appauthor=False))
        return base / f"{vault_name}.log"

    def with_vault(self, vault: str | Path | None) -> Config:
        """A copy pointing at another vault (None keeps this one)."""
        return self if vault is None else dataclasses.replace(self, vault=str(vault))


class Source(StrEnum):
    """Where a setting's value came from."""

    DEFAULT = "default"
    FILE = "file"
    ENVIRONMENT = "environment"
    FLAG = "flag"


@dataclass(frozen=True)
class Resolved:
    """One setting's value, where it came from, and the file, variable or flag that set it."""

    setting: Setting
    value: Any
    source: Source
    origin: str = ""


def default_config_file(environ: Mapping[str, str] | None = None) -> Path:
    """The TOML file read by default: $WOLFMEM_CONFIG or <user config dir>/wolfmem/config.toml."""
    environ = os.environ if environ is None else environ
    if environ.get("WOLFMEM_CONFIG"):
        return Path(environ["WOLFMEM_CONFIG"]).expanduser()
    return Path(platformdirs.user_config_dir(APP, appauthor=False)) / "config.toml"


def load_config(
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    config_file: Path | None = None,
) -> Config:
    """Resolve every setting: overrides (CLI flags) > WOLFMEM_* env > TOML file > default."""
    return Config(**{item.setting.field: item.value for item in resolve(overrides, environ, config_file)})


def resolve(
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    config_file: Path | None = None,
) -> list[Resolved]:
    """Each setting's value and its source, in table order, by the precedence load_config applies."""
    environ = os.environ if environ is None else environ
    overrides = overrides or {}
    unknown = sorted(set(overrides) - set(_BY_KEY))
    if unknown:
        raise ConfigError(f"unknown setting(s) {', '.join(unknown)}; run `wolfmem config` to list the valid keys")
    path = config_file if config_file is not None else default_config_file(environ)
    if config_file is None and environ.get("WOLFMEM_CONFIG") and not path.is_file():
        # Silently falling back to defaults would hide a typo in the variable.
        raise ConfigError(
            f"$WOLFMEM_CONFIG names {path}, which is not a file; create it (`wolfmem config > {path}` "
            "writes the current settings) or unset WOLFMEM_CONFIG"
        )
    from_file = _read_toml(path)
    resolved = []
    for setting in SETTINGS:
        item = Resolved(setting, setting.default, Source.DEFAULT)
        if setting.key in from_file:
            raw = from_file[setting.key]
            item = Resolved(setting, _coerce(setting, raw, f"{path}: {setting.key}"), Source.FILE, str(path))
        if environ.get(setting.env, "") != "":
            raw = environ[setting.env]
            item = Resolved(setting, _coerce(setting, raw, setting.env), Source.ENVIRONMENT, "$" + setting.env)
        if overrides.get(setting.key) is not None:
            flag = f"--{setting.key}"
            item = Resolved(setting, _coerce(setting, overrides[setting.key], flag), Source.FLAG, flag)
        resolved.append(item)
    return resolved


def llm_api_key(config: Config, environ: Mapping[str, str] | None = None) -> str | None:
    """The API key from the environment: WOLFMEM_LLM_API_KEY, else the variable llm.api_key_env names."""
    environ = os.environ if environ is None else environ
    return environ.get("WOLFMEM_LLM_API_KEY") or environ.get(config.llm_api_key_env) or None


def embeddings_api_key(config: Config, environ: Mapping[str, str] | None = None) -> str | None:
    """The embeddings API key: WOLFMEM_EMBEDDINGS_API_KEY, else the variable embeddings.api_key_env names."""
    environ = os.environ if environ is None else environ
    return environ.get("WOLFMEM_EMBEDDINGS_API_KEY") or environ.get(config.embeddings_api_key_env) or None


def _read_toml(path: Path) -> dict[str, Any]:
    """Flatten the TOML file into dotted keys, refusing unknown ones."""
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    flat: dict[str, Any] = {}
    _flatten(data, "", flat)
    unknown = sorted(set(flat) - set(_BY_KEY))
    if unknown:
        raise ConfigError(
            f"{path}: unknown setting(s) {', '.join(unknown)}; run `wolfmem config` to list the valid keys"
        )
    return flat


def _flatten(data: Mapping[str, Any], prefix: str, into: dict[str, Any]) -> None:
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            _flatten(value, dotted + ".", into)
        else:
            into[dotted] = value


def _coerce(setting: Setting, raw: Any, where: str) -> Any:
    """Turn a TOML or env value into the setting's type, or raise a ConfigError naming where it came from."""
    try:
        if setting.type is bool:
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in {"1", "true", "yes", "on"}:
                return True
            if text in {"0", "false", "no", "off"}:
                return False
            raise ValueError(raw)
        if setting.type is int and isinstance(raw, bool):
            raise ValueError(raw)
        value = setting.type(raw)
        if setting.choices:
            value = value.strip().lower()
        if setting.choices and value not in setting.choices:
            raise ConfigError(f"{where}: {raw!r} is not one of {', '.join(setting.choices)} for {setting.key}")
        return value
    except (TypeError, ValueError):
        raise ConfigError(
            f"{where}: {raw!r} is not a valid {setting.type.__name__} for {setting.key} ({setting.help})"
        ) from None
