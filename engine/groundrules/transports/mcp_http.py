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
import os
import signal
import threading
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

from ..core import codes, rulebook as rulebooks
from ..api import Authentication, Caller, Service
from ..core.errors import GroundrulesError, RulesError, refusal
from ..core.messages import worded
from .dispatch import Dispatcher
from .http_guard import Guard
from .http_ops import CallLog, Metrics, configure_logging, routes as ops_routes
from .http_serve import listening, run, settle_heap
from .http_sessions import FairSessionManager
from .mcp_sdk import lowlevel
from .mcp_tools import ToolServer, wire_limits
from .oauth import OAuthVerifier
from .oauth_http import BearerGate
from .settings import ServerSettings
from .tokens import Grants, load_grants
from ..provenance.trust import load_trust

PATH = "/mcp"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
NOBODY = Caller("", "", ())          # no token in context: a role with no tools, no projects
log = logging.getLogger("groundrules.http")


class GrantsVerifier(TokenVerifier):
    """Bearer tokens checked against the tokens file's digests; `reload` swaps the grants whole."""

    def __init__(self, tokens_file: str | Path, roles: Iterable[str], catalogue: Any = None):
        self.file, self.roles = str(tokens_file), frozenset(roles)
        self.catalogue = catalogue          # the server's message catalogue: a failed reload's log line is worded by it
        self.grants: Grants = load_grants(self.file, self.roles)
        self.closed = False                # refuse every token (a failed reload, failing closed)

    async def verify_token(self, token: str) -> AccessToken | None:
        caller = None if self.closed else self.grants.caller(token)
        if caller is None:
            return None
        return AccessToken(token=token, client_id=caller.principal, scopes=[],
                           claims={"role": caller.role, "projects": list(caller.projects),
                                   "auth": caller.auth.as_json()})

    def reload(self) -> bool:
        """Re-read the tokens file; on any problem keep the grants in force and log why."""
        try:
            grants = load_grants(self.file, self.roles)
        except GroundrulesError as exc:
            log.error("tokens file not reloaded: %s", worded(exc, self.catalogue).message)
            return False
        self.grants, self.closed = grants, False
        log.info("tokens file reloaded: %d token(s)", len(grants.by_digest))
        return True


def token_caller() -> Caller:
    """The caller of the request being served, from its verified token."""
    token = get_access_token()
    if token is None or not token.claims:
        return NOBODY
    auth = token.claims.get("auth") or {}
    return Caller(token.client_id, token.claims["role"], tuple(token.claims["projects"]),
                  Authentication(auth.get("method", "token"), auth.get("issuer", ""), auth.get("subject", "")))


def security(host: str, port: int, allowed_hosts: Iterable[str] = ()) -> TransportSecuritySettings:
    """The Host/Origin check: the hosts named (with or without a port), else the loopback names.
    A server bound to a non-loopback address must name the hosts clients use to reach it."""
    hosts = list(allowed_hosts)
    if not hosts:
        if host not in LOOPBACK:
            raise refusal(codes.USAGE, "usage.not_loopback", host=host)
        hosts = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(allowed_hosts=hosts, allowed_origins=origins)


@dataclass
class Served:
    """The ASGI app of the shared server and the parts a stop drains and a reload swaps: its guard
    (takes nothing new), its sessions (closed last), its dispatcher (calls in flight; the service)."""

    app: Any                  # the Starlette app, or the OAuth gate before it
    guard: Guard
    sessions: FairSessionManager
    dispatcher: Dispatcher
    metrics: Metrics | None = None
    verifier: Any = None              # the token check (the tokens file's, or OAuth's): what SIGHUP reloads
    credentials_stale: bool = False   # the last SIGHUP failed to load the tokens file or claim map (/readyz)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.app(scope, receive, send)

    @property
    def busy(self) -> bool:
        """A call is running or a POST is being answered."""
        return self.guard.posts > 0 or self.dispatcher.running > 0

    def swap(self, service: Service) -> None:
        """Decide every new call by `service` (a rule reload); calls running finish on the old one."""
        self.guard.limits = wire_limits(service)
        self.dispatcher.service = service


