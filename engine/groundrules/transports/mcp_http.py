"""MCP over Streamable HTTP: one server for many agents, each call as the caller its token names.

Built on the SDK's own pieces: its Streamable HTTP app (served at /mcp), its bearer-token
middleware (a request without a token the tokens file lists gets HTTP 401 before any tool runs)
and its Host/Origin check (kept on: loopback hosts by default, or the hosts the operator names).
The caller of a tool is read from the verified token inside the call, so the registry checks the
token's role and projects exactly as it checks the command line's over stdio. SIGHUP re-reads the
tokens file; a bad file keeps the grants in force and logs why. With an OAuthVerifier instead, the
server is an OAuth 2.1 resource server (oauth.py, oauth_http.py): JWT access tokens from the
organisation's authorization server, mapped to callers by the claim map table.
"""
from __future__ import annotations

import logging
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware, get_access_token
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ..api import Caller, Service
from ..errors import GroundrulesError
from .dispatch import Dispatcher
from .http_guard import Guard
from .http_serve import run
from .http_sessions import FairSessionManager
from .mcp_tools import ToolServer, wire_limits
from .oauth import OAuthVerifier
from .oauth_http import BearerGate
from .settings import ServerSettings
from .tokens import Grants, load_grants

PATH = "/mcp"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
NOBODY = Caller("", "", ())          # no token in context: a role with no tools, no projects
log = logging.getLogger("groundrules.http")


class GrantsVerifier(TokenVerifier):
    """Bearer tokens checked against the tokens file's digests; `reload` swaps the grants whole."""

    def __init__(self, tokens_file: str | Path, roles: Iterable[str]):
        self.file, self.roles = str(tokens_file), frozenset(roles)
        self.grants: Grants = load_grants(self.file, self.roles)

    async def verify_token(self, token: str) -> AccessToken | None:
        caller = self.grants.caller(token)
        if caller is None:
            return None
        return AccessToken(token=token, client_id=caller.principal, scopes=[],
                           claims={"role": caller.role, "projects": list(caller.projects)})

    def reload(self) -> bool:
        """Re-read the tokens file; on any problem keep the grants in force and log why."""
        try:
            grants = load_grants(self.file, self.roles)
        except GroundrulesError as exc:
            log.error("tokens file not reloaded, the previous grants stay in force: %s", exc.message)
            return False
        self.grants = grants
        log.warning("tokens file reloaded: %d token(s)", len(grants.by_digest))
        return True


def token_caller() -> Caller:
    """The caller of the request being served, from its verified token."""
    token = get_access_token()
    if token is None or not token.claims:
        return NOBODY
    return Caller(token.client_id, token.claims["role"], tuple(token.claims["projects"]))


def security(host: str, port: int, allowed_hosts: Iterable[str] = ()) -> TransportSecuritySettings:
    """The Host/Origin check: the hosts named (with or without a port), else the loopback names.
    A server bound to a non-loopback address must name the hosts clients use to reach it."""
    hosts = list(allowed_hosts)
    if not hosts:
        if host not in LOOPBACK:
            raise GroundrulesError("USAGE", f"{host} is not a loopback address: name the host clients reach "
                                   "this server by with --allowed-host (e.g. mcp.internal:8443)")
        hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins)


@dataclass
class Served:
    """The ASGI app of the shared server and the parts a stop drains: its guard (takes nothing new),
    its sessions (closed last), its dispatcher (calls in flight)."""

    app: Any                  # the Starlette app, or the OAuth gate before it
    guard: Guard
    sessions: FairSessionManager
    dispatcher: Dispatcher

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    @property
    def busy(self) -> bool:
        """A call is running or a POST is being answered."""
        return self.guard.posts > 0 or self.dispatcher.running > 0


def http_app(service: Service, verifier: GrantsVerifier | OAuthVerifier, *, host: str, port: int,
             allowed_hosts: Iterable[str] = (), settings: ServerSettings | None = None,
             tools: Iterable[str] | None = None) -> Served:
    """The ASGI app: the registry's tools (of `tools`, when given) at /mcp behind the token check
    (the tokens file's, or an OAuth resource server's), the guard and the Host check."""
    settings = settings or ServerSettings()
    dispatcher = Dispatcher(service, settings)
    server = ToolServer(service, token_caller, tools=tools, dispatcher=dispatcher)
    sessions = FairSessionManager(server._lowlevel_server, per_principal=settings.sessions_per_principal,
                                  json_response=True, security_settings=security(host, port, allowed_hosts),
                                  session_idle_timeout=settings.session_idle_s, max_sessions=settings.max_sessions,
                                  max_request_body_size=wire_limits(service).message_bytes)
    guard = Guard(StreamableHTTPASGIApp(sessions), service=service, limits=wire_limits(service), settings=settings,
                  sessions=sessions, caller=token_caller)
    if isinstance(verifier, OAuthVerifier):        # its gate checks tokens and serves the metadata (oauth_http.py)
        app = BearerGate(Starlette(routes=[Route(PATH, endpoint=guard)], lifespan=lambda _app: sessions.run()),
                         verifier, path=PATH)
        return Served(app, guard, sessions, dispatcher)
    app = Starlette(routes=[Route(PATH, endpoint=RequireAuthMiddleware(guard, [], None))],
                    middleware=[Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(verifier)),
                                Middleware(AuthContextMiddleware)],
                    lifespan=lambda _app: sessions.run())
    return Served(app, guard, sessions, dispatcher)


def serve_http(service: Service, tokens_file: str | Path | None, *, host: str, port: int,
               allowed_hosts: Iterable[str] = (), settings: ServerSettings | None = None,
               tools: Iterable[str] | None = None, oauth: OAuthVerifier | None = None) -> None:
    """Serve until SIGINT/SIGTERM (a drain: see http_serve); SIGHUP re-reads the tokens file (with
    `oauth`: the key sets)."""
    settings = settings or ServerSettings()
    verifier = oauth if oauth is not None else GrantsVerifier(tokens_file, service.roles.roles)
    served = http_app(service, verifier, host=host, port=port, allowed_hosts=allowed_hosts, settings=settings,
                      tools=tools)
    signal.signal(signal.SIGHUP, lambda *_: verifier.reload())
    run(served, host=host, port=port, settings=settings)
