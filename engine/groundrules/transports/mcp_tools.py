"""MCP: the registry's tools served through the `mcp` SDK (v2), over stdio or Streamable HTTP.

The server lists and calls tools through `Service` alone. Listing shows the caller only the tools
its role may call; a call hands the raw arguments to `Service.call` (no SDK-side validation, so
every refusal is our envelope with its stable code), and the envelope comes back as the result's
structured content, `isError` when `ok` is false. Which caller is asking is the transport's
business: a fixed operator over stdio, a bearer token's principal over HTTP.

A session lists the toolsets it has enabled (rules/toolsets.yaml): its role's defaults, or the
starting set `toolsets=` names (`serve --toolsets`), and the always-listed list_toolsets and
enable_toolset. An enable_toolset that answers ok adds its toolset to the session's set and sends
notifications/tools/list_changed; a call of a tool the role may call in a toolset the session has
not enabled is refused by the registry with TOOLSET_NOT_ENABLED, naming the toolset. A connection
with no session (the 2026-07-28 protocol, or a stateless HTTP server: each request its own) has
nothing to enable into, so it lists every tool the role may call, as the library answers. `tools=`
(`--tools`) picks what the server serves at all; toolsets act within it, and only while it serves
enable_toolset.

The server declares only what it serves (tools, and as resources the guides a model reads beside
the listing, guides.py: no prompts or subscriptions), names the package version in `serverInfo`, lists each tool's annotations from its schema file, and
answers a tool it does not serve (unknown, or left out by `tools=`) with the protocol error the
spec lists for it (-32602), carrying the registry's envelope as the error's data; a resource it
does not have with the spec's -32002.
"""
from __future__ import annotations

import signal
from importlib.metadata import version
from typing import Any, Callable, Iterable

import anyio
from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, Resource as MCPResource, TextContent, Tool as MCPTool, \
    ToolAnnotations

from ..core import canonical, codes, limits
from ..api import TOOLS, Caller, Service
from ..core.errors import GroundrulesError, closest, echo, refusal
from .dispatch import Dispatcher
from ..guides import GUIDES, MIME, SCHEME, guide_text
from .mcp_sdk import ReadResourceContents, declare_tools_changed, list_tools_with, serve_streams, session_state, \
    unserve
from .settings import ServerSettings
from .stdio_guard import WireLimits, guarded_stdio
from ..results import Envelope

SERVER_NAME = "groundrules"
# What MCPServer registers whether or not anything is there to serve; capabilities follow the
# registered handlers, so these go (a request for one then answers -32601, method not found).
UNSERVED = ("prompts/list", "prompts/get")
RESOURCE_NOT_FOUND = -32002          # the spec's code for a resource the server does not have
ENABLED = "groundrules/toolsets"     # a session's state: role -> the toolsets it has enabled
ALL_TOOLSETS = "all"                 # `--toolsets all`: every toolset from the start


