"""MCP sessions on the shared server: a cap per principal as well as in all, and a drain.

The SDK's session manager caps sessions in all (one caller opening 10,000 sessions locked every
other caller out) and keeps an idle session 30 minutes. This one admits a session only while its
principal holds fewer than its share, closes idle ones after the operator's idle period, and, once
the server drains, admits none and can close every session (their GET streams with them). It
reaches the SDK only through the seam's hooks (mcp_sdk.SessionManager).
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Mapping

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context

from .mcp_sdk import SessionManager


class FairSessionManager(SessionManager):
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

    def admits(self, principal: str, scope: Mapping[str, Any]) -> bool:
        return not self.draining and self._held[principal] < self.per_principal

    def opened(self, principal: str, scope: Mapping[str, Any]) -> None:
        self._held[principal] += 1
        self._roles[principal] = role_of(scope)

    def closed(self, principal: str) -> None:
        self._held[principal] -= 1
        if not self._held[principal]:
            del self._held[principal]
            self._roles.pop(principal, None)


def principal_of(scope: Mapping[str, Any]) -> str:
    """The authenticated principal of a request ('' when none)."""
    user = scope.get("user")
    return authorization_context(user)["client_id"] if isinstance(user, AuthenticatedUser) else ""


def role_of(scope: Mapping[str, Any]) -> str:
    """The role the request's verified token grants ('' when none)."""
    user = scope.get("user")
    claims = user.access_token.claims if isinstance(user, AuthenticatedUser) else None
    return str((claims or {}).get("role", ""))
