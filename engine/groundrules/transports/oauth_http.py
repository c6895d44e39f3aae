"""The OAuth resource server's HTTP face: its metadata, its challenges, and the gate before /mcp.

`BearerGate(app, verifier, path=…)` wraps the SDK's Streamable HTTP app. It serves the protected
resource metadata (RFC 9728) at `/.well-known/oauth-protected-resource` followed by the resource's
path (`…/mcp`, what a client builds from the resource URL) and at the root form, both of which the
MCP authorization spec has clients try. Every request to /mcp needs a bearer token that the
verifier accepts; otherwise the answer is the spec's: 401 with `WWW-Authenticate: Bearer
resource_metadata="…", scope="…"` (plus `error="invalid_token"` and a description when a token was
sent), 403 `insufficient_scope` naming the scopes to ask for, or 503 while the issuer's keys
cannot be had. A token that passes becomes the SDK's authenticated user (so its sessions are bound
to the principal, as with static tokens) and the request goes on to the app; nothing of a refused
one reaches a tool.
"""
from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials

from ..claim_map import header_safe
from .oauth import Checked, Denied, OAuthVerifier

WELL_KNOWN = "/.well-known/oauth-protected-resource"
ERRORS = {401: "invalid_token", 403: "insufficient_scope", 503: "temporarily_unavailable"}
RFC6750_CHARS = set(range(0x20, 0x7F)) - {0x22, 0x5C}       # what a quoted auth-param may hold here


def metadata_url(resource: str) -> str:
    """Where the metadata of `resource` is (RFC 9728 §3.1: the well-known path before the resource's)."""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/")
    return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{path}"


class BearerGate:
    """ASGI: the metadata routes, and the token check before every request to `path`."""

    def __init__(self, app: Any, verifier: OAuthVerifier, *, path: str, lang: str | None = None):
        self.app, self.verifier, self.path = AuthContextMiddleware(app), verifier, path
        self.lang = lang            # the server's language (serve --lang); a request's Accept-Language comes first
        self.plain = app
        own = urlsplit(verifier.resource).path.rstrip("/")
        self.metadata_paths = {WELL_KNOWN, WELL_KNOWN + own, WELL_KNOWN + path}
        self.metadata_url = metadata_url(verifier.resource)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.plain(scope, receive, send)
        elif scope["path"] in self.metadata_paths:
            await self._metadata(scope, send)
        elif scope["path"] != self.path:
            await self.plain(scope, receive, send)
        else:
            await self._gate(scope, receive, send)

    async def _gate(self, scope: dict, receive: Any, send: Any) -> None:
        token = bearer(scope)
        if token is None:
            await self._challenge(send, None)
            return
        checked = await self.verifier.check(token)
        if not isinstance(checked, Checked):
            await self._challenge(send, checked, self._lang(scope))
            return
        scope = dict(scope, user=AuthenticatedUser(access_token(token, checked, self.verifier.resource)),
                     auth=AuthCredentials(list(checked.scopes)))
        await self.app(scope, receive, send)

    def _lang(self, scope: dict) -> str | None:
        """The language of the request's answer: its Accept-Language's first the claim map speaks,
        else the server's."""
        from .mcp_tools import accepted
        header = b",".join(v for k, v in scope["headers"] if k == b"accept-language").decode("latin-1")
        return accepted(header, self.verifier.map.messages.languages()) or self.lang

    async def _challenge(self, send: Any, denied: Denied | None, lang: str | None = None) -> None:
        """401/403 with the challenge RFC 6750 §3 and the MCP spec call for (no error code when no
        token was sent), or 503 with Retry-After. The JSON body's error_description is in `lang`;
        the header's, which RFC 6750 keeps to ASCII, in the first language after it whose text is."""
        reason = denied.reason if denied is not None else "no_token"
        status = denied.status if denied is not None else 401
        messages = self.verifier.map.messages
        texts = {language: messages.speaking(language)[reason].render({}) for language in messages.languages()}
        said = texts.get(lang) or next(iter(texts.values()))
        description = ascii_only(next((t for t in [said, *texts.values()] if header_safe(t)), said))
        headers = [(b"content-type", b"application/json; charset=utf-8")]
        body: dict = {"error_description": said}
        if status in (401, 403):
            params = [f'resource_metadata="{self.metadata_url}"',
                      f'scope="{" ".join(self.verifier.scopes_to_ask(denied))}"']
            if denied is not None:
                params = [f'error="{ERRORS[status]}"', f'error_description="{description}"', *params]
            headers.append((b"www-authenticate", ("Bearer " + ", ".join(params)).encode("ascii")))
        else:
            headers.append((b"retry-after", str(self.verifier.map.keys["refetch_min_s"]).encode("ascii")))
        if denied is not None:
            body = {"error": ERRORS[status], **body}
        await respond(send, status, headers, json.dumps(body, ensure_ascii=False).encode("utf-8"))

    async def _metadata(self, scope: dict, send: Any) -> None:
        cors = [(b"access-control-allow-origin", b"*"), (b"access-control-allow-methods", b"GET, OPTIONS"),
                (b"access-control-allow-headers", b"mcp-protocol-version")]
        if scope["method"] == "OPTIONS":
            await respond(send, 204, cors, b"")
        elif scope["method"] in ("GET", "HEAD"):                # read each time: a rule reload may change it
            document = json.dumps(self.verifier.metadata(), ensure_ascii=False).encode("utf-8")
            await respond(send, 200, [(b"content-type", b"application/json"), *cors],
                          document if scope["method"] == "GET" else b"", length=len(document))
        else:
            await respond(send, 405, [(b"allow", b"GET, OPTIONS"), *cors], b"")


def bearer(scope: dict) -> str | None:
    """The bearer token of the request's Authorization header (RFC 6750 §2.1), or None."""
    values = [v for k, v in scope["headers"] if k == b"authorization"]
    if len(values) != 1:
        return None
    scheme, _, token = values[0].decode("latin-1").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token and " " not in token else None


def access_token(token: str, checked: Checked, resource: str) -> AccessToken:
    """What the SDK keeps of a verified token: the principal as client_id, the issuer and subject
    (its session binding), and the role and projects that `token_caller` reads."""
    caller, claims = checked.caller, checked.claims
    exp = claims.get("exp")
    return AccessToken(token=token, client_id=caller.principal, scopes=list(checked.scopes),
                       expires_at=int(exp) if isinstance(exp, (int, float)) else None, resource=resource,
                       subject=claims.get("sub") if isinstance(claims.get("sub"), str) else None,
                       claims={"iss": claims["iss"], "role": caller.role, "projects": list(caller.projects),
                               "auth": caller.auth.as_json()})


def ascii_only(text: str) -> str:
    return "".join(c if ord(c) in RFC6750_CHARS else "?" for c in text)


async def respond(send: Any, status: int, headers: list, body: bytes, *, length: int | None = None) -> None:
    headers = [*headers, (b"content-length", str(len(body) if length is None else length).encode("ascii"))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