def http_app(service: Service, verifier: TokenVerifier | OAuthVerifier, *, host: str, port: int,
             allowed_hosts: Iterable[str] = (), settings: ServerSettings | None = None,
             tools: Iterable[str] | None = None, toolsets: Iterable[str] | None = None) -> Served:
    """The ASGI app: the registry's tools (of `tools`, when given) at /mcp behind the token check
    (the tokens file's, or an OAuth resource server's), the guard and the Host check; /healthz,
    /readyz and /metrics beside it."""
    settings = settings or ServerSettings()
    dispatcher = Dispatcher(service, settings)
    server = ToolServer(service, token_caller, tools=tools, toolsets=toolsets, dispatcher=dispatcher,
                        sessions=not settings.stateless)
    sessions = FairSessionManager(lowlevel(server), per_principal=settings.sessions_per_principal,
                                  json_response=True, stateless=settings.stateless,
                                  security_settings=security(host, port, allowed_hosts),
                                  session_idle_timeout=settings.session_idle_s, max_sessions=settings.max_sessions,
                                  max_request_body_size=wire_limits(service).message_bytes)
    guard = Guard(StreamableHTTPASGIApp(sessions), dispatcher=dispatcher, limits=wire_limits(service),
                  settings=settings, sessions=sessions, caller=token_caller)
    if isinstance(verifier, OAuthVerifier):        # its gate, before the app, checks tokens and serves the metadata
        app = Starlette(routes=[Route(PATH, endpoint=guard)], lifespan=lambda _app: sessions.run())
        served = Served(BearerGate(app, verifier, path=PATH, lang=service.lang), guard, sessions, dispatcher)
    else:
        app = Starlette(routes=[Route(PATH, endpoint=RequireAuthMiddleware(guard, [], None))],
                        middleware=[Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(verifier)),
                                    Middleware(AuthContextMiddleware)],
                        lifespan=lambda _app: sessions.run())
        served = Served(app, guard, sessions, dispatcher)
    served.verifier = verifier
    served.metrics = Metrics(served)
    dispatcher.observer = CallLog(served.metrics)
    metrics_token = _read_secret(settings.metrics_token_file) if settings.metrics_token_file else None
    app.router.routes.extend(ops_routes(served, served.metrics, metrics_token))
    return served


