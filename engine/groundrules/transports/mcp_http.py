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
from pathlib import Path
from typing import Any, Iterable

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

from ..api import Caller, Service
from ..errors import GroundrulesError
from .mcp_tools import ToolServer
from .oauth import OAuthVerifier
from .oauth_http import BearerGate
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


def http_app(service: Service, verifier: GrantsVerifier | OAuthVerifier, *, host: str, port: int,
             allowed_hosts: Iterable[str] = (), tools: Iterable[str] | None = None) -> Any:
    """The ASGI app: the registry's tools (of `tools`, when given) at /mcp behind the token check
    (the tokens file's, or an OAuth resource server's) and the Host check."""
    if isinstance(verifier, OAuthVerifier):        # the gate checks tokens and serves the metadata
        server = ToolServer(service, token_caller, tools=tools)
        app = server.streamable_http_app(streamable_http_path=PATH, json_response=True, host=host,
                                         transport_security=security(host, port, allowed_hosts))
        return BearerGate(app, verifier, path=PATH)
    auth = AuthSettings(issuer_url=f"http://{_url_host(host)}:{port}/", resource_server_url=None,
                        required_scopes=[])
    server = ToolServer(service, token_caller, tools=tools, token_verifier=verifier, auth=auth)
    return server.streamable_http_app(streamable_http_path=PATH, json_response=True, host=host,
                                      transport_security=security(host, port, allowed_hosts))


def serve_http(service: Service, tokens_file: str | Path | None, *, host: str, port: int,
               allowed_hosts: Iterable[str] = (), tools: Iterable[str] | None = None,
               oauth: OAuthVerifier | None = None) -> None:
    """Serve until SIGINT/SIGTERM; SIGHUP re-reads the tokens file (with `oauth`: the key sets)."""
    import uvicorn
    verifier = oauth if oauth is not None else GrantsVerifier(tokens_file, service.roles.roles)
    app = http_app(service, verifier, host=host, port=port, allowed_hosts=allowed_hosts, tools=tools)
    signal.signal(signal.SIGHUP, lambda *_: verifier.reload())
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
