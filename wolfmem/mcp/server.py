"""The stdio MCP server over one Memory: the tools of wolfmem.tools, resources, prompts and log messages."""

from __future__ import annotations

import itertools
import logging
import os
import sys
import threading
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import mcp_types as types
from anyio.from_thread import BlockingPortal
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import ListenHandler
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.message import SessionMessage

from wolfmem import __version__, limits
from wolfmem.cancellation import Cancelled, cancellable, reporting
from wolfmem.errors import NotFound, UsageError, WolfmemError
from wolfmem.mcp import prompts
from wolfmem.mcp import resources as mcp_resources
from wolfmem.mcp.explain import explain_refusals
from wolfmem.mcp.inflight import InFlight, Replies
from wolfmem.mcp.link import ClientLink
from wolfmem.mcp.resources import MIME, Subscriptions
from wolfmem.mcp.stdio import answer, stdin_lines, stop_on_signals
from wolfmem.memory.facade import Memory
from wolfmem.search import query_dates
from wolfmem.tools import catalog as tool_catalog
from wolfmem.tools import dispatch as tools

log = logging.getLogger(__name__)

T = TypeVar("T")
Context = ServerRequestContext[Any]


def build_server(memory: Memory, link: ClientLink | None = None) -> Server[Any]:
    """An MCP server whose tools, resources and prompts call `memory`; Memory calls run in worker threads."""
    link = link or _link(memory)

    async def list_tools(ctx: Context, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_mcp_tool(tool) for tool in tool_catalog.TOOLS])

    async def call_tool(ctx: Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in tools.BY_NAME:
            # The spec's protocol error for an unknown tool; bad arguments to a known one are tool errors.
            raise _error(types.INVALID_PARAMS,
                         f"Unknown tool: {params.name}; the tools are: {', '.join(tools.BY_NAME)}")
        try:
            result = await in_worker(tools.execute, memory, params.name, params.arguments,
                                     progress=_progress(ctx))
        except Cancelled as exc:
            log.info("%s (request %s) stopped: %s", params.name, ctx.request_id, exc)
            raise _error(types.INTERNAL_ERROR, f"{params.name}: {exc}") from None
        return types.CallToolResult(
            content=[types.TextContent(text=result.text)],
            structured_content=result.data,
            is_error=result.is_error,
        )

    async def list_resources(ctx: Context, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(uri=item.uri, name=item.name, title=item.title, description=item.description,
                           mime_type=MIME)
            for item in mcp_resources.RESOURCES
        ])

    async def list_templates(ctx: Context, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[
            types.ResourceTemplate(uri_template=item.uri, name=item.name, title=item.title,
                                   description=item.description, mime_type=MIME)
            for item in mcp_resources.TEMPLATES
        ])

    async def read_resource(ctx: Context, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        text = await _resource_call(mcp_resources.read, memory, uri)
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=MIME, text=text)])

    async def subscribe(ctx: Context, params: types.SubscribeRequestParams) -> types.EmptyResult:
        link.attach(ctx.session)
        await _resource_call(link.subscriptions.add, str(params.uri))
        return types.EmptyResult()

    listen_streams = ListenHandler(link.bus)

    async def listen(ctx: Context, params: types.SubscriptionsListenRequestParams) -> types.SubscriptionsListenResult:
        # 2026-07-28: the stream is the reply; the resources it names are watched as subscribe watches them.
        link.attach(ctx.session)
        for uri in params.notifications.resource_subscriptions or ():
            await _resource_call(link.subscriptions.add, uri)
        return await listen_streams(ctx, params)

    async def unsubscribe(ctx: Context, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        link.subscriptions.remove(str(params.uri))
        return types.EmptyResult()

    async def list_prompts(ctx: Context, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[
            types.Prompt(name=prompt.name, title=prompt.title, description=prompt.description, arguments=[
                types.PromptArgument(name=arg.name, description=arg.description, required=arg.required)
                for arg in prompt.arguments
            ])
            for prompt in prompts.PROMPTS
        ])

    async def get_prompt(ctx: Context, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        prompt = prompts.BY_NAME.get(params.name)
        if prompt is None:
            raise _error(types.INVALID_PARAMS, f"Unknown prompt: {params.name}; the prompts are: "
                                               f"{', '.join(prompts.BY_NAME)}")
        try:
            text = prompt.render(params.arguments or {})
        except UsageError as exc:
            raise _error(types.INVALID_PARAMS, str(exc)) from None
        return types.GetPromptResult(description=prompt.description, messages=[
            types.PromptMessage(role="user", content=types.TextContent(text=text)),
        ])

    async def set_level(ctx: Context, params: types.SetLevelRequestParams) -> types.EmptyResult:
        link.attach(ctx.session)
        link.set_level(params.level)
        return types.EmptyResult()

    async def initialized(ctx: Context, params: types.NotificationParams) -> None:
        link.attach(ctx.session)

    async def cancelled(ctx: Context, params: types.CancelledNotificationParams) -> None:
        # The SDK has already cancelled the request's scope; its worker stops at its next checkpoint.
        log.info("client cancelled request %s (%s)", params.request_id, params.reason or "no reason given")

    with warnings.catch_warnings():
        # Logging is deprecated by the 2026-07-28 protocol, but 2025-11-25, which clients negotiate
        # over stdio today, still defines logging/setLevel: it is how warnings reach them.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        server: Server[Any] = Server(
            "wolfmem",
            version=__version__,
            title="wolfmem memory",
            instructions=tool_catalog.DOCTRINE,
            on_list_tools=list_tools,
            on_call_tool=call_tool,
            on_list_resources=list_resources,
            on_list_resource_templates=list_templates,
            on_read_resource=read_resource,
            on_subscribe_resource=subscribe,
            on_unsubscribe_resource=unsubscribe,
            on_subscriptions_listen=listen,
            on_list_prompts=list_prompts,
            on_get_prompt=get_prompt,
            on_set_logging_level=set_level,
        )
    server.middleware.append(explain_refusals)
    server.add_notification_handler("notifications/initialized", types.NotificationParams, initialized)
    server.add_notification_handler("notifications/cancelled", types.CancelledNotificationParams, cancelled)
    return server


def _progress(ctx: Context) -> Callable[[str], None] | None:
    """What tells the client each stage of its call begins, as progress notifications; None if it did not ask."""
    if ctx.meta is None or ctx.meta.get("progress_token") is None:
        return None
    steps = itertools.count(1)

    def report(stage: str) -> None:
        # Called in the worker thread: the notification is sent from the event loop, which is free.
        try:
            anyio.from_thread.run(ctx.session.report_progress, float(next(steps)), None, stage[:1].upper() + stage[1:])
        except Exception as exc:  # a client gone mid-call: the call itself goes on and ends as it would
            log.debug("progress for request %s not sent: %s", ctx.request_id, exc)

    return report


async def in_worker(call: Callable[..., T], *args: Any, progress: Callable[[str], None] | None = None) -> T:
    """Run a Memory call in a worker thread, where checkpoints see whether the request was cancelled.

    The await is shielded (anyio's default), so a cancelled request still waits for its worker:
    a save stops before it takes the vault lock, or completes, and is never abandoned half done.
    """
    # Memory blocks on file locks and the index; a worker thread keeps the server answering meanwhile.
    cancelled_class = anyio.get_cancelled_exc_class()

    def request_cancelled() -> bool:
        try:
            anyio.from_thread.check_cancelled()
        except cancelled_class:
            return True
        return False

    def work() -> T:
        with cancellable(request_cancelled), reporting(progress or _silent):
            return call(*args)

    return await anyio.to_thread.run_sync(work)


def _silent(stage: str) -> None:
    """No one listens for progress."""


async def _resource_call(call: Callable[..., T], *args: Any) -> T:
    """A resource read in a worker thread, its errors translated to the JSON-RPC errors the spec names."""
    try:
        return await in_worker(call, *args)
    except (UsageError, NotFound) as exc:
        raise _error(types.INVALID_PARAMS, str(exc)) from None
    except WolfmemError as exc:
        raise _error(types.INTERNAL_ERROR, str(exc)) from None


def _error(code: int, message: str) -> MCPError:
    """A JSON-RPC error, its message cut short: it may quote a name or URI of any length."""
    return MCPError(code, limits.cut(message, limits.ERROR_CHARS))


def _mcp_tool(tool: tool_catalog.Tool) -> types.Tool:
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.parameters,
        output_schema=tool.output_schema,
        annotations=types.ToolAnnotations(
            title=tool.title,
            read_only_hint=tool.read_only,
            destructive_hint=tool.destructive,
            idempotent_hint=tool.idempotent,
            open_world_hint=False,
        ),
    )