class Reloader:
    """SIGHUP: the tokens file and the rule tables read again, each swapped in whole or not at all."""

    def __init__(self, served: Served, verifier: GrantsVerifier | OAuthVerifier, rules_root: str | Path | None,
                 *, fail_closed: bool = False):
        self.served, self.verifier, self.rules_root = served, verifier, rules_root
        self.fail_closed = fail_closed
        self._lock = threading.Lock()

    def __call__(self, *_signal: Any) -> None:
        threading.Thread(target=self.reload, name="groundrules-reload", daemon=True).start()

    def reload(self) -> bool:
        """True when the rule tables were swapped; a table that fails keeps the rulebook in force.
        The tokens file is read after them, against the roles of the rulebook in force."""
        with self._lock:
            swapped = self._reload_rules()
            trusted = self._reload_trust()
            book = self.served.dispatcher.service.book
            loaded = True
            if isinstance(self.verifier, OAuthVerifier):          # the claim map of the rulebook in force
                loaded = self.verifier.use(book)
            else:
                self.verifier.roles = frozenset(self.served.dispatcher.service.roles.roles)
            loaded = self.verifier.reload() and loaded
            self._credentials(loaded and trusted)
            return swapped

    def _credentials(self, loaded: bool) -> None:
        """A tokens file, claim map or trust store that failed to load: /readyz says not ready and
        /metrics counts it until they load; failing closed, every token is refused meanwhile, else
        the previous ones stay."""
        self.served.credentials_stale = not loaded
        if loaded:
            return
        if self.served.metrics is not None:
            self.served.metrics.credential_failures.inc()
        if self.fail_closed:
            self.verifier.closed = True
        log.error("credentials not reloaded: %s", "every token is refused until a reload succeeds"
                  if self.fail_closed else "the previous ones stay in force")

    def _reload_trust(self) -> bool:
        """The trust store read again (when the server has one); one that fails keeps the one in force
        (False)."""
        current = self.served.dispatcher.service
        if not current.trust.file:
            return True
        try:
            trust = load_trust(current.trust.file)
        except GroundrulesError as exc:
            log.error("trust store not reloaded, the previous signers stay trusted: %s",
                      worded(exc, current.messages).message)
            return False
        self.served.swap(current.with_trust(trust))
        log.info("trust store reloaded: %d signer(s)", len(trust.signers))
        return True

    def _reload_rules(self) -> bool:
        current = self.served.dispatcher.service
        try:
            fresh = current.with_rulebook(rulebooks.load(self.rules_root))
        except RulesError as exc:
            log.error("rule tables not reloaded; rulebook %s stays in force", current.book.version,
                      extra={"fields": {"problems": [str(p) for p in exc.problems]}})
            return False
        except GroundrulesError as exc:
            log.error("rule tables not reloaded (%s); rulebook %s stays in force", worded(exc, current.messages).message,
                      current.book.version)
            return False
        self.served.swap(fresh)
        settle_heap()
        log.info("rule tables reloaded", extra={"fields": {"rulebook": fresh.book.version,
                                                           "previous": current.book.version}})
        return True


def serve_http(service: Service, tokens_file: str | Path | None, *, host: str, port: int,
               allowed_hosts: Iterable[str] = (), settings: ServerSettings | None = None,
               rules_root: str | Path | None = None, tools: Iterable[str] | None = None,
               toolsets: Iterable[str] | None = None, oauth: OAuthVerifier | None = None) -> None:
    """Serve until SIGINT/SIGTERM (a drain: see http_serve); SIGHUP reloads the tokens file (with
    `oauth`: the claim map and the key sets) and the rule tables under `rules_root` (the bundled
    ones when None)."""
    settings = settings or ServerSettings()
    configure_logging(settings.log_format)
    verifier: GrantsVerifier | OAuthVerifier
    if oauth is not None:
        verifier = oauth
    elif tokens_file is not None:
        verifier = GrantsVerifier(tokens_file, service.roles.roles, service.messages)
    else:
        raise ValueError("serve_http needs a tokens file or an OAuth verifier")
    served = http_app(service, verifier, host=host, port=port, allowed_hosts=allowed_hosts, settings=settings,
                      tools=tools, toolsets=toolsets)
    sock = listening(host, port)              # a busy port is an error before anything says "serving"
    signal.signal(signal.SIGHUP, Reloader(served, verifier, rules_root, fail_closed=settings.credentials_fail_closed))
    log.info("groundrules serving", extra={"fields": {
        "address": f"http://{_url_host(host)}:{port}{PATH}", "pid": os.getpid(), "rulebook": service.book.version,
        "stores": {name: _store_kind(getattr(service, name)) for name in ("findings", "evidence")},
        "transports": ["streamable-http"], "stateless": settings.stateless}})
    run(served, host=host, port=port, settings=settings, sock=sock)


def _store_kind(ledger: Any) -> str:
    if ledger is None:
        return "none"
    return ledger.store.kind


def _read_secret(path: str) -> str:
    try:
        secret = Path(path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise refusal(codes.USAGE, "usage.cannot_read", input=path,
                      reason=getattr(exc, "strerror", None) or type(exc).__name__) from None
    if len(secret) < 16:
        raise refusal(codes.USAGE, "usage.metrics_token_short", path=path, chars=16)
    return secret


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
