"""`groundrules eval TABLE FILE [--trace]`: any table that decides, on one input, for the analyst.

A decision table: the rows that fired with their outputs, each at its file:line; with --trace every
other row too, with the test that failed at its file:line:col, the value it read, and for a list
operator the item that decided. A lock table: each pattern's gate, candidates, steps, checks, rules
and near misses (trace/locks.py). A transition table: the move, the operation, the role and each
guard (findings/transitions.py). A merge policy: each event's resolve facts and deciding row
(trace/fold.py). Input that does not fit the table's contract is refused, naming the field at
fault. --json prints the same as an envelope.
"""
from __future__ import annotations

import argparse
from typing import Any

from ..core import canonical, codes
from ..core.errors import GroundrulesError, closest, echo, refusal
from ..analyst.trace import INPUTS, fitting, misfit, traceable
from . import trace_text
from .io import emit, emit_text, read_json, usage_error
from .session import rulebook_from, worded


MORE_PROBLEMS = 6          # a misfit input: how many of its problems the text names


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="trace one table on one input: why each row, candidate, guard or event "
                                    "came out as it did",
                       description="Evaluate TABLE on the JSON input in FILE and print what decided, each at its "
                                   "file:line. TABLE is a decision table (one inside another, such as the merge "
                                   "policy's resolve table, is merge.resolve; input: a value of its contract), a "
                                   "lock table (input: a message, a list of them or {\"messages\": [...]}), a "
                                   "transition table (input: {machine, from, to, via?, role?, ...facts}) or the "
                                   "merge policy (input: a fold payload).")
    p.add_argument("table", metavar="TABLE", help="table id (groundrules eval --help lists the kinds)")
    p.add_argument("file", metavar="FILE|-", help="JSON input file, or - for stdin")
    p.add_argument("--trace", action="store_true",
                   help="decision tables and merge policies: every row, fired, skipped by the hit policy, or the "
                        "test that failed and what it read")
    p.add_argument("--now", metavar="DATETIME",
                   help="the now that date tests compare with (RFC 3339 with offset, e.g. 2024-05-01T08:00:00+08:00); "
                        "the clock is never read")
    p.add_argument("--json", action="store_true", help="print an envelope instead of text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    book = rulebook_from(args)
    kinds = traceable(book)
    if args.table not in kinds:
        if args.table in book.kinds:
            raise usage_error("usage.eval_untraceable", table=args.table, kind=book.kinds[args.table],
                              kinds=sorted(INPUTS))
        close = closest(args.table, kinds)
        raise usage_error("usage.eval_no_table_close" if close else "usage.eval_no_table", table=echo(args.table),
                          closest=close, tables=list(kinds))
    value = read_json(args.file)
    kind = kinds[args.table]
    try:
        if kind == "decision_table":
            return _decision(args, book, value)
        return TRACERS[kind](args, book, value)
    except GroundrulesError as exc:
        if exc.code == codes.USAGE:
            raise
        if args.json:
            emit(canonical.envelope(ok=False, error=worded(args, exc).as_dict(), rulebook=book.version))
        else:
            rest = exc.details.get("problems", [])[1:MORE_PROBLEMS]
            exc = worded(args, exc)
            emit_text("\n".join([f"{args.table}: {exc.code}: {exc.message}"] + [f"  also: {p}" for p in rest]))
        return 1


def _refuse_misfit(args: argparse.Namespace, book: Any, contract: str, value: Any) -> None:
    """Facts that are not a value of the table's input contract are refused, naming each field at
    fault and the tables whose input they do fit (the wrong table's facts, most often)."""
    problems = misfit(book, contract, value)
    if not problems:
        return
    others = fitting(book, value, args.table)
    exc = refusal(codes.INVALID_ARGUMENT, "usage.eval_misfit", table=args.table, contract=contract,
                  count=len(problems), problem=problems[0], fits=others)
    exc.details.update(problems=problems, fits=others)
    raise exc


def _decision(args: argparse.Namespace, book: Any, value: Any) -> int:
    found = {table.id: (table, source, prefix) for table, source, prefix in book.decision_tables()}
    table, source, prefix = found[args.table]
    if table.input:
        _refuse_misfit(args, book, table.input, value)
    decision = table.evaluate(value, trace=args.trace, now=args.now)
    at = trace_text.where_of(source, prefix)
    fired = [{"row": f.row.id, "code": f.code, "at": at(f.row.where), "outputs": f.outputs} for f in decision.fired]
    notes = [_located(note, table, at) for note in decision.trace or ()]
    if args.json:
        data = {"table": table.id, "hit_policy": table.hit_policy, "fired": fired}
        if args.trace:
            data["trace"] = notes
        emit(canonical.envelope(ok=True, data=data, rulebook=book.version))
        return 0
    lines = [f"{table.id} ({source.file}, hit policy {table.hit_policy}): {len(fired)} row(s) fired"]
    for f in fired:
        lines.append(f"{f['at']}: fired {f['row']} -> {f['code']}")
        lines += [f"    {key}: {trace_text.brief(value)}" for key, value in f["outputs"].items()]
    for note in notes if args.trace else ():
        if note["fired"]:
            continue
        if "skipped" in note:
            lines.append(f"{note['at']}: skipped {note['row']}: {note['skipped']}")
        else:
            lines.append(f"{note['at']}: not fired {note['row']}")
            lines += [f"    {text}" for text in trace_text.failure_lines(note["failed"], at)]
    emit_text("\n".join(lines))
    return 0


def _located(note: dict, table: Any, at) -> dict:
    row = next(r for r in table.rows if r.id == note["row"])
    return {"at": at(row.where), **note}


def _locks(args: argparse.Namespace, book: Any, value: Any) -> int:
    from ..analyst.trace.locks import lock_trace
    messages = value if isinstance(value, list) else value.get("messages") if isinstance(value, dict) \
        and "messages" in value else [value]
    if not isinstance(messages, list):
        raise usage_error("usage.eval_messages", input=args.file)
    traces = [lock_trace(book, args.table, m) for m in messages]
    sources = {t.id: book.sources[t.id] for t in book.of_kind("lock_patterns")}
    if args.json:
        emit(canonical.envelope(ok=True, data={"table": args.table, "messages": [
            trace_text.located_lock_trace(t, sources) for t in traces]}, rulebook=book.version))
        return 0
    emit_text("\n".join(line for t in traces for line in trace_text.lock_lines(t, sources)))
    return 0


def _transitions(args: argparse.Namespace, book: Any, value: Any) -> int:
    table, source = book.tables[args.table], book.sources[args.table]
    if not isinstance(value, dict) or not all(isinstance(value.get(k), str) for k in ("machine", "from", "to")):
        raise usage_error("usage.eval_move", input=args.file)
    machine = table.machines.get(value["machine"])
    if machine is None:
        close = closest(value["machine"], table.machines)
        raise usage_error("usage.eval_no_machine_close" if close else "usage.eval_no_machine", input=args.file,
                          machine=echo(value["machine"]), table=args.table, closest=close, choices=list(table.machines))
    for key in ("from", "to"):
        if value[key] not in machine.states:
            close = closest(value[key], machine.states)
            raise usage_error("usage.eval_no_state_close" if close else "usage.eval_no_state", input=args.file,
                              state=echo(value[key]), machine=value["machine"], closest=close,
                              choices=list(machine.states))
    if source.data.get("input"):
        _refuse_misfit(args, book, source.data["input"], value)
    facts = {k: v for k, v in value.items() if k not in ("machine", "from", "to", "via", "role")}
    traced = table.trace(value["machine"], value["from"], value["to"], facts, value.get("via"), value.get("role"))
    at = trace_text.where_of(source)
    if args.json:
        emit(canonical.envelope(ok=True, data=dict(trace_text.located(traced, at), table=args.table),
                                rulebook=book.version))
    else:
        emit_text("\n".join(trace_text.transition_lines(args.table, source.file, traced, at)))
    return 0


def _fold(args: argparse.Namespace, book: Any, value: Any) -> int:
    from ..analyst.trace.fold import fold_trace
    traced = fold_trace(book, args.table, value)
    resolve = book.tables[args.table].resolve
    at = trace_text.where_of(book.sources[args.table], ("resolve",))
    if args.json:
        events = [dict(e, trace=[_located(n, resolve, at) for n in e.get("trace", ())]) if "trace" in e else e
                  for e in traced["events"]]
        emit(canonical.envelope(ok=True, data={"table": args.table, "resolve": traced["table"], "events": events},
                                rulebook=book.version))
        return 0
    rows = {r.id: r for r in resolve.rows}
    if resolve.default is not None:
        rows["default"] = resolve.default
    emit_text("\n".join(trace_text.fold_lines(args.table, traced, at, rows, args.trace)))
    return 0


TRACERS = {"lock_patterns": _locks, "transition_table": _transitions, "merge_policy": _fold}
