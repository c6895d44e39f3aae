"""`groundrules sign`: a host, a tool or a runner signs a record, so that whoever relays it (an agent,
say) keeps its weight and cannot change a byte of it (docs/provenance.md).

`sign --generate KID --key FILE` makes a signing key (Ed25519), writes the private JWK to FILE (mode
0600, never overwritten) and prints the public JWK to list in the operator's trust store;
`sign RECORD --key FILE` prints the record with its `signature`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..core.canonical import dumps
from .io import read_json, reason, usage_error


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("sign", help="sign a record for the ledgers, or make a signing key",
                       description="Print RECORD (a JSON object; - for stdin) with a `signature` made with the "
                                   "private JWK in --key, for a signer the operator lists in the trust store "
                                   "(serve --trust). With --generate KID, make that key instead.")
    s.add_argument("record", metavar="RECORD|-", nargs="?", help="the record to sign (JSON object)")
    s.add_argument("--key", required=True, metavar="FILE", help="the signer's private JWK (JSON), as --generate writes it")
    s.add_argument("--generate", metavar="KID", help="write a new Ed25519 private key named KID to --key (a file that "
                   "must not exist yet) and print its public JWK for the trust store")
    s.set_defaults(func=run_sign)


def run_sign(args: argparse.Namespace) -> int:
    if args.generate is not None:
        if args.record is not None:
            raise usage_error("usage.sign_generate_alone")
        return _generate(args.generate, Path(args.key))
    if args.record is None:
        raise usage_error("usage.sign_no_record")
    from ..provenance.signatures import sign
    key = read_json(args.key)
    if not isinstance(key, dict) or not isinstance(key.get("kid"), str) or "d" not in key:
        raise usage_error("usage.sign_not_jwk", key=args.key)
    record = read_json(args.record)
    if not isinstance(record, dict):
        raise usage_error("usage.sign_not_object")
    try:
        signed = sign(record, key)
    except (ValueError, KeyError, TypeError) as exc:
        raise usage_error("usage.sign_failed", key=args.key, kind=type(exc).__name__) from None
    sys.stdout.write(dumps(signed) + "\n")
    return 0


def _generate(kid: str, path: Path) -> int:
    from joserfc.jwk import OKPKey
    if not kid.strip():
        raise usage_error("usage.sign_no_kid")
    key = OKPKey.generate_key("Ed25519", parameters={"kid": kid})
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise usage_error("usage.sign_key_exists", path=str(path)) from None
    except OSError as exc:
        raise usage_error("usage.cannot_create", path=str(path), reason=reason(exc)) from None
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(key.as_dict(private=True)) + "\n")
    sys.stdout.write(dumps(key.as_dict(private=False)) + "\n")
    sys.stderr.write(f"groundrules sign: wrote the private key {kid} to {path}; list the public key above under a "
                     "signer of the trust store\n")
    return 0
