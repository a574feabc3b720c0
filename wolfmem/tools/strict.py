"""OpenAI strict mode: a tool's argument schema rewritten so that `strict: true` accepts it as it is.

Strict function calling wants every property listed in `required` and no `minLength`/`maxLength`.
So an optional argument becomes nullable (the model sends null for "not given", which dispatch
reads as absent), and each dropped length limit moves into the property's description. Dispatch
still checks every call against the full schema, so the server enforces the limits all the same.
The result is a fixed point of the openai package's own strict conversion (tested).
"""

from __future__ import annotations

from typing import Any

# Keywords strict mode refuses; pattern, enum, minimum/maximum and minItems/maxItems it accepts.
UNSUPPORTED = ("minLength", "maxLength")


def strict_parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` (an object schema) with every property required, optional ones nullable, limits in words."""
    required = set(schema.get("required", ()))
    properties = {
        name: _property(prop, optional=name not in required) for name, prop in schema["properties"].items()
    }
    return {**schema, "properties": properties, "required": list(properties)}


def _property(prop: dict[str, Any], optional: bool) -> dict[str, Any]:
    """One top-level property: limits stripped and said in its description, null allowed if it is optional."""
    limit = _max_length(prop)
    body = _strip(prop)
    description = body.pop("description", "")
    if limit is not None:
        each = "" if "maxLength" in prop else " each"  # the limit is on the items or variants
        description = f"{description} At most {limit:,} characters{each}.".strip()
    if optional:
        variants = body.pop("anyOf", None) or [body]
        body = {"anyOf": [*variants, {"type": "null"}]}
        description = f"{description} null when not used.".strip()
    return {**body, "description": description} if description else body


def _strip(schema: Any) -> Any:
    """`schema` without the keywords strict mode refuses, at any depth."""
    if isinstance(schema, dict):
        return {key: _strip(value) for key, value in schema.items() if key not in UNSUPPORTED}
    if isinstance(schema, list):
        return [_strip(item) for item in schema]
    return schema


def _max_length(schema: Any) -> int | None:
    """The first maxLength anywhere in `schema` (each property has at most one limit)."""
    if isinstance(schema, dict):
        if isinstance(schema.get("maxLength"), int):
            return int(schema["maxLength"])
        values: Any = schema.values()
    elif isinstance(schema, list):
        values = schema
    else:
        return None
    return next((found for value in values if (found := _max_length(value)) is not None), None)
