"""MCP sessions on the shared server: a cap per principal as well as in all, and a drain.

The SDK's session manager caps sessions in all (one caller opening 10,000 sessions locked every
other caller out) and keeps an idle session 30 minutes. This one admits a session only while its
principal holds fewer than its share, closes idle ones after the operator's idle period, and, once
the server drains, admits none and can close every session (their GET streams with them).
"""
from __future__ import annotations

import contextvars
from collections import Counter
from typing import Any, Mapping

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager


_ROLE: contextvars.ContextVar[str] = contextvars.ContextVar("groundrules_session_role", default="")


class FairSessionManager(StreamableHTTPSessionManager):
    def __init__(self, app: Any, *, per_principal: int, **options: Any):
        super().__init__(app, **options)
        self.per_principal = per_principal
        self.draining = False
        self._held: Counter = Counter()
        self._roles: dict[str, str] = {}

    def held_by(self, principal: str) -> int:
        return self._held[principal]

    def held_by_role(self) -> dict[str, int]:
        """Open sessions per role of the principals holding them (for metrics: no principal named)."""
        out: Counter = Counter()
        for principal, count in self._held.items():
            out[self._roles.get(principal, "")] += count
        return dict(out)

    async def _handle_stateful_request(self, scope: Any, receive: Any, send: Any) -> None:
        token = _ROLE.set(role_of(scope))
        try:
            await super()._handle_stateful_request(scope, receive, send)
        finally:
            _ROLE.reset(token)

    def owner_of(self, session_id: str) -> str | None:
        """The principal that opened a live session, or None when no such session is open."""
        if session_id not in self._server_instances:
            return None
        owner = self._session_owners.get(session_id)
        return owner["client_id"] if owner else ""

    def _admit_session(self, requestor: Any) -> StreamableHTTPServerTransport | None:
        principal = requestor["client_id"] if requestor else ""
        if self.draining or self._held[principal] >= self.per_principal:
            return None
        transport = super()._admit_session(requestor)
        if transport is not None:
            self._held[principal] += 1
            self._roles[principal] = _ROLE.get()
        return transport

    async def _discard_session(self, session_id: str, transport: StreamableHTTPServerTransport) -> None:
        owner = self.owner_of(session_id)
        await super()._discard_session(session_id, transport)
        if owner is not None:
            self._held[owner] -= 1
            if not self._held[owner]:
                del self._held[owner]
                self._roles.pop(owner, None)

    async def close_all(self) -> None:
        """End every open session (a drained server's last step: GET streams close with them)."""
        for session_id, transport in list(self._server_instances.items()):
            await self._discard_session(session_id, transport)


def principal_of(scope: Mapping[str, Any]) -> str:
    """The authenticated principal of a request ('' when none)."""
    user = scope.get("user")
    return authorization_context(user)["client_id"] if isinstance(user, AuthenticatedUser) else ""


def role_of(scope: Mapping[str, Any]) -> str:
    """The role the request's verified token grants ('' when none)."""
    user = scope.get("user")
    claims = user.access_token.claims if isinstance(user, AuthenticatedUser) else None
    return str((claims or {}).get("role", ""))
