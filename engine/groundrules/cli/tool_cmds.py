"""The parts' commands: each reads a file, takes it as the tool's arguments (or maps the command's
convenience shape to them), and prints the envelope `Service.call` answers (exit 0 when ok).
`groundrules call TOOL FILE` reaches any tool."""
from __future__ import annotations

import argparse
from typing import Any, Callable

from ..core import canonical
from .io import emit, emit_envelope, emit_text, read_json
from .session import add_caller_args, call_once, input_cap, rulebook_from, tool_arguments


def lock_arguments(doc: Any) -> Any:
    """The convenience shapes: a list is the messages, anything else one message."""
    return {"messages": doc} if isinstance(doc, list) else {"message": doc}


# command -> (tool, help, description, convenience shape -> arguments); every command also takes
# the tool's own arguments, as MCP does (session.tool_arguments)
COMMANDS: dict[str, tuple[str, str, str, Callable[[Any], Any]]] = {
    "explain": ("explain_support", "explain why a knowledge-gateway context has its support_status",
                "Print the support_reason of a knowledge-gateway v1 context, given as the explain_support "
                "tool's arguments {\"context\": ...} or bare.", lambda doc: {"context": doc}),
    "lock": ("lock_message", "lock the mechanical evidence (phones, accounts, IDs, markers) of messages",
             "Lock messages given as the lock_message tool's arguments ({\"message\": {...}} or "
             "{\"messages\": [...]}), or a bare message {id, role, content, state?}, or a list of them.",
             lock_arguments),
    "fold": ("fold_evidence", "fold evidence records and interpretations into slot state per scope",
             "Read {now, records, interpretations} (evidence v1) and print {evidence, events, state} "
             "(the fold_evidence tool).", lambda doc: doc),
    "verify": ("verify_extraction", "verify a model's extraction candidate against its sources",
               "Read {\"request\", \"schema\" | \"instance\", \"candidate\"} and print the verification "
               "(the verify_extraction tool); exit 0 when the candidate verifies, 1 otherwise.", lambda doc: doc),
}


def register(sub: argparse._SubParsersAction) -> None:
    for command, (tool, help_text, description, _) in COMMANDS.items():
        p = sub.add_parser(command, help=help_text, description=description)
        p.add_argument("file", metavar="FILE|-", help="JSON file, or - for stdin")
        add_caller_args(p)
        if command == "explain":
            mode = p.add_mutually_exclusive_group()
            mode.add_argument("--contract", action="store_true", help="print the one-sentence contract text")
            mode.add_argument("--trace", action="store_true",
                              help="print, for every row, whether it fired and else the first failing test")
        if command == "lock":
            p.add_argument("--trace", action="store_true",
                           help="add, per message and lock table, each pattern's gate, candidates, steps, checks, "
                                "rules and near misses (groundrules eval TABLE FILE prints one table's as text)")
        if command == "verify":
            p.add_argument("--report", action="store_true",
                           help="print the whole report as data (grounding offsets, repairable) instead of the result")
        p.set_defaults(func=run, command_name=command)
    c = sub.add_parser("call", help="call any tool with its arguments, as an agent would over MCP",
                       description="Call TOOL with the JSON arguments in FILE and print its envelope.")
    c.add_argument("tool", metavar="TOOL", help="a tool name (groundrules serve --help lists them)")
    c.add_argument("file", metavar="FILE|-", help="the arguments as a JSON object, or - for stdin")
    add_caller_args(c)
    c.set_defaults(func=run_call)


def run(args: argparse.Namespace) -> int:
    tool, _, _, convenience = COMMANDS[args.command_name]
    book = rulebook_from(args)
    arguments = tool_arguments(book, tool, read_json(args.file, input_cap(args)), convenience)
    if args.command_name == "explain" and (args.contract or args.trace):
        return _explain_extra(args, arguments["context"])
    if args.command_name == "lock" and args.trace:
        return _lock_trace(args, arguments, book)
    if getattr(args, "report", False) and isinstance(arguments, dict):
        arguments = dict(arguments, report=True)
    return emit_envelope(call_once(args, tool, arguments, book=book))


def run_call(args: argparse.Namespace) -> int:
    return emit_envelope(call_once(args, args.tool, read_json(args.file, input_cap(args))))


def _explain_extra(args: argparse.Namespace, ctx: Any) -> int:
    """The analyst's views of one explanation: the contract sentence, or the row-by-row trace."""
    from ..support_reason import contract_text, explain_with_trace
    book = rulebook_from(args)
    if args.contract:
        emit_text(contract_text(ctx, book))
        return 0
    reason, trace = explain_with_trace(ctx, book)
    emit(canonical.envelope(ok=True, data={"support_reason": reason, "trace": trace}, rulebook=book.version))
    return 0


def _lock_trace(args: argparse.Namespace, arguments: Any, book) -> int:
    """The locks (the lock_message tool's answer) and, per message, why each table found them."""
    from ..analyst.trace.locks import lock_trace
    from .trace_text import located_lock_trace
    envelope = call_once(args, "lock_message", arguments, book=book)
    if not envelope["ok"]:
        return emit_envelope(envelope)
    messages = arguments.get("messages") or [arguments.get("message")]
    sources = {t.id: book.sources[t.id] for t in book.of_kind("lock_patterns")}
    traces = [located_lock_trace(lock_trace(book, None, m), sources) for m in messages]
    emit(canonical.envelope(ok=True, data={**envelope["data"], "trace": traces}, rulebook=envelope["rulebook"]))
    return 0
