"""The simulator: one input through one table of the edited rulebook, with the trace `groundrules
eval --trace --json` gives (the same traces: core/decide.py, trace/locks.py, the transition table's
own, trace/fold.py), each step at its file:line:col.

The input is what the analyst pasted, a case of the table's corpus, or a logged decision's
arguments (read through the registry's read_decisions, as a reviewer reads them).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import corpus
from ..trace import INPUTS, located, located_lock_trace, misfit, traceable, where_of
from ...core import codes
from ...core.errors import GroundrulesError, echo
from ...core.messages import of as catalogue_of, refused, worded
from ...core.rulebook import Rulebook

# the tool whose logged arguments feed each kind of table, and the argument that is its input
# (None: the arguments themselves)
LOGGED_INPUT = {"decision_table": ("explain_support", "context"), "lock_patterns": ("lock_message", None),
                "merge_policy": ("fold_evidence", None)}


def logged_input(kind: str, decision: dict) -> Any:
    """The input a logged decision's arguments give a table of `kind` (None: not this kind's tool)."""
    tool, argument = LOGGED_INPUT.get(kind, (None, None))
    if tool is None or decision.get("tool") != tool:
        return None
    arguments = decision.get("arguments")
    return arguments if argument is None else (arguments or {}).get(argument)


def tables_in(book: Rulebook, file: str) -> list[tuple[str, str]]:
    """(table id, kind) of every table the simulator can run that lives in `file`."""
    return [(t, kind) for t, kind in traceable(book).items() if book.sources[t.split(".")[0]].file == file]


def cases(cases_dir: Path, book: Rulebook, table_id: str, kind: str) -> list[tuple[str, Any]]:
    """The corpus cases an input can be picked from, by name."""
    if kind == "decision_table":
        return corpus.table_cases(cases_dir, table_id) or []
    if kind == "lock_patterns":
        return [(name, {"messages": m}) for name, m in corpus.lock_cases(cases_dir) or ()]
    if kind == "merge_policy":
        return corpus.fold_cases(cases_dir) or []
    return []


def run(book: Rulebook, table_id: str, value: Any, now: str | None = None) -> dict:
    """What the table decides on `value`, traced: {kind, fired: [...], trace: [...]} for a decision
    table, {kind, messages: [...]} for locks, {kind, trace} for a move, {kind, events} for a fold.
    A value that is not the table's input is refused with the reasons (`refused`)."""
    kind = traceable(book).get(table_id)
    if kind is None:
        raise refused(book, codes.INVALID_ARGUMENT, "studio.no_table", table=echo(table_id))
    try:
        return {"table": table_id, "kind": kind, **RUNS[kind](book, table_id, value, now)}
    except GroundrulesError as exc:
        return {"table": table_id, "kind": kind, "refused": [worded(exc, catalogue_of(book)).message]}


def _decision(book: Rulebook, table_id: str, value: Any, now: str | None) -> dict:
    table, source, prefix = next(t for t in book.decision_tables() if t[0].id == table_id)
    problems = misfit(book, table.input, value) if table.input else []
    if problems:
        return {"refused": problems}
    decision = table.evaluate(value, trace=True, now=now)
    at = where_of(source, prefix)
    rows = {r.id: r for r in table.rows}
    fired = [{"row": f.row.id, "code": f.code, "at": at(f.row.where), "outputs": f.outputs} for f in decision.fired]
    notes = [dict(located(n, at), at=at(rows[n["row"]].where)) if n["row"] in rows else located(n, at)
             for n in decision.trace or ()]
    return {"fired": fired, "trace": notes}


def _locks(book: Rulebook, table_id: str, value: Any, now: str | None) -> dict:
    from ..trace.locks import lock_trace
    messages = value.get("messages") if isinstance(value, dict) and "messages" in value else \
        [value["message"]] if isinstance(value, dict) and "message" in value else \
        value if isinstance(value, list) else [value]
    if not isinstance(messages, list):
        return {"refused": [f"an input is {INPUTS['lock_patterns']}"]}
    sources = {t.id: book.sources[t.id] for t in book.of_kind("lock_patterns")}
    return {"messages": [located_lock_trace(lock_trace(book, table_id, m), sources) for m in messages]}


def _transition(book: Rulebook, table_id: str, value: Any, now: str | None) -> dict:
    table, source = book.tables[table_id], book.sources[table_id]
    if not isinstance(value, dict) or not all(isinstance(value.get(k), str) for k in ("machine", "from", "to")):
        return {"refused": [f"an input is {INPUTS['transition_table']}"]}
    machine = table.machines.get(value["machine"])
    if machine is None or value["from"] not in machine.states or value["to"] not in machine.states:
        return {"refused": [f"no machine {value['machine']} with states {value['from']} and {value['to']}"]}
    facts = {k: v for k, v in value.items() if k not in ("machine", "from", "to", "via", "role")}
    traced = table.trace(value["machine"], value["from"], value["to"], facts, value.get("via"), value.get("role"))
    return {"trace": located(traced, where_of(source))}


def _fold(book: Rulebook, table_id: str, value: Any, now: str | None) -> dict:
    from ..trace.fold import fold_trace
    traced = fold_trace(book, table_id, value)
    at = where_of(book.sources[table_id], ("resolve",))
    return {"events": located(traced["events"], at)}


RUNS = {"decision_table": _decision, "lock_patterns": _locks, "transition_table": _transition,
        "merge_policy": _fold}
