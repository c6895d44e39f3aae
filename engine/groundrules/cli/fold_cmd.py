"""`groundrules fold FILE|-`: fold a ledger and its interpretations into current slot state."""
from __future__ import annotations

import argparse

from ..evidence import fold
from .io import answer, read_json
from .rulebook_arg import rulebook_from


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fold", help="fold evidence records and interpretations into slot state per scope",
                       description="Read {now, records, interpretations} (evidence v1) and print "
                                   "{evidence, events, state} in the envelope, or the refusal (exit 1).")
    p.add_argument("file", metavar="FILE|-", help="payload JSON file, or - for stdin")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    book = rulebook_from(args)
    payload = read_json(args.file)
    return answer(lambda: fold(payload, book), book.version)
