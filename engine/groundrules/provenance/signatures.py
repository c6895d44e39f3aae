"""Signed records: a host, a tool or a runner signs what it wrote, so that whoever relays it (an
agent, say) cannot change it and the ledger can tell who vouches for it.

A record's `signature` is a JWS in compact form whose payload is the record itself, without its
`signature`, as canonical JSON (keys sorted, no spaces, UTF-8): any changed byte breaks it. Its
header names the key (`kid`) of a signer in the operator's trust store (trust.py).
"""
from __future__ import annotations

import base64
import json
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import JWKRegistry

from .trust import Signer, TrustStore

FIELD = "signature"


class SignatureRefused(Exception):
    """Why a signature does not vouch for its record: `reason` is invalid, unknown_signer or not_allowed."""

    def __init__(self, reason: str, signer: str = ""):
        super().__init__(reason)
        self.reason, self.signer = reason, signer


def payload(record: dict) -> bytes:
    """What a record's signature signs: the record without its signature, as canonical JSON."""
    body = {k: v for k, v in record.items() if k != FIELD}
    return json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")


def sign(record: dict, jwk: dict, *, algorithm: str | None = None) -> dict:
    """`record` with a `signature` made with the private JWK `jwk` (its `kid` names it in the trust store)."""
    key = JWKRegistry.import_key(jwk)
    alg = algorithm or {"OKP": "Ed25519", "EC": "ES256", "RSA": "RS256"}[jwk["kty"]]
    token = jws.serialize_compact({"alg": alg, "kid": jwk["kid"]}, payload(record), key, algorithms=[alg])
    return dict({k: v for k, v in record.items() if k != FIELD}, **{FIELD: token})


def verify(record: dict, trust: TrustStore) -> Signer:
    """The signer that vouches for `record` by its signature; SignatureRefused otherwise (a changed
    byte, a key no signer of the store holds, an algorithm the store does not allow)."""
    token = record.get(FIELD)
    parts = token.split(".") if isinstance(token, str) and token.isascii() else []
    if len(parts) != 3:
        raise SignatureRefused("invalid")
    try:
        header = json.loads(_unb64(parts[0]))
    except (ValueError, TypeError):
        raise SignatureRefused("invalid") from None
    if not isinstance(header, dict) or not isinstance(header.get("kid"), str) or not isinstance(header.get("alg"), str):
        raise SignatureRefused("invalid")                 # a header that names no key cannot be anyone's
    found = trust.key(header["kid"])
    if found is None:
        raise SignatureRefused("unknown_signer")
    signer, key = found
    alg = header["alg"]
    if alg not in trust.algorithms or parts[1] != _b64(payload(record)):      # a changed byte of the record
        raise SignatureRefused("invalid", signer.name)
    if not _valid(parts, alg, key):
        raise SignatureRefused("invalid", signer.name)
    return signer


def _valid(parts: list, alg: str, key: Any) -> bool:
    """Does the JWS signature verify? Ed25519 (the default) is checked with the key's own
    `cryptography` object, sparing joserfc's generic path (a third of a signed append's cost);
    every other algorithm goes through joserfc."""
    if alg == "Ed25519" and isinstance(getattr(key, "public_key", None), Ed25519PublicKey):
        try:
            key.public_key.verify(_unb64(parts[2]), f"{parts[0]}.{parts[1]}".encode("ascii"))
            return True
        except (InvalidSignature, ValueError):
            return False
    try:
        return bool(jws.validate_compact(jws.extract_compact(".".join(parts).encode("ascii")), key, algorithms=[alg]))
    except (JoseError, ValueError, TypeError):
        return False


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def vouches(signer: Signer, *, record_class: str | None = None, method: str | None = None) -> bool:
    """May `signer` vouch for a record of this provenance class, or evidence of this method?"""
    return (record_class is not None and record_class in signer.records) or (method is not None and method in signer.methods)
