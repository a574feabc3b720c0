"""Help in the conventions of click apps: `QUERY...` and `FACT` in usage, `TEXT`/`INTEGER`/`PATH`, nothing on flags.

This typer prints Python types as metavars (`<str>`, `<list[str]>`, `<bool>` on every flag) and
wraps required arguments in braces (`{fact}`); people know the click forms from `gh`, `uv` and
pip. Typer has no setting for it and no way to pass a parameter class, so `use_click_conventions`
replaces those display methods once, where the app is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args, get_origin

from typer import core

# What click calls each type; anything else shows as TEXT.
_NAMES: dict[Any, str] = {int: "INTEGER", float: "FLOAT", Path: "PATH", bool: "BOOLEAN"}


def _type_name(param: Any) -> str | None:
    """The conventional name of a parameter's value, or None for a flag (it takes none)."""
    if getattr(param, "is_flag", False):
        return None
    if param.metavar is not None:
        return str(param.metavar)
    descriptor = param.type_descriptor
    if descriptor.is_choice and descriptor.choices:
        return "[" + "|".join(str(choice) for choice in descriptor.choices) + "]"
    annotation = descriptor.annotation
    if get_origin(annotation) is list:
        annotation = get_args(annotation)[0]
    return _NAMES.get(annotation, "TEXT")


def _option_type(self: Any, ctx: Any) -> str | None:
    return _type_name(self)


def _argument_type(self: Any, ctx: Any) -> str | None:
    # The usage line names the argument (FACT); the type column says what it takes (TEXT).
    return _type_name(self) if self.metavar is None else _NAMES.get(self.type_descriptor.annotation, "TEXT")


def _argument_usage(self: Any) -> str:
    name = self.metavar or self.name.upper()
    if self.nargs != 1:
        name += "..."
    return name if self.required else f"[{name}]"


def use_click_conventions() -> None:
    """Show metavars as click apps do, in the rich help panels and the usage line."""
    core.TyperOption.display_type_rich = _option_type  # type: ignore[method-assign]
    core.TyperArgument.display_type_rich = _argument_type  # type: ignore[method-assign]
    core.TyperArgument._usage_display_name = _argument_usage  # type: ignore[method-assign]
