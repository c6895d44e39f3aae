"""OAuth 2.1 resource server: a JWT access token checked, then mapped to a caller by the claim map.

In order (MCP authorization spec, "Token Handling"; RFC 9068): the token must be a JWS compact
serialization signed with an algorithm the claim map accepts, by an issuer this server trusts
(`iss` picks it), with a key that issuer publishes (jwks.py); joserfc verifies the signature and
then the claims: `iss`, `aud` = this server's resource URL (RFC 8707), `exp`, `nbf` and `iat`
within the leeway, and the claims the table requires. Only a token that passes all of that is
shown to the claim map (rules/oauth_claims.yaml), which names the principal, role and projects or
refuses. The clock is injected, so expiry is tested without waiting. Every refusal is a reason
(a key of the table's `messages`) and the HTTP status it calls for (Denied); oauth_http.py answers it.
"""
from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, TypeGuard
from urllib.parse import urlsplit

import httpx2
from joserfc import jws
from joserfc.errors import ExpiredTokenError, InvalidClaimError, JoseError, MissingClaimError
from joserfc.jwt import JWTClaimsRegistry

from ..api import CURRENT_PROJECT, Authentication, Caller
from ..claim_map import ClaimMap, Refusal, unknown_roles
from ..core import codes
from ..core.errors import GroundrulesError, refusal
from .jwks import FileKeys, KeySource, KeysUnavailable, RemoteKeys, checked_url
from .tokens import PROJECT_MAX

CLAIM_MAP_KIND = "claim_map"
log = logging.getLogger("groundrules.oauth")
# joserfc's claim -> our refusal reason, for claims whose value is wrong
WRONG_CLAIM = {"aud": "wrong_audience", "iss": "unknown_issuer", "nbf": "not_yet_valid", "iat": "not_yet_valid",
               "exp": "expired"}


@dataclass(frozen=True)
class Denied:
    """A token refused: why (a key of the claim map's `messages`), the HTTP status that calls for,
    and, for a token that verified but is short of a scope or role, the scopes it was granted."""

    reason: str
    status: int                    # 401 not usable, 403 usable but not here, 503 keys unavailable
    granted: tuple[str, ...] = ()


@dataclass(frozen=True)
class Checked:
    """A token that passed: its caller, its verified claims and its scopes."""

    caller: Caller
    claims: dict
    scopes: tuple[str, ...]


