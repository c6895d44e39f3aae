"""The contract of the one seam with the `mcp` SDK (transports/mcp_sdk.py), run against the SDK
installed: what the seam promises (sessions counted per principal, admission refused at a share,
every session's end told once, a drain that closes them all; tools alone served over the streams
it builds) on a real server on loopback. When a release of the SDK moves a private name the seam
uses, these tests fail here, naming it, before any per-principal cap or drain test does."""
from __future__ import annotations

import ast
import asyncio
import inspect
import json
import socket
import threading
import time
import tomllib
from collections import Counter
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path

import anyio
import pytest
import uvicorn
from mcp.server import MCPServer
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.shared.message import SessionMessage
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route

from groundrules.transports import mcp_sdk
from groundrules.transports.mcp_tools import UNSERVED
from groundrules.transports.stdio_guard import WireLimits, message
import engine_source
from wire import Wire

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"


# ------------------------------------------------------------------------------ the pin

def test_the_sdk_installed_is_one_the_seam_is_tested_against_and_the_dependency_says_so():
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    pinned = [Requirement(d).specifier for d in dependencies if Requirement(d).name == "mcp"]
    assert pinned == [SpecifierSet(mcp_sdk.TESTED)]
    assert version("mcp") in SpecifierSet(mcp_sdk.TESTED)


def test_the_private_steps_the_seam_overrides_keep_their_signatures():
    """The session manager calls these three on itself; an override with the wrong shape is never
    called (or called wrong), so the per-principal count would silently stop."""
    for name, parameters in (("_handle_stateful_request", ["self", "scope", "receive", "send"]),
                             ("_admit_session", ["self", "requestor"]),
                             ("_discard_session", ["self", "session_id", "transport"])):
        step = getattr(StreamableHTTPSessionManager, name, None)
        assert step is not None, f"the SDK's session manager has no {name} any more"
        assert list(inspect.signature(step).parameters) == parameters, name


# ------------------------------------------------------------------------------ sessions

class Recording(mcp_sdk.SessionManager):
    """The seam's manager with a share of `per_principal` sessions, recording every hook call."""

    def __init__(self, app, *, per_principal: int, **options):
        super().__init__(app, **options)
        self.per_principal, self.refusing = per_principal, False
        self.held: Counter = Counter()
        self.events: list[tuple[str, str]] = []
        self.paths: list[str] = []

    def admits(self, principal, scope):
        return not self.refusing and self.held[principal] < self.per_principal

    def opened(self, principal, scope):
        self.held[principal] += 1
        self.events.append(("opened", principal))
        self.paths.append(scope["path"])

    def closed(self, principal):
        self.held[principal] -= 1
        self.events.append(("closed", principal))


class Tokens(TokenVerifier):
    """tok-<name> is the principal <name>."""

    async def verify_token(self, token: str) -> AccessToken | None:
        if not token.startswith("tok-"):
            return None
        return AccessToken(token=token, client_id=token[4:], scopes=[], claims={"role": "agent"})


