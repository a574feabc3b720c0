"""`wolfmem config`: the resolved settings as TOML that can be pasted into the config file.

Each value carries a comment naming where it came from, so "why is it 3:00?" has an answer. A setting
with no value (an unset optional path or model) is shown commented out, since TOML has no null.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

import tomlkit
from tomlkit.container import Container
from tomlkit.items import Table

from wolfmem.config import Resolved, Source

WIDTH = 100


def render(resolved: Sequence[Resolved], config_file: Path) -> str:
    """TOML for these settings, with each one's help, variable and source as comments."""
    doc = tomlkit.document()
    doc.add(tomlkit.comment(f"wolfmem settings as resolved now. The config file is {config_file}"))
    doc.add(tomlkit.comment("(it is read only when it exists); this output can be pasted into it as is."))
    doc.add(tomlkit.comment("After each value: where it came from (default, file, environment or flag)."))
    doc.add(tomlkit.nl())
    tables: dict[str, Table] = {}
    for item in resolved:
        table_name, _, name = item.setting.key.rpartition(".")
        if table_name:
            if table_name not in tables:
                tables[table_name] = tomlkit.table()
            _add(tables[table_name], name, item)
        else:
            _add(doc, name, item)
    for table_name, table in tables.items():
        doc.add(table_name, table)
    return tomlkit.dumps(doc)


def _add(container: Container | Table, name: str, item: Resolved) -> None:
    setting = item.setting
    help_text = f"${setting.env}: {setting.help}"
    if setting.choices:
        help_text += f" One of: {', '.join(setting.choices)}."
    for line in textwrap.wrap(help_text, WIDTH - 2):
        container.add(tomlkit.comment(line))
    if item.value is None:
        container.add(tomlkit.comment(f"{name} is unset ({_source(item)})"))
    else:
        value = tomlkit.item(item.value)
        value.comment(_source(item))
        container.add(name, value)
    container.add(tomlkit.nl())


def _source(item: Resolved) -> str:
    return item.source.value if item.source is Source.DEFAULT else f"{item.source.value} {item.origin}"