class OAuthVerifier:
    """Checks bearer access tokens for one resource (this server's URL) against trusted issuers."""

    def __init__(self, claim_map: ClaimMap, *, resource: str, issuers: dict[str, KeySource],
                 clock: Callable[[], float] = time.time):
        self.map, self.resource, self.issuers, self.clock = claim_map, resource, issuers, clock
        self._accepted: dict[bytes, Checked] = {}      # sha256 of a token -> its check, oldest first
        self.closed = False                            # refuse every token (a failed reload, failing closed)

    @classmethod
    def configured(cls, book, *, resource: str, issuers: Iterable[str], jwks: str | None = None,
                   clock: Callable[[], float] = time.time) -> "OAuthVerifier":
        """The verifier `serve --auth oauth` runs: the rulebook's claim map, each issuer's keys from
        its metadata (or `jwks`, a URL or a file, for a single issuer)."""
        maps = book.of_kind(CLAIM_MAP_KIND)
        if len(maps) != 1:
            raise refusal(codes.RULEBOOK_INCOMPLETE, "oauth.claim_map", kind=CLAIM_MAP_KIND, count=len(maps))
        problems = list(unknown_roles(book))
        if problems:
            raise refusal(codes.RULEBOOK_INCOMPLETE, "oauth.claim_roles", problem=str(problems[0]))
        claim_map = maps[0]
        parts = urlsplit(resource)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise refusal(codes.USAGE, "usage.oauth_resource", resource=resource)
        issuers = [checked_url(i, "--issuer") for i in dict.fromkeys(issuers)]
        if not issuers:
            raise refusal(codes.USAGE, "usage.oauth_issuer")
        if jwks is not None and len(issuers) != 1:
            raise refusal(codes.USAGE, "usage.oauth_jwks_one")
        keys = claim_map.keys
        timing = {"clock": clock, "max_age_s": keys["max_age_s"], "refetch_min_s": keys["refetch_min_s"]}
        client: list[httpx2.AsyncClient] = []

        def http() -> httpx2.AsyncClient:          # made on first use, inside the server's event loop
            if not client:
                client.append(httpx2.AsyncClient(timeout=keys["fetch_timeout_s"], follow_redirects=False))
            return client[0]

        sources: dict[str, KeySource] = {}
        for issuer in issuers:
            if jwks is not None and not jwks.startswith(("https://", "http://")):
                if not Path(jwks).is_file():
                    raise refusal(codes.USAGE, "usage.no_such_file", input=f"--jwks {jwks}")
                sources[issuer] = FileKeys(jwks, **timing)
            else:
                uri = checked_url(jwks, "--jwks") if jwks is not None else None
                sources[issuer] = RemoteKeys(issuer, uri, http=http, max_bytes=keys["max_bytes"], **timing)
        return cls(claim_map, resource=resource, issuers=sources, clock=clock)

    def use(self, book) -> bool:
        """Take the claim map of `book` (a rule reload), when it has exactly one whose roles its
        role table declares; else keep the one in force and log why."""
        maps = book.of_kind(CLAIM_MAP_KIND)
        problems = list(unknown_roles(book))
        if len(maps) != 1 or problems:
            log.error("claim map not reloaded, the one in force stays: %s",
                      str(problems[0]) if problems else f"{len(maps)} tables of kind {CLAIM_MAP_KIND}")
            return False
        self.map = maps[0]
        self._accepted.clear()
        self.closed = False
        return True

    def reload(self) -> bool:
        """SIGHUP: forget the cached key sets and accepted tokens, so that the next token is read afresh."""
        for source in self.issuers.values():
            source.forget()
        self._accepted.clear()
        return True

    async def check(self, token: str) -> Checked | Denied:
        """A host sends the same token with every request of its lifetime, so an accepted token is
        remembered (by digest, at most `tokens.cache_entries`) and, seen again, only its time claims
        are checked again; anything refused is checked in full every time."""
        if self.closed:
            return Denied("keys_unavailable", 503)
        digest = hashlib.sha256(token.encode("utf-8", "replace")).digest()
        seen = self._accepted.get(digest)
        if seen is not None:
            if self._claims_refusal(seen.claims) is None:
                return seen
            del self._accepted[digest]
        found = await self._check(token)
        if isinstance(found, Checked) and self.map.cache_entries:
            if len(self._accepted) >= self.map.cache_entries:
                del self._accepted[next(iter(self._accepted))]
            self._accepted[digest] = found
        return found

    async def _check(self, token: str) -> Checked | Denied:
        try:
            obj = jws.extract_compact(token.encode("ascii"))
            header = obj.headers()
            claims = json.loads(obj.payload)
        except (JoseError, ValueError, TypeError, UnicodeError):
            return Denied("malformed", 401)
        if not isinstance(claims, dict) or not isinstance(header, dict):
            return Denied("malformed", 401)
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.map.algorithms:    # the table's are strings
            return Denied("unsupported_algorithm", 401)
        issuer = claims.get("iss")
        if not isinstance(issuer, str) or issuer not in self.issuers:
            return Denied("unknown_issuer", 401)
        source = self.issuers[issuer]
        if self.map.require_kid and not isinstance(header.get("kid"), str):
            return Denied("no_key_id", 401)
        try:
            key = await source.key(header.get("kid"), alg)
        except KeysUnavailable:
            return Denied("keys_unavailable", 503)
        if key is None:
            return Denied("unknown_key", 401)
        try:
            if not jws.validate_compact(obj, key, algorithms=[alg]):
                return Denied("bad_signature", 401)
        except JoseError:
            return Denied("bad_signature", 401)
        refused = self._lifetime_refusal(claims) or self._claims_refusal(claims)
        if refused is not None:
            return refused
        found = self.map.identity(claims)
        if isinstance(found, Refusal):
            return Denied(found.reason, found.status, self.map.scopes(claims))
        projects = tuple(p for p in found.projects if len(p) <= PROJECT_MAX and p != CURRENT_PROJECT)
        sub = claims.get("sub")
        auth = Authentication("oauth", issuer, sub if isinstance(sub, str) else "")
        return Checked(Caller(found.principal, found.role, projects, auth), claims, self.map.scopes(claims))

    def _lifetime_refusal(self, claims: dict) -> Denied | None:
        """A token living longer than the claim map's cap (exp - iat), or without iat under one."""
        cap = self.map.max_lifetime_s
        if not cap:
            return None
        exp, iat = claims.get("exp"), claims.get("iat")
        if not (_number(exp) and _number(iat)):
            return Denied("too_long_lived", 401) if isinstance(exp, (int, float)) else None   # no exp: the claims check
        return Denied("too_long_lived", 401) if not exp - iat <= cap else None

    def _claims_refusal(self, claims: dict) -> Denied | None:
        options: dict[str, Any] = {name: {"essential": True} for name in self.map.required_claims}
        options.update(iss={"essential": True, "value": claims["iss"]}, aud={"essential": True, "value": self.resource},
                       exp={"essential": True})
        registry = JWTClaimsRegistry(now=lambda: int(self.clock()), leeway=self.map.leeway_s, **options)
        try:
            registry.validate(claims)
        except ExpiredTokenError:
            return Denied("expired", 401)
        except MissingClaimError:
            return Denied("missing_claim", 401)
        except InvalidClaimError as exc:
            return Denied(WRONG_CLAIM.get(exc.claim, "malformed"), 401)
        return None

    def scopes_to_ask(self, denied: Denied | None) -> tuple[str, ...]:
        """The `scope` of a challenge: the required scopes and, for a token short of a scope, what it
        was granted that this server knows (so a step-up keeps it); for one short of a role, every
        scope this server supports."""
        known = self.map.supported_scopes
        if denied is not None and denied.reason == "no_role":
            return known
        keep = [s for s in denied.granted if s in known] if denied is not None else []
        return tuple(dict.fromkeys([*self.map.required_scopes, *keep]))

    def metadata(self) -> dict:
        """The protected resource metadata (RFC 9728 §2) this server publishes."""
        return {"resource": self.resource, "authorization_servers": list(self.issuers),
                "scopes_supported": list(self.map.supported_scopes), "bearer_methods_supported": ["header"],
                "resource_name": "groundrules"}


def _number(value: Any) -> TypeGuard[int | float]:
    """A JSON number: a bool is not one."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)
