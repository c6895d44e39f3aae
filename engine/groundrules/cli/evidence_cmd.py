"""`groundrules evidence append|get|redact|interpret|fold`: the stored evidence ledger, for people
and scripts.

Each command is one tool call with its flags as arguments (append_evidence, get_evidence,
redact_evidence, append_interpretation, fold_ledger), as the operator on the command line; `groundrules call` reaches
the same tools with a JSON file.
"""
from __future__ import annotations

import argparse
from typing import Any, Callable

from ..core.rulebook import Rulebook
from .io import emit_envelope, read_json
from .session import add_caller_args, call_once, input_cap, rulebook_from, tool_arguments


def register(sub: argparse._SubParsersAction) -> None:
    e = sub.add_parser("evidence", help="append to, read, redact and fold the stored evidence ledger",
                       description="The evidence ledger kept per project in the --db file (docs/spec/evidence.md).")
    esub = e.add_subparsers(dest="evidence_command", metavar="ACTION", required=True)
    a = esub.add_parser("append", help="append a record: a message, tool receipt or injected field (each locked on "
                        "append), a lock the engine finds, or a derived claim",
                        description="Append a record as --operator in --role (default host: the application that "
                        "relays users' and tools' words; rules/provenance.yaml says what each role may append).")
    add_caller_args(a, role="host", ledger=True)
    a.add_argument("file", metavar="FILE|-", help="the record as a JSON object, or the tool's arguments "
                   "{\"record\": ...}; - for stdin")
    a.set_defaults(func=_run, tool="append_evidence", build=_from_file("record"))
    g = esub.add_parser("get", help="one record (by record, message or lock id), or every record")
    add_caller_args(g, ledger=True)
    g.add_argument("record_id", metavar="RECORD_ID", nargs="?")
    g.set_defaults(func=_run, tool="get_evidence", build=lambda args, book: _given(record_id=args.record_id))
    r = esub.add_parser("redact", help="remove a record's personal fields for good (reviewers)",
                        description="Redact a record; the redaction records --operator as who did it.")
    add_caller_args(r, role="reviewer", ledger=True)
    r.add_argument("record_id", metavar="RECORD_ID")
    r.add_argument("--reason", required=True, help="why (recorded)")
    r.set_defaults(func=_run, tool="redact_evidence",
                   build=lambda args, book: {"record_id": args.record_id, "reason": args.reason})
    i = esub.add_parser("interpret", help="store an interpretation (events and lock dispositions), checked as the fold checks it")
    add_caller_args(i, ledger=True)
    i.add_argument("file", metavar="FILE|-", help="the interpretation as a JSON object, or the tool's arguments "
                   "{\"interpretation\": ...}; - for stdin")
    i.set_defaults(func=_run, tool="append_interpretation", build=_from_file("interpretation"))
    f = esub.add_parser("fold", help="fold the stored ledger with interpretations at a given time")
    add_caller_args(f, ledger=True)
    f.add_argument("--now", required=True, help="the fold's clock (ISO 8601 with an offset)")
    f.add_argument("--interpretations", metavar="FILE|-",
                   help="a JSON list of interpretations (default: the stored ones)")
    f.add_argument("--subject", help="fold only the records about this subject")
    f.add_argument("--scope-context", metavar="FILE|-",
                   help="a JSON object: fold for this context (evidence whose applicability or version does not fit "
                        "it decides nothing)")
    f.set_defaults(func=_run, tool="fold_ledger", build=lambda args, book: _given(
        now=args.now, subject=args.subject,
        interpretations=read_json(args.interpretations, input_cap(args)) if args.interpretations else None,
        scope_context=read_json(args.scope_context, input_cap(args)) if args.scope_context else None))


def _from_file(argument: str) -> Callable[[argparse.Namespace, Rulebook], Any]:
    """FILE as the tool's own arguments, or as the one argument it names (session.tool_arguments)."""
    def build(args: argparse.Namespace, book: Rulebook) -> Any:
        return tool_arguments(book, args.tool, read_json(args.file, input_cap(args)), lambda doc: {argument: doc})
    return build


def _given(**arguments) -> dict:
    return {k: v for k, v in arguments.items() if v is not None}


def _run(args: argparse.Namespace) -> int:
    book = rulebook_from(args)
    return emit_envelope(call_once(args, args.tool, args.build(args, book), book=book))
