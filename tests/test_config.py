"""Settings: one table, precedence flag > env > TOML > default, and unknown or bad values refused."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import REPO

from wolfmem.config import (
    SETTINGS,
    Config,
    Source,
    default_config_file,
    llm_api_key,
    load_config,
    resolve,
)
from wolfmem.errors import ConfigError

README = REPO / "README.md"


def toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_match_the_table(tmp_path: Path) -> None:
    config = load_config(environ={}, config_file=tmp_path / "missing.toml")
    assert config == Config()
    for setting in SETTINGS:
        assert getattr(Config(), setting.field) == setting.default, setting.key


def test_every_config_field_is_a_documented_setting() -> None:
    fields = {field.name for field in dataclasses.fields(Config)}
    assert fields == {setting.field for setting in SETTINGS}
    for setting in SETTINGS:
        assert setting.help.strip(), f"{setting.key} has no help"
        assert setting.env == "WOLFMEM_" + setting.key.replace(".", "_").upper()
    assert len({s.key for s in SETTINGS}) == len(SETTINGS)


@pytest.mark.xfail(not README.exists(), reason="README.md is not written yet", strict=True)
def test_readme_documents_every_setting() -> None:
    text = README.read_text("utf-8")
    missing = [setting.key for setting in SETTINGS if setting.key not in text]
    assert not missing, f"README.md does not mention {missing}"


def test_precedence_flag_over_env_over_toml_over_default(tmp_path: Path) -> None:
    path = toml(tmp_path, "[watcher]\ndebounce_ms = 200\n")
    env = {"WOLFMEM_WATCHER_DEBOUNCE_MS": "300"}
    flags = {"watcher.debounce_ms": 400}
    assert load_config(flags, env, path).watcher_debounce_ms == 400
    assert load_config({}, env, path).watcher_debounce_ms == 300
    assert load_config({}, {}, path).watcher_debounce_ms == 200
    assert load_config({}, {}, tmp_path / "none.toml").watcher_debounce_ms == 100
    # A flag left unset (None) and an empty env var do not override.
    unset = load_config({"watcher.debounce_ms": None}, {"WOLFMEM_WATCHER_DEBOUNCE_MS": ""}, path)
    assert unset.watcher_debounce_ms == 200


def test_toml_sets_every_kind_of_value(tmp_path: Path) -> None:
    path = toml(
        tmp_path,
        'vault = "~/notes"\n[index]\nmax_file_bytes = 1000\n[llm]\nmodel = "llama3"\ntimeout = 30\n'
        '[audit]\napply = false\n[schedule]\ncurate = "02:30"\n',
    )
    config = load_config({}, {}, path)
    assert config.vault == "~/notes" and config.vault_path() == Path.home() / "notes"
    assert config.index_max_file_bytes == 1000
    assert (config.llm_model, config.llm_timeout, config.audit_apply) == ("llama3", 30.0, False)
    assert config.schedule_curate == "02:30"


def test_dotted_keys_work_in_toml(tmp_path: Path) -> None:
    assert load_config({}, {}, toml(tmp_path, '"index.max_file_bytes" = 77\n')).index_max_file_bytes == 77


@pytest.mark.parametrize(
    "text",
    ["colour = 'blue'\n", "[index]\nmax_bytes = 5\n", "[watcher.debounce_ms]\nvalue = 1\n", "[nope]\nx = 1\n"],
)
def test_unknown_toml_key_is_an_error(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError, match=r"unknown setting.*wolfmem config"):
        load_config({}, {}, toml(tmp_path, text))


def test_invalid_toml_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = toml(tmp_path, "[index\nmax_file_bytes = \n")
    with pytest.raises(ConfigError, match=r"config\.toml"):
        load_config({}, {}, path)


@pytest.mark.parametrize(
    ("source", "key", "raw"),
    [
        ("env", "WOLFMEM_INDEX_MAX_FILE_BYTES", "lots"),
        ("env", "WOLFMEM_AUDIT_APPLY", "maybe"),
        ("env", "WOLFMEM_LLM_TIMEOUT", "soon"),
        ("toml", "[index]\nmax_file_bytes = 'big'\n", None),
        ("toml", "[index]\nmax_file_bytes = true\n", None),
        ("toml", "[audit]\napply = 'perhaps'\n", None),
        ("toml", "[index]\nmax_file_bytes = [1]\n", None),
        ("flag", "watcher.debounce_ms", "fast"),
    ],
)
def test_bad_values_are_errors_that_say_where(tmp_path: Path, source: str, key: str, raw: str | None) -> None:
    with pytest.raises(ConfigError) as info:
        if source == "env":
            load_config({}, {key: raw}, tmp_path / "none.toml")
        elif source == "toml":
            load_config({}, {}, toml(tmp_path, key))
        else:
            load_config({key: raw}, {}, tmp_path / "none.toml")
    message = str(info.value)
    assert {"env": key, "toml": "config.toml", "flag": f"--{key}"}[source] in message
    assert "not a valid" in message


@pytest.mark.parametrize(
    ("raw", "value"),
    [("1", True), ("true", True), ("Yes", True), ("on", True),
     ("0", False), ("false", False), ("NO", False), ("off", False)],
)
def test_booleans_from_the_environment(tmp_path: Path, raw: str, value: bool) -> None:
    assert load_config({}, {"WOLFMEM_AUDIT_APPLY": raw}, tmp_path / "none.toml").audit_apply is value


def test_config_file_location(tmp_path: Path) -> None:
    assert default_config_file({"WOLFMEM_CONFIG": str(tmp_path / "c.toml")}) == tmp_path / "c.toml"
    assert default_config_file({}).name == "config.toml"
    path = toml(tmp_path, "[watcher]\nreconcile_seconds = 9\n")
    assert load_config({}, {"WOLFMEM_CONFIG": str(path)}).watcher_reconcile_seconds == 9


def test_paths_derive_from_settings(tmp_path: Path) -> None:
    config = Config(vault=str(tmp_path / "v"), state_dir=str(tmp_path / "s"), log_dir=str(tmp_path / "l"))
    assert config.vault_path() == tmp_path / "v"
    assert config.state_root() == tmp_path / "s"
    assert config.log_path("notes-0123456789ab") == tmp_path / "l" / "notes-0123456789ab.log"
    assert config.with_vault(None) is config
    assert config.with_vault(tmp_path / "w").vault_path() == tmp_path / "w"
    assert Config().vault_path().name == "vault"


def test_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Config().vault = "x"  # type: ignore[misc]


def test_api_key_comes_from_the_environment_only() -> None:
    config = Config(llm_api_key_env="MY_KEY")
    assert llm_api_key(config, {"MY_KEY": "k1"}) == "k1"
    assert llm_api_key(config, {"MY_KEY": "k1", "WOLFMEM_LLM_API_KEY": "k2"}) == "k2"
    assert llm_api_key(config, {"OPENAI_API_KEY": "k3"}) is None
    assert not any(s.key.rsplit(".", 1)[-1] == "api_key" for s in SETTINGS)


def test_each_value_says_where_it_came_from(tmp_path: Path) -> None:
    path = toml(tmp_path, "[watcher]\ndebounce_ms = 200\nreconcile_seconds = 60\n[llm]\nmodel = 'm'\n")
    env = {"WOLFMEM_WATCHER_DEBOUNCE_MS": "300", "WOLFMEM_LLM_MODEL": "n"}
    items = {item.setting.key: item for item in resolve({"llm.model": "o"}, env, path)}
    assert [item.setting for item in items.values()] == list(SETTINGS)
    assert (items["watcher.reconcile_seconds"].source, items["watcher.reconcile_seconds"].origin) == (
        Source.FILE, str(path))
    assert (items["watcher.debounce_ms"].value, items["watcher.debounce_ms"].source) == (300, Source.ENVIRONMENT)
    assert items["watcher.debounce_ms"].origin == "$WOLFMEM_WATCHER_DEBOUNCE_MS"
    assert (items["llm.model"].value, items["llm.model"].source, items["llm.model"].origin) == (
        "o", Source.FLAG, "--llm.model")
    assert (items["lease.hours"].value, items["lease.hours"].source) == (36.0, Source.DEFAULT)


def test_a_config_file_named_by_the_environment_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"WOLFMEM_CONFIG.*missing\.toml|missing\.toml.*WOLFMEM_CONFIG"):
        load_config({}, {"WOLFMEM_CONFIG": str(tmp_path / "missing.toml")})
    with pytest.raises(ConfigError, match="not a file"):
        load_config({}, {"WOLFMEM_CONFIG": str(tmp_path)})
    # The default location (under this test's XDG_CONFIG_HOME) is optional: no file there means defaults.
    assert not default_config_file({}).exists()
    assert load_config({}, {}).watcher_debounce_ms == 100


@pytest.mark.parametrize(("raw", "level"), [("debug", "debug"), ("WARNING", "warning"), (" Info ", "info")])
def test_log_level_is_one_of_the_named_levels(tmp_path: Path, raw: str, level: str) -> None:
    assert load_config({}, {"WOLFMEM_LOG_LEVEL": raw}, tmp_path / "none.toml").log_level == level


def test_an_unknown_log_level_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"WOLFMEM_LOG_LEVEL.*'verbose'.*debug, info, warning, error"):
        load_config({}, {"WOLFMEM_LOG_LEVEL": "verbose"}, tmp_path / "none.toml")


def test_unknown_flag_keys_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown setting.*colour"):
        load_config({"colour": "blue"}, {}, tmp_path / "none.toml")