class ToolServer(MCPServer):
    """An MCPServer whose tools are the registry's (or the subset `tools` names), for the caller
    `caller()` names; calls run through the dispatcher (worker threads in lanes, a turn per principal)."""

    def __init__(self, service: Service, caller: Callable[[], Caller], *, tools: Iterable[str] | None = None,
                 toolsets: Iterable[str] | None = None, dispatcher: Dispatcher | None = None,
                 sessions: bool = True, **settings: Any):
        super().__init__(SERVER_NAME, version=version("groundrules"), log_level="WARNING", subscriptions=False,
                         **settings)
        unserve(self, UNSERVED)
        self._dispatcher = dispatcher or Dispatcher(service, ServerSettings())
        self._caller = caller
        self._served = frozenset(TOOLS if tools is None else tools)
        # a session's starting toolsets: None, its role's defaults; ALL_TOOLSETS among them, every one
        self._starting = None if toolsets is None else frozenset(toolsets)
        self._sessions = sessions             # False: a stateless HTTP server, each request its own connection
        list_tools_with(self, self.session_tools)
        declare_tools_changed(self)

    async def session_tools(self, request_context: Any) -> list[MCPTool]:
        """tools/list: what the session asking lists (every tool served that its role may call,
        of the toolsets it has enabled)."""
        caller = self._caller()
        return self._listing(caller, self._enabled(request_context, caller))

    def _listing(self, caller: Caller, enabled: frozenset[str] | None) -> list[MCPTool]:
        service = self._dispatcher.service
        compact = self._dispatcher.settings.listing == "compact"
        toolsets = service.toolsets                  # not None where a session has enabled toolsets (_enabled)
        return [MCPTool(name=t.name, description=t.description, input_schema=t.input_schema,
                        output_schema=t.output_schema, annotations=ToolAnnotations.model_validate(t.annotations))
                for t in service.listings(caller, compact=compact)
                if t.name in self._served and (enabled is None or toolsets is None or toolsets.listed(t.name, enabled))]

    def _enabled(self, request_context: Any, caller: Caller) -> frozenset[str] | None:
        """The toolsets the session of this request has enabled (set on its first request), or None
        when every tool is listed: no session, no toolsets table, or enable_toolset not served."""
        table = self._dispatcher.service.toolsets
        state = None if request_context is None or not self._sessions else session_state(request_context)
        if table is None or state is None or "enable_toolset" not in self._served:
            return None
        sets = state.setdefault(ENABLED, {})
        if caller.role not in sets:
            always = {t.name for t in table.toolsets.values() if t.always}
            sets[caller.role] = table.starting(caller.role) if self._starting is None \
                else frozenset(table.toolsets) if ALL_TOOLSETS in self._starting else frozenset(always | self._starting)
        return sets[caller.role]

    async def list_resources(self) -> list[MCPResource]:
        return [MCPResource(uri=g.uri, name=g.name, title=g.title, description=g.description, mime_type=MIME)
                for g in GUIDES]

    async def read_resource(self, uri: Any, context: Any = None) -> list[ReadResourceContents]:
        text = str(uri)
        found = guide_text(self._dispatcher.service, text.removeprefix(SCHEME)) if text.startswith(SCHEME) else None
        if found is None:
            messages = self._speaker(lang_of(context, self._dispatcher.service.messages.languages)).messages
            raise MCPError(RESOURCE_NOT_FOUND, messages.message("resource_unknown", uri=echo(text)),
                           data={"uri": echo(text)})
        return [ReadResourceContents(content=found, mime_type=MIME)]

    def _speaker(self, lang: str | None) -> Service:
        """The service answering in `lang` (the server's own for a language the catalogue lacks)."""
        try:
            return self._dispatcher.service.speaking(lang)
        except GroundrulesError:
            return self._dispatcher.service

    def _unknown(self, name: Any, caller: Caller, lang: str | None = None) -> MCPError:
        """The protocol error for a tool this server does not serve, carrying the registry's refusal
        in the caller's language."""
        service = self._speaker(lang)
        visible = [t.name for t in service.listings(caller) if t.name in self._served]
        refused = service.unknown_tool(name, visible)
        envelope = canonical.envelope(ok=False, error=refused.as_dict(), rulebook=service.book.version)
        return MCPError(INVALID_PARAMS, refused.message, data=envelope)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> CallToolResult:
        caller = self._caller()
        lang = lang_of(context, self._dispatcher.service.messages.languages)
        if not (isinstance(name, str) and name in self._served and name in TOOLS):
            raise self._unknown(name, caller, lang)
        try:
            request_context = context.request_context
        except (AttributeError, ValueError):                # no context, or one outside a request
            request_context = None
        enabled = self._enabled(request_context, caller)
        envelope = await self._dispatcher.call(name, arguments, caller, lang=lang, toolsets=enabled)
        if name == "enable_toolset" and envelope["ok"] and enabled is not None:
            state = session_state(request_context)
            assert state is not None, "enabled is read from this session's state (_enabled)"
            sets = state[ENABLED]                                # as it is now: another call may have enabled one
            added = envelope["data"]["toolset"]
            if added not in sets[caller.role]:
                sets[caller.role] = sets[caller.role] | {added}
                await request_context.session.send_tool_list_changed()
        return result_of(envelope)


LANG_META = "groundrules/lang"     # a tools/call's _meta key naming the language of its answer


def lang_of(context: Any, offered: tuple) -> str | None:
    """The language a tools/call asks its answer in: its `_meta` "groundrules/lang" (any value, so
    that one the catalogue does not offer is refused, as Service.call refuses it), else the first
    language of an HTTP request's Accept-Language the catalogue offers, else None (the server's)."""
    try:
        request = context.request_context
    except (AttributeError, ValueError):                # no context, or one outside a request
        return None
    meta = request.meta or {}
    if LANG_META in meta:
        return meta[LANG_META]
    headers = getattr(request.request, "headers", None)
    return accepted(headers.get("accept-language", ""), offered) if headers is not None else None


def accepted(header: str, offered: tuple) -> str | None:
    """The offered language an Accept-Language header prefers most (RFC 9110: by q, then order;
    a tag counts by its primary subtag, en-GB as en), or None."""
    ranked = []
    for n, part in enumerate(header.split(",")[:20]):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                continue
        primary = tag.strip().lower().split("-")[0]
        if primary in offered and q > 0:
            ranked.append((-q, n, primary))
    return min(ranked)[2] if ranked else None


def result_of(envelope: Envelope) -> CallToolResult:
    return CallToolResult(is_error=not envelope["ok"], structured_content=envelope,
                          content=[TextContent(type="text", text=canonical.dumps(envelope, indent=None))])