@contextmanager
def seam_server(per_principal: int, **options):
    """(URL, the manager) of the seam's session manager behind the SDK's bearer check, on loopback."""
    manager = Recording(mcp_sdk.lowlevel(MCPServer("seam")), per_principal=per_principal, json_response=True,
                        **options)
    app = Starlette(routes=[Route("/mcp", endpoint=RequireAuthMiddleware(StreamableHTTPASGIApp(manager), [], None))],
                    middleware=[Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(Tokens())),
                                Middleware(AuthContextMiddleware)],
                    lifespan=lambda _app: manager.run())
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((HOST, 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=lambda: loop.run_until_complete(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    try:
        yield f"http://{HOST}:{sock.getsockname()[1]}/mcp", manager, loop
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def test_sessions_are_counted_per_principal_and_a_principal_at_its_share_is_refused():
    with seam_server(per_principal=2) as (url, manager, _loop):
        alpha, beta = Wire(url, "tok-alpha"), Wire(url, "tok-beta")
        first, second = alpha.session(), alpha.session()
        assert manager.owner_of(first) == manager.owner_of(second) == "alpha"
        refused = alpha.open_session()
        assert refused.status_code == 503 and "mcp-session-id" not in refused.headers
        assert beta.session() in manager.open_sessions()          # another principal still gets in
        assert manager.held == Counter(alpha=2, beta=1) and manager.paths == ["/mcp"] * 3
        assert manager.owner_of("no-such-session") is None


def test_a_session_is_bound_to_its_principal():
    with seam_server(per_principal=2) as (url, manager, _loop):
        session = Wire(url, "tok-alpha").session()
        assert Wire(url, "tok-beta").call(session, "anything", {}).status_code == 404
        assert manager.events == [("opened", "alpha")]


def test_every_end_of_a_session_is_told_once_and_frees_its_place():
    with seam_server(per_principal=1, session_idle_timeout=0.3) as (url, manager, _loop):
        alpha, beta = Wire(url, "tok-alpha"), Wire(url, "tok-beta")
        assert alpha.close(alpha.session()) in (200, 204)         # the client's DELETE
        beta.session()                                              # then left idle
        deadline = time.monotonic() + 30
        while manager.held["beta"]:
            assert time.monotonic() < deadline, "the idle session was never closed"
            time.sleep(0.05)
        assert Counter(manager.events) == Counter({("opened", "alpha"): 1, ("closed", "alpha"): 1,
                                                   ("opened", "beta"): 1, ("closed", "beta"): 1})
        assert alpha.session() and manager.open_sessions()          # the places are free again


def test_a_drain_admits_no_session_and_closes_every_open_one():
    with seam_server(per_principal=3) as (url, manager, loop):
        alpha = Wire(url, "tok-alpha")
        sessions = [alpha.session(), alpha.session(), Wire(url, "tok-beta").session()]
        manager.refusing = True
        assert alpha.open_session().status_code == 503
        asyncio.run_coroutine_threadsafe(manager.close_all(), loop).result(30)
        assert manager.open_sessions() == [] and +manager.held == Counter()
        assert [alpha.call(s, "anything", {}).status_code for s in sessions[:2]] == [404, 404]
        assert sorted(manager.events).count(("closed", "alpha")) == 2


# ------------------------------------------------------------------------------ the streams

def test_the_server_serves_only_tools_over_the_seams_streams():
    server = MCPServer("seam")

    @server.tool()
    def ping() -> str:
        return "pong"

    mcp_sdk.unserve(server, UNSERVED + ("resources/list", "resources/templates/list", "resources/read"))
    limits = WireLimits()
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                {"jsonrpc": "2.0", "id": 3, "method": "prompts/list"}]

    async def run() -> dict:
        read_writer, read_stream = mcp_sdk.create_context_streams[SessionMessage | Exception](1)
        write_stream, write_reader = mcp_sdk.create_context_streams[SessionMessage](1)
        answers: dict = {}
        async with anyio.create_task_group() as group:
            group.start_soon(mcp_sdk.serve_streams, server, read_stream, write_stream)
            for request in requests:
                await read_writer.send(message(json.dumps(request).encode(), limits))
            with anyio.fail_after(30):
                while len(answers) < 3:
                    answer = (await write_reader.receive()).message.model_dump(by_alias=True, exclude_none=True)
                    answers[answer["id"]] = answer
            group.cancel_scope.cancel()
        return answers

    answers = anyio.run(run)
    assert set(answers[1]["result"]["capabilities"]) >= {"tools"}
    assert not {"prompts", "resources"} & set(answers[1]["result"]["capabilities"])
    assert [t["name"] for t in answers[2]["result"]["tools"]] == ["ping"]
    assert answers[3]["error"]["code"] == -32601


# ------------------------------------------------------------------------------ nowhere else

def _sdk_private_names() -> set[str]:
    """The private names of the SDK objects groundrules builds on: their classes' and instances'."""
    server = MCPServer("probe")
    objects = [server, mcp_sdk.lowlevel(server), StreamableHTTPSessionManager(mcp_sdk.lowlevel(server))]
    names = set()
    for obj in objects:
        for cls in type(obj).__mro__:
            if cls.__module__.startswith("mcp."):
                names |= set(vars(cls))
        names |= set(vars(obj))
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def test_no_module_but_the_seam_reaches_a_private_name_of_the_sdk():
    private = _sdk_private_names()
    assert {"_lowlevel_server", "_request_handlers", "_admit_session"} <= private      # the probe sees them
    found = []
    for path, _, nodes in engine_source.modules():
        if path.name == "mcp_sdk.py" and path.parent.name == "transports":
            continue
        for node in nodes:
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("mcp", "mcp_types") \
                    and any(part.startswith("_") for part in node.module.split(".")):
                found.append(f"{path.name}:{node.lineno} imports {node.module}")
            elif isinstance(node, ast.Attribute) and node.attr in private:
                found.append(f"{path.name}:{node.lineno} reads .{node.attr}")
            elif isinstance(node, ast.FunctionDef) and node.name in private:
                found.append(f"{path.name}:{node.lineno} overrides {node.name}")
    assert found == []
