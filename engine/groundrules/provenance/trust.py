"""The operator's trust store: the signers whose signature makes a relayed record count.

A YAML (or JSON) file, kept by the operator beside the tokens file, never in the database:

    algorithms: [Ed25519, ES256]          # optional; the JWS algorithms a signature may use
    signers:
      billing-tool:                       # the signer's name: recorded as the record's signer
        keys: [{kty: OKP, crv: Ed25519, x: ..., kid: billing-2026}]   # public JWKs, each with a kid
        records: [tool_output]            # classes of rules/provenance.yaml it may vouch for
        methods: [test_run]               # finding-evidence methods it may vouch for

A key id names one key of one signer across the store. A file that does not load is a
TRUST_INVALID error at its file:line:col, and nothing of it is used.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import codes
from ..core.errors import GroundrulesError, echo, refusal

if TYPE_CHECKING:
    from ..core.yamlsrc import Source

ALGORITHMS = ("Ed25519", "ES256", "ES384", "RS256", "PS256")   # asymmetric only: a verifier holds no secret
SIGNER_KEYS = ("keys", "records", "methods")


@dataclass(frozen=True)
class Signer:
    name: str
    records: frozenset        # provenance classes it may vouch for
    methods: frozenset        # finding-evidence methods it may vouch for


@dataclass(frozen=True)
class TrustStore:
    file: str
    algorithms: tuple
    signers: dict = field(default_factory=dict)       # name -> Signer
    keys: dict = field(default_factory=dict)          # kid -> (signer name, joserfc key)

    def key(self, kid: Any) -> tuple[Signer, Any] | None:
        found = self.keys.get(kid) if isinstance(kid, str) else None
        return None if found is None else (self.signers[found[0]], found[1])


EMPTY = TrustStore("", ALGORITHMS)          # no signer: a signature is refused as by an unknown signer


def load_trust(path: str | Path) -> TrustStore:
    """Read and check a trust store; a GroundrulesError TRUST_INVALID naming file:line:col otherwise."""
    from ..core.yamlparse import parse                  # a server without a trust store never loads YAML for it
    from ..core.yamlsrc import YamlProblem
    label = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _invalid(label, 1, 1, "trust.missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _invalid(label, 1, 1, "trust.unread", reason=getattr(exc, "strerror", None) or type(exc).__name__) \
            from None
    try:
        source = parse(text, label)
    except YamlProblem as exc:
        raise _invalid(label, exc.line, exc.column, "trust.yaml", problem=exc.message) from None
    return _store(source)


def _store(src: Source) -> TrustStore:
    from joserfc.errors import JoseError
    from joserfc.jwk import JWKRegistry

    def refuse_at(path: tuple, name: str, **params: Any) -> GroundrulesError:
        line, col = src.where(path)
        return _invalid(src.file, line, col, name, **params)

    data = src.data
    if not isinstance(data, dict) or "signers" not in data or set(data) - {"signers", "algorithms"}:
        raise refuse_at((), "trust.top")
    algorithms = data.get("algorithms", list(ALGORITHMS))
    if not isinstance(algorithms, list) or not algorithms or any(a not in ALGORITHMS for a in algorithms):
        raise refuse_at(("algorithms",), "trust.algorithms", algorithms=list(ALGORITHMS))
    signers, keys = {}, {}
    if not isinstance(data["signers"], dict):
        raise refuse_at(("signers",), "trust.signers")
    for name, spec in data["signers"].items():
        at = ("signers", name)
        if not isinstance(spec, dict) or "keys" not in spec:
            raise refuse_at(at, "trust.signer")
        for key in spec:
            if key not in SIGNER_KEYS:
                raise refuse_at(at + (key,), "trust.key_unknown", key=echo(str(key)), keys=list(SIGNER_KEYS))
        for key in ("records", "methods"):
            if not isinstance(spec.get(key, []), list) or not all(isinstance(v, str) for v in spec.get(key, [])):
                raise refuse_at(at + (key,), "trust.names", key=key)
        if not isinstance(spec["keys"], list) or not spec["keys"]:
            raise refuse_at(at + ("keys",), "trust.keys")
        for n, jwk in enumerate(spec["keys"]):
            kid = jwk.get("kid") if isinstance(jwk, dict) else None
            if not isinstance(kid, str) or not kid:
                raise refuse_at(at + ("keys", n), "trust.kid")
            if kid in keys:
                raise refuse_at(at + ("keys", n, "kid"), "trust.kid_twice", kid=echo(kid))
            if any(part in jwk for part in ("d", "p", "q", "k")):
                raise refuse_at(at + ("keys", n), "trust.private")
            try:
                keys[kid] = (name, JWKRegistry.import_key(jwk))
            except (JoseError, ValueError, TypeError, KeyError) as exc:
                raise refuse_at(at + ("keys", n), "trust.jwk", kind=type(exc).__name__) from None
        signers[name] = Signer(name, frozenset(spec.get("records", [])), frozenset(spec.get("methods", [])))
    return TrustStore(src.file, tuple(algorithms), signers, keys)


def _invalid(file: str, line: int, col: int, name: str, **params: Any) -> GroundrulesError:
    """TRUST_INVALID at file:line:col (the file's name alone), worded by the catalogue's `name`."""
    return refusal(codes.TRUST_INVALID, name, at=f"{Path(file).name}:{line}:{col}", **params)
