"""A real groundrules HTTP server on loopback, and the SDK's client to reach it (imported by name).

`running(service, tokens_file)` starts uvicorn on a free port in a thread of this process (a
real TCP server: the SDK app, its token middleware, its Host check); `agent_calls` opens one
MCP connection with a bearer token and runs calls on it, as an agent host would.
"""
from __future__ import annotations

import asyncio
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import anyio
import httpx2
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from groundrules.transports import http_serve
from groundrules.transports.mcp_http import GrantsVerifier, http_app
from groundrules.transports.settings import ServerSettings
from groundrules.transports.tokens import token_digest

HOST = "127.0.0.1"
REDACTION_KEY = b"kept by the server, never in the database"
# token -> (principal, role, projects)
CALLERS = {"tok-alpha": ("agent-a", "agent", ["alpha"]),
           "tok-beta": ("agent-b", "agent", ["beta"]),
           "tok-review": ("user:alice", "reviewer", ["alpha", "beta"])}


def write_tokens(path: Path, callers: dict) -> Path:
    """A tokens file for {token: (principal, role, [projects])}, in the shape the issue shows."""
    entries = [{"sha256": token_digest(token), "principal": p, "role": r, "projects": list(projects)}
               for token, (p, r, projects) in callers.items()]
    path.write_text(yaml.safe_dump({"tokens": entries}, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


@contextmanager
def running(service, tokens_file: Path, settings: ServerSettings | None = None) -> Iterator[str]:
    """The /mcp URL of a server for `service` guarded by `tokens_file`, until the block ends."""
    with serving(service, tokens_file, settings) as (url, _served):
        yield url


@contextmanager
def serving(service, tokens_file: Path, settings: ServerSettings | None = None) -> Iterator[tuple]:
    """(URL, the served app: its guard, sessions, dispatcher) of a running server."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, 0))
    port = sock.getsockname()[1]
    verifier = GrantsVerifier(tokens_file, service.roles.roles)
    settings = settings or ServerSettings()
    app = http_app(service, verifier, host=HOST, port=port, settings=settings)
    server = http_serve.server(app, host=HOST, port=port, settings=settings)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the HTTP server did not start")
        time.sleep(0.02)
    try:
        yield f"http://{HOST}:{port}/mcp", app
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


async def session_calls(url: str, token: str, calls: list, *, mode: str = "auto") -> list[dict]:
    """Open one MCP connection as `token` and return the envelope of each (tool, arguments)."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        out = []
        for tool, arguments in calls:
            result = await client.call_tool(tool, arguments)
            assert result.is_error == (not result.structured_content["ok"])
            out.append(result.structured_content)
        return out


def agent_calls(url: str, token: str, calls: list, *, mode: str = "auto") -> list[dict]:
    return anyio.run(lambda: session_calls(url, token, calls, mode=mode))


def call(url: str, token: str, tool: str, arguments: dict, *, mode: str = "auto") -> dict:
    return agent_calls(url, token, [(tool, arguments)], mode=mode)[0]


def tool_names(url: str, token: str, *, mode: str = "auto") -> list[str]:
    async def run() -> list[str]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            return [t.name for t in (await client.list_tools()).tools]
    return anyio.run(run)
