"""The keys an authorization server signs access tokens with: its JWKS, fetched and cached, or a file.

An issuer rotates its keys by publishing a new one beside the old, then signing with it. So a
token naming a key id the cached set lacks fetches the set again, but at most once per
`refetch_min_s` (the claim map's `keys`), so that tokens with invented key ids cannot make this
server hammer the issuer; a set older than `max_age_s` is fetched again on next use. A fetch that
fails keeps the set in force (an issuer's outage does not lock everyone out while its keys are
known); with no set at all the caller hears that the keys are unavailable. Where the set lives is
read from the issuer's metadata (RFC 8414, then OpenID Connect discovery) unless given. Parsing
the keys is joserfc's; nothing here touches a signature.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

import anyio
import httpx2
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import Key, KeySet

from ..core import codes
from ..core.errors import GroundrulesError, refusal

log = logging.getLogger("groundrules.oauth")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class KeysUnavailable(Exception):
    """No key set could be had for an issuer (never fetched, or unreadable)."""


def checked_url(url: str, what: str) -> str:
    """An authorization server's URL: https, or http on a loopback host (tests, a local issuer)."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname or parts.scheme == "http" and parts.hostname in LOOPBACK:
        return url
    raise refusal(codes.USAGE, "usage.oauth_https", option=what, url=url)


class KeySource:
    """The current key set of one issuer; `key(kid, alg)` is the key a token names, or None."""

    def __init__(self, *, clock: Callable[[], float], max_age_s: float, refetch_min_s: float):
        self.clock, self.max_age_s, self.refetch_min_s = clock, max_age_s, refetch_min_s
        self.keys: KeySet | None = None
        self.fetched_at = self.attempted_at = float("-inf")
        self.fetches = 0
        self._lock = anyio.Lock()

    async def key(self, kid: Any, alg: str) -> Key | None:
        if self.keys is None or self.clock() - self.fetched_at >= self.max_age_s:
            await self._refresh()
        if self.keys is None:
            raise KeysUnavailable()
        found = _find(self.keys, kid, alg)
        if found is None:                       # rotated, perhaps: the set is read again (rate-limited)
            await self._refresh()
            found = _find(self.keys, kid, alg)
        return found

    async def _refresh(self) -> None:
        """Read the set again, unless it was read or tried less than refetch_min_s ago."""
        async with self._lock:
            now = self.clock()
            if now - self.attempted_at < self.refetch_min_s:
                return
            self.attempted_at = now
            self.fetches += 1
            try:
                # joserfc types the set as its TypedDict; it checks a loaded dict itself (KeyError, TypeError below)
                self.keys = KeySet.import_key_set(await self.load())  # type: ignore[arg-type]
                self.fetched_at = now
            except (KeysUnavailable, JoseError, ValueError, KeyError, TypeError) as exc:
                log.error("%s: key set not read (%s); %s", self.where(), type(exc).__name__,
                          "the previous one stays in force" if self.keys is not None else "no token can be checked")

    async def load(self) -> dict:
        raise NotImplementedError

    def where(self) -> str:
        raise NotImplementedError

    def forget(self) -> None:
        """Drop the cached set (SIGHUP): the next token reads it afresh."""
        self.keys, self.fetched_at, self.attempted_at = None, float("-inf"), float("-inf")


def _find(keys: KeySet, kid: Any, alg: str) -> Key | None:
    if kid is not None and not isinstance(kid, str):
        return None
    try:
        return keys.get_by_kid(kid, {"alg": alg, "use": "sig"})
    except (InvalidKeyIdError, ValueError):
        return None


class FileKeys(KeySource):
    """A local JWKS file (an issuer reachable only by its operator, or an air-gapped host)."""

    def __init__(self, path: str | Path, **timing: Any):
        super().__init__(**timing)
        self.path = Path(path)

    async def load(self) -> dict:
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise KeysUnavailable() from exc

    def where(self) -> str:
        return str(self.path)


class RemoteKeys(KeySource):
    """The issuer's JWKS over HTTP, at `jwks_uri` or wherever the issuer's metadata says."""

    def __init__(self, issuer: str, jwks_uri: str | None, *, http: Callable[[], httpx2.AsyncClient],
                 max_bytes: int, **timing: Any):
        super().__init__(**timing)
        self.issuer, self.jwks_uri, self.http, self.max_bytes = issuer, jwks_uri, http, max_bytes

    async def load(self) -> dict:
        if self.jwks_uri is None:
            self.jwks_uri = await self._discover()
        return await self._get(self.jwks_uri)

    def where(self) -> str:
        return self.jwks_uri or f"{self.issuer} (metadata)"

    async def _discover(self) -> str:
        """jwks_uri from the issuer's metadata, whose `issuer` must be the issuer (RFC 8414 §3.3)."""
        for url in metadata_urls(self.issuer):
            try:
                document = await self._get(url)
            except KeysUnavailable:
                continue
            if document.get("issuer") == self.issuer and isinstance(document.get("jwks_uri"), str):
                return checked_url(document["jwks_uri"], "jwks_uri")
        raise KeysUnavailable()

    async def _get(self, url: str) -> dict:
        body = b""
        try:
            async with self.http().stream("GET", url, headers={"Accept": "application/json"}) as response:
                if response.status_code != 200:
                    raise KeysUnavailable()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > self.max_bytes:
                        raise KeysUnavailable()
            document = json.loads(body)
        except (httpx2.HTTPError, ValueError) as exc:
            raise KeysUnavailable() from exc
        if not isinstance(document, dict):
            raise KeysUnavailable()
        return document


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the order the MCP authorization spec tries them."""
    parts = urlsplit(issuer)
    base, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
    if not path:
        return [f"{base}/.well-known/oauth-authorization-server", f"{base}/.well-known/openid-configuration"]
    return [f"{base}/.well-known/oauth-authorization-server{path}", f"{base}/.well-known/openid-configuration{path}",
            f"{base}{path}/.well-known/openid-configuration"]
