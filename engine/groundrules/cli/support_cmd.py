"""`groundrules explain`: the support_reason of one context, as an envelope."""
from __future__ import annotations

import argparse

from .. import canonical
from ..support_reason import contract_text, explain, explain_with_trace
from .io import emit, emit_text, read_json
from .rulebook_arg import rulebook_from


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("explain", help="explain why a knowledge-gateway context has its support_status",
                       description="Print the support_reason of a knowledge-gateway v1 context.")
    p.add_argument("file", metavar="FILE|-", help="context JSON file, or - for stdin")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--contract", action="store_true", help="print the one-sentence contract text")
    mode.add_argument("--trace", action="store_true",
                      help="print, for every row, whether it fired and else the first failing test")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    book = rulebook_from(args)
    ctx = read_json(args.file)
    if args.contract:
        emit_text(contract_text(ctx, book))
        return 0
    if args.trace:
        reason, trace = explain_with_trace(ctx, book)
        emit(canonical.envelope(ok=True, data={"support_reason": reason, "trace": trace},
                                rulebook=book.version))
        return 0
    emit(canonical.envelope(ok=True, data=explain(ctx, book), rulebook=book.version))
    return 0
