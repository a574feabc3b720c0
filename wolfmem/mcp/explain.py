"""Requests the SDK refuses before any handler runs, answered with what is wrong instead of a bare error.

The SDK answers params that do not fit a method's shape (arguments sent as a JSON string, no
`uri`, an unknown log level), and any request before `initialize`, with the same
`-32602 "Invalid request parameters"` and empty data: a client cannot tell what to fix. This
middleware keeps the code and the message's start and adds the reason.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from wolfmem import limits

BARE = "Invalid request parameters"  # the SDK's message, kept so clients that match on it still do
MAX_PROBLEMS = 3


async def explain_refusals(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Run the request; a refusal of its params, or of a request before the handshake, says why."""
    try:
        return await call_next(ctx)
    except ValidationError as exc:
        raise _refusal(_problems(exc)) from None
    except MCPError as exc:
        error = exc.error
        # The handshake's gate (a 2026-07-28 client has no handshake, and no gate).
        if (error.code, error.message, error.data) == (types.INVALID_PARAMS, BARE, "") \
                and ctx.session.client_params is None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            raise _refusal(f"the session is not initialized: send initialize first, then {ctx.method}") from None
        raise


def _refusal(reason: str) -> MCPError:
    return MCPError(types.INVALID_PARAMS, limits.cut(f"{BARE}: {reason}", limits.ERROR_CHARS))


def _problems(invalid: ValidationError) -> str:
    """The first few errors as `where: what`, the params' own path (not the model names pydantic adds)."""
    said = []
    for error in invalid.errors(include_url=False)[:MAX_PROBLEMS]:
        path = [str(part) for part in error["loc"] if not _model_name(part)]
        where = ".".join(path[1:] if path[:1] == ["params"] and len(path) > 1 else path)
        said.append(f"{where}: {error['msg']}" if where else error["msg"])
    return "; ".join(dict.fromkeys(said))


def _model_name(part: Any) -> bool:
    """Whether a location part names a model or union member (e.g. 'CallToolRequest'), not a field."""
    return isinstance(part, str) and part[:1].isupper()