def serve(memory: Memory) -> int | None:
    """Serve MCP over stdin/stdout until EOF, SIGINT or SIGTERM; the signal that stopped it, if one did.

    Logs go to stderr, never stdout.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("wolfmem")
    root.setLevel(logging.INFO)
    root.addHandler(handler)
    log.info("serving MCP over stdio for vault %s (pid %d)", memory.vault.root, os.getpid())
    heard: list[int] = []
    try:
        anyio.run(_serve, memory, heard)
    except* BrokenPipeError:
        # A killed client closes its end of stdout; the next reply meets the closed pipe. That is
        # a normal end, as EOF on stdin is, not a crash.
        log.info("stdout closed: the client is gone; stopping")
        # Nothing more can reach it, and a flush at exit would fail the same way.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    log.info("stopped")
    return heard[0] if heard else None


def _link(memory: Memory) -> ClientLink:
    """The channel for notifications about `memory`'s resources and log records."""
    return ClientLink(Subscriptions(lambda uri: mcp_resources.read(memory, uri)))


async def _serve(memory: Memory, heard: list[int]) -> None:
    link = _link(memory)
    server = build_server(memory, link)
    root = logging.getLogger("wolfmem")
    async with anyio.create_task_group() as tasks, BlockingPortal() as portal:
        link.start(portal, tasks)
        root.addHandler(link)
        # A long-lived server: a file watcher spares each search the stat scan of the whole vault,
        # and tells subscribed clients when the map or a file they read changed.
        memory.watch(link.vault_changed)
        threading.Thread(target=query_dates.prepare, name="wolfmem-dates", daemon=True).start()
        serving = anyio.CancelScope()
        tasks.start_soon(stop_on_signals, serving, heard)
        try:
            with serving:
                answers, answered = anyio.create_memory_object_stream[SessionMessage](100)
                inflight = InFlight()
                lines: Any = stdin_lines(answers, inflight)  # the SDK takes any async iterable of lines
                async with (
                    stdio_server(stdin=lines) as (read_stream, write_stream),
                    anyio.create_task_group() as wire,
                ):
                    replies = Replies(write_stream, inflight)
                    wire.start_soon(answer, answered, replies)
                    await server.run(read_stream, replies, server.create_initialization_options())
                    wire.cancel_scope.cancel()
        finally:
            root.removeHandler(link)
            link.stop()
            tasks.cancel_scope.cancel()
