"""Toolsets over Streamable HTTP (issue 32): the same session code as stdio, on a real server.

An agent's session (the initialize handshake: the TypeScript SDK's, the Inspector's) lists its
default toolsets; a call of a tool it has not enabled is refused naming the toolset; enable_toolset
adds it, and notifications/tools/list_changed reaches the client on its GET stream. Another
session of the same token starts from the defaults again.
"""
from __future__ import annotations

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from groundrules.api import TOOLS
from http_support import CALLERS

AGENT_A = next(t for t, (_, role, _) in CALLERS.items() if role == "agent")
FOLD = {"now": "2030-01-02T00:00:00Z", "records": [], "interpretations": []}


def test_an_http_session_enables_a_toolset_and_is_told_its_listing_changed(server):
    url, service = server
    table = service.toolsets
    tool = "fold_evidence"
    toolset = table.of_tool(tool).name
    assert toolset not in table.starting("agent")
    changed = anyio.Event()

    async def handler(message):
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            changed.set()

    async def session(body):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {AGENT_A}"}, timeout=60)
        with anyio.fail_after(60):
            async with Client(streamable_http_client(url, http_client=http), mode="legacy",
                              message_handler=handler) as client:
                return await body(client)

    async def names(client):
        return [t.name for t in (await client.list_tools()).tools]

    async def first(client):
        before = await names(client)
        refused = (await client.call_tool(tool, FOLD)).structured_content
        enabled = (await client.call_tool("enable_toolset", {"toolset": toolset})).structured_content
        await changed.wait()                       # bounded by the session's fail_after
        return before, refused, enabled, await names(client), (await client.call_tool(tool, FOLD)).structured_content

    async def second(client):
        return await names(client)
    before, refused, enabled, after, answer = anyio.run(session, first)
    may = [n for n in TOOLS if service.roles.may_call("agent", n)]
    assert before == [n for n in may if table.of_tool(n).name in table.starting("agent")]
    assert refused["error"]["code"] == "TOOLSET_NOT_ENABLED" and f'"{toolset}"' in refused["error"]["message"]
    assert enabled["ok"] and tool in enabled["data"]["tools"]
    assert after == [n for n in may if n in before or table.of_tool(n).name == toolset]
    assert answer["ok"] and answer["data"] == service.call(tool, FOLD, service_caller())["data"]
    assert anyio.run(session, second) == before


def service_caller():
    from groundrules import Caller
    principal, role, projects = CALLERS[AGENT_A]
    return Caller(principal, role, tuple(projects))


def test_a_stateless_server_keeps_no_session_so_it_lists_every_tool(server, tmp_path):
    """`--stateless`: each request its own connection, nothing to enable into: every tool the role
    may call is listed and answered, even to a client that sent initialize."""
    from http_support import serving, tool_names, write_tokens
    from groundrules.transports.settings import ServerSettings
    _, service = server
    with serving(service, write_tokens(tmp_path / "tokens.yaml", CALLERS), ServerSettings(stateless=True)) as (url, _):
        listed = tool_names(url, AGENT_A, mode="legacy")
    assert listed == [n for n in TOOLS if service.roles.may_call("agent", n)]
