"""Signed records: a host, a tool or a runner signs what it wrote, so that whoever relays it (an
agent, say) cannot change it and the ledger can tell who vouches for it.

A record's `signature` is a JWS in compact form whose payload is the record itself, without its
`signature`, as canonical JSON (keys sorted, no spaces, UTF-8): any changed byte breaks it. Its
header names the key (`kid`) of a signer in the operator's trust store (trust.py).
"""
from __future__ import annotations

import json
from typing import Any

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
    if not isinstance(token, str) or not token.isascii():
        raise SignatureRefused("invalid")
    try:
        obj = jws.extract_compact(token.encode("ascii"))
        header = obj.headers()
    except (JoseError, ValueError, TypeError):
        raise SignatureRefused("invalid") from None
    found = trust.key(header.get("kid"))
    if found is None:
        raise SignatureRefused("unknown_signer")
    signer, key = found
    alg = header.get("alg")
    if alg not in trust.algorithms:
        raise SignatureRefused("invalid", signer.name)
    try:
        valid = jws.validate_compact(obj, key, algorithms=[alg])
    except (JoseError, ValueError, TypeError):
        valid = False
    if not valid or obj.payload != payload(record):
        raise SignatureRefused("invalid", signer.name)
    return signer


def vouches(signer: Signer, *, record_class: str | None = None, method: str | None = None) -> bool:
    """May `signer` vouch for a record of this provenance class, or evidence of this method?"""
    return (record_class is not None and record_class in signer.records) or (method is not None and method in signer.methods)
