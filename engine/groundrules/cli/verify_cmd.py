"""`groundrules verify`: check a model's extraction candidate, print the envelope."""
from __future__ import annotations

import argparse

from .. import verify_envelope
from .io import emit, read_json
from .rulebook_arg import rulebook_from


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verify", help="verify a model's extraction candidate against its sources",
                       description='Read {"request", "schema" | "instance", "candidate"} and print '
                                   '{"ok": true, "data": <result>} or {"ok": false, "error": {code, stage, '
                                   'message, issues, partialResult?}}. Exit 0 when the candidate verifies, '
                                   '1 otherwise.')
    p.add_argument("file", metavar="FILE|-", help="payload JSON file, or - for stdin")
    p.add_argument("--report", action="store_true",
                   help="print the whole report as data (grounding offsets, repairable) instead of the result")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    book = rulebook_from(args)
    envelope = verify_envelope(read_json(args.file), book, report=args.report)
    emit(envelope)
    return 0 if envelope["ok"] else 1
