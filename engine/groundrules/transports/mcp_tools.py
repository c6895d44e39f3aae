"""MCP: the registry's tools served through the `mcp` SDK (v2), over stdio or Streamable HTTP.

The server lists and calls tools through `Service` alone. Listing shows the caller only the tools
its role may call; a call hands the raw arguments to `Service.call` (no SDK-side validation, so
every refusal is our envelope with its stable code), and the envelope comes back as the result's
structured content, `isError` when `ok` is false. Which caller is asking is the transport's
business: a fixed operator over stdio, a bearer token's principal over HTTP.
"""
from __future__ import annotations

from typing import Any, Callable

import anyio
from mcp.server import MCPServer
from mcp.types import CallToolResult, TextContent, Tool as MCPTool

from .. import canonical, limits
from ..api import Caller, Service
from .dispatch import Dispatcher
from .settings import ServerSettings
from .stdio_guard import WireLimits, guarded_stdio

SERVER_NAME = "groundrules"


class ToolServer(MCPServer):
    """An MCPServer whose tools are the registry's, for the caller `caller()` names; calls run
    through the dispatcher (worker threads in lanes, a turn per principal)."""

    def __init__(self, service: Service, caller: Callable[[], Caller], *, dispatcher: Dispatcher | None = None,
                 **settings: Any):
        super().__init__(SERVER_NAME, log_level="WARNING", **settings)
        self._dispatcher = dispatcher or Dispatcher(service, ServerSettings())
        self._caller = caller

    async def list_tools(self) -> list[MCPTool]:
        return [MCPTool(name=t.name, description=t.description, input_schema=t.input_schema,
                        output_schema=t.output_schema)
                for t in self._dispatcher.service.listings(self._caller())]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> CallToolResult:
        return result_of(await self._dispatcher.call(name, arguments, self._caller()))


def result_of(envelope: dict) -> CallToolResult:
    return CallToolResult(is_error=not envelope["ok"], structured_content=envelope,
                          content=[TextContent(type="text", text=canonical.dumps(envelope, indent=None))])


def serve_stdio(service: Service, caller: Caller) -> None:
    """Serve every tool the caller's role may call over stdin/stdout until the client hangs up;
    every line is answered, garbage with a JSON-RPC error (stdio_guard)."""
    server = ToolServer(service, lambda: caller)
    limits = wire_limits(service)

    async def run() -> None:
        async with guarded_stdio(limits, answer=lambda request: non_object_arguments(service, request, caller)) \
                as (read_stream, write_stream):
            lowlevel = server._lowlevel_server        # what the SDK's own run_stdio_async drives
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
    anyio.run(run)


def non_object_arguments(service: Service, request: dict, caller: Caller) -> dict | None:
    """The result of a tools/call whose arguments are not an object (null included): the
    registry's envelope, not the SDK's bare -32602 (nor, for null, a call as if given {}), so every
    transport refuses it alike. None for any other message."""
    params = request.get("params")
    if request.get("method") != "tools/call" or "id" not in request or not isinstance(params, dict) \
            or not isinstance(params.get("name"), str) or "arguments" not in params \
            or isinstance(params["arguments"], dict):
        return None
    return result_of(service.call(params["name"], params["arguments"], caller)).model_dump(
        by_alias=True, exclude_none=True)


def wire_limits(service: Service) -> WireLimits:
    """The wire limits (stdio and HTTP) of the `limits` table (rules/limits.yaml), or the defaults without one."""
    table = limits.of(service.book)
    return WireLimits(**table.wire) if table is not None else WireLimits()
