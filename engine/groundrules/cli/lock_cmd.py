"""`groundrules lock`: the evidence locks of one message, or of a list of messages, as an envelope."""
from __future__ import annotations

import argparse

from ..locks import lock_document
from .io import answer, read_json
from .rulebook_arg import rulebook_from


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lock", help="lock the mechanical evidence (phones, accounts, IDs, markers) of messages",
                       description="Scan a message {id, role, content, state?} or {\"messages\": [...]} with "
                                   "every lock table and print data: {\"locks\": [...]}. A refused input "
                                   "prints an error envelope and exits 1.")
    p.add_argument("file", metavar="FILE|-", help="message JSON file, or - for stdin")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    book = rulebook_from(args)
    doc = read_json(args.file)
    return answer(lambda: {"locks": lock_document(doc, book)}, book.version)