def select_tools(service: Service, names: Iterable[str]) -> frozenset[str]:
    """The tools a server is to serve, from names an operator gives (`--tools`): a ledger's group
    (findings, evidence), `stateless` (the parts that need no ledger), a role of rules/roles.yaml
    (what it may call) or a tool's own name."""
    groups = {group: {n for n, t in TOOLS.items() if t.ledger == ledger}
              for group, ledger in (("findings", "findings"), ("evidence", "evidence"), ("stateless", ""))}
    for role in service.roles.roles:
        groups.setdefault(role, {n for n in TOOLS if service.roles.may_call(role, n)})
    chosen: set[str] = set()
    for name in names:
        if name in groups:
            chosen |= groups[name]
        elif name in TOOLS:
            chosen.add(name)
        else:
            close = closest(name, [*groups, *TOOLS])
            raise refusal(codes.USAGE, "usage.tools_unknown_close" if close else "usage.tools_unknown",
                          name=echo(name), closest=close, groups=list(groups))
    if not chosen:
        raise refusal(codes.USAGE, "usage.tools_none")
    return frozenset(chosen)


def select_toolsets(service: Service, names: Iterable[str]) -> frozenset[str]:
    """The toolsets a session starts with, from names an operator gives (`--toolsets`): toolsets of
    rules/toolsets.yaml, or `all`."""
    known = [*(service.toolsets.toolsets if service.toolsets is not None else ()), ALL_TOOLSETS]
    chosen = frozenset(names)
    for name in chosen:
        if name not in known:
            close = closest(name, known)
            raise refusal(codes.USAGE, "usage.toolsets_unknown_close" if close else "usage.toolsets_unknown",
                          name=echo(name), closest=close, toolsets=known)
    return chosen


def serve_stdio(service: Service, caller: Caller, *, tools: Iterable[str] | None = None,
                toolsets: Iterable[str] | None = None,
                grace_s: float = ServerSettings.grace_s, settings: ServerSettings | None = None) -> None:
    """Serve every tool the caller's role may call (of `tools`, when given) over stdin/stdout until
    the client hangs up or SIGTERM; every line is answered, garbage with a JSON-RPC error
    (stdio_guard). SIGTERM drains as over HTTP: the calls running are answered (within `grace_s`,
    then abandoned: none commits unanswered) before the server returns and its ledgers close."""
    server = ToolServer(service, lambda: caller, tools=tools, toolsets=toolsets,
                        dispatcher=Dispatcher(service, settings) if settings is not None else None)
    served = frozenset(TOOLS if tools is None else tools)
    limits = wire_limits(service)

    async def run() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(_drain_on_sigterm, group.cancel_scope, server._dispatcher, grace_s)
            async with guarded_stdio(limits, answer=lambda request: non_object_arguments(service, request, caller,
                                                                                          served)) \
                    as (read_stream, write_stream):
                await serve_streams(server, read_stream, write_stream)
            group.cancel_scope.cancel()
    anyio.run(run)


ANSWERED_S = 0.2          # after the last call's thread returns: for its answer to be written


async def _drain_on_sigterm(scope: anyio.CancelScope, dispatcher: Dispatcher, grace_s: float) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            break
    deadline = anyio.current_time() + grace_s
    while dispatcher.running and anyio.current_time() < deadline:
        await anyio.sleep(0.02)
    if dispatcher.running:
        dispatcher.abandon_all()
        await anyio.to_thread.run_sync(dispatcher.wait_idle, 1.0)
    await anyio.sleep(ANSWERED_S)
    scope.cancel()


def non_object_arguments(service: Service, request: dict, caller: Caller,
                         served: frozenset = frozenset(TOOLS)) -> dict | None:
    """The result of a tools/call of a served tool whose arguments are not an object (null
    included): the registry's envelope, not the SDK's bare -32602 (nor, for null, a call as if
    given {}), so every transport refuses it alike. None for any other message (a tool not served
    is the SDK's -32602, as an unknown tool is)."""
    params = request.get("params")
    if request.get("method") != "tools/call" or "id" not in request or not isinstance(params, dict) \
            or not isinstance(params.get("name"), str) or params["name"] not in served \
            or "arguments" not in params or isinstance(params["arguments"], dict):
        return None
    meta = params.get("_meta")
    lang = meta.get(LANG_META) if isinstance(meta, dict) else None
    return result_of(service.call(params["name"], params["arguments"], caller, decoded=True, lang=lang)).model_dump(
        by_alias=True, exclude_none=True)


def wire_limits(service: Service) -> WireLimits:
    """The wire limits (stdio and HTTP) of the `limits` table (rules/limits.yaml), or the defaults without one."""
    table = limits.of(service.book)
    wire = table.wire if table is not None else {}
    return WireLimits(**wire, messages=service.messages)
