"""The one seam with the `mcp` SDK: every use of it beyond its public API, and nowhere else.

groundrules needs six things the SDK (2.3) offers no public name for: to stop serving the
prompt and resource methods MCPServer registers unasked (so its capabilities list only tools), to
drive the low-level server over the guarded stdio streams, to build those streams, to decide
which new HTTP session is admitted and learn when one ends (a share per principal, a drain), to
list tools per session (MCPServer's list_tools is given no request) with the state a session keeps
across its requests (the toolsets it enabled), and to declare `tools.listChanged`. Each
is done here through the SDK's private names, so a release that moves one breaks this module and
its contract test (tests/mcp/test_sdk_seam.py) first, not a session cap in production.
`pyproject.toml` pins `mcp` to `TESTED`, the releases that test was run against.
"""
from __future__ import annotations

import contextvars
from typing import Any, Awaitable, Callable, Iterable, Mapping

from mcp.server import MCPServer
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared._context_streams import create_context_streams
from mcp.types import ListToolsResult, Tool
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

# The releases of `mcp` this seam is tested against; pyproject.toml's dependency says the same.
TESTED = ">=2.3,<2.4"

__all__ = ["TESTED", "ReadResourceContents", "SessionManager", "create_context_streams", "declare_tools_changed",
           "list_tools_with", "lowlevel", "serve_streams", "session_state", "unserve"]

_SCOPE: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar("groundrules_session_scope", default={})


def lowlevel(server: MCPServer) -> Server:
    """The low-level server an MCPServer drives (what its session manager and stdio loop run)."""
    return server._lowlevel_server


def unserve(server: MCPServer, methods: Iterable[str]) -> None:
    """Stop serving `methods`: a request for one then answers -32601, and the capabilities the
    server declares (derived from its handlers) no longer list them."""
    handlers = lowlevel(server)._request_handlers
    for method in methods:
        handlers.pop(method, None)


def list_tools_with(server: MCPServer, listing: Callable[[Any], Awaitable[list[Tool]]]) -> None:
    """Answer tools/list with `listing(request_context)`: the tools of the session asking."""
    low = lowlevel(server)
    entry = low.get_request_handler("tools/list")

    async def handle(request_context: Any, params: Any) -> ListToolsResult:
        return ListToolsResult(tools=await listing(request_context))
    low.add_request_handler("tools/list", entry.params_type, handle)


def declare_tools_changed(server: MCPServer) -> None:
    """Declare `tools: {listChanged: true}` in every initialize answer, over stdio and HTTP alike
    (both build it from the low-level server's initialization options)."""
    low = lowlevel(server)
    made = low.create_initialization_options

    def options(notification_options: Any = None, *args: Any, **kwargs: Any) -> Any:
        return made(NotificationOptions(tools_changed=True), *args, **kwargs)
    low.create_initialization_options = options  # type: ignore[method-assign]


def session_state(request_context: Any) -> dict | None:
    """The state a client's session keeps across its requests (a mutable dict), or None when its
    connection lives for one request (the 2026-07-28 protocol: no initialize, no session)."""
    connection = request_context.session._connection
    if connection.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return None
    return connection.state


async def serve_streams(server: MCPServer, read_stream: Any, write_stream: Any) -> None:
    """Serve one session over the given streams, as the SDK's own `run_stdio_async` does over its."""
    low = lowlevel(server)
    await low.run(read_stream, write_stream, low.create_initialization_options())


class SessionManager(StreamableHTTPSessionManager):
    """The SDK's Streamable HTTP session manager with public hooks: `admits` decides whether a new
    session opens (after the SDK's own cap), `opened` and `closed` are told of each session once,
    with the principal that opened it ('' without a token)."""

    def admits(self, principal: str, scope: Mapping[str, Any]) -> bool:
        return True

    def opened(self, principal: str, scope: Mapping[str, Any]) -> None:
        pass

    def closed(self, principal: str) -> None:
        pass

    def owner_of(self, session_id: str) -> str | None:
        """The principal that opened a live session, or None when no such session is open."""
        if session_id not in self._server_instances:
            return None
        owner = self._session_owners.get(session_id)
        return owner["client_id"] if owner else ""

    def open_sessions(self) -> list[str]:
        """The ids of the sessions open now."""
        return list(self._server_instances)

    async def close_all(self) -> None:
        """End every open session (a drained server's last step: GET streams close with them)."""
        for session_id, transport in list(self._server_instances.items()):
            await self._discard_session(session_id, transport)

    # The SDK's private steps, overridden to call the hooks above.
    async def _handle_stateful_request(self, scope: Any, receive: Any, send: Any) -> None:
        token = _SCOPE.set(scope)                     # _admit_session is not given the request
        try:
            await super()._handle_stateful_request(scope, receive, send)
        finally:
            _SCOPE.reset(token)

    def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
        principal = requestor["client_id"] if requestor else ""
        scope = _SCOPE.get()
        if not self.admits(principal, scope):
            return None
        transport = super()._admit_session(requestor)
        if transport is not None:
            self.opened(principal, scope)
        return transport

    async def _discard_session(self, session_id: str, transport: StreamableHTTPServerTransport) -> None:
        owner = self.owner_of(session_id)             # None when already discarded: told once
        await super()._discard_session(session_id, transport)
        if owner is not None:
            self.closed(owner)

