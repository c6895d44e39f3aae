"""The trace of every table kind that decides something, for `groundrules eval TABLE FILE`.

A decision table is traced row by row (core/decide.py); a lock table candidate by candidate
(trace/locks.py); a transition table step by step, guard by guard (findings/transitions.py); a
merge policy event by event (trace/fold.py). Facts that do not fit the table's input contract are
refused, naming the field at fault and the tables whose input they do fit, instead of being
evaluated into a silent "nothing fired".
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ...core.fieldtypes import check_given, contract_named
from ...core.tables import location
from ...core.yamlsrc import Source

if TYPE_CHECKING:
    from ...core.rulebook import Rulebook

Where = Callable[[tuple], str]

# table kind -> what `eval` reads for it, in words (decision tables: their contract's value)
INPUTS = {
    "decision_table": "a value of the table's input contract",
    "lock_patterns": "a message {id, role, content, state?}, a list of them, or {\"messages\": [...]}",
    "transition_table": "the facts of one move: {machine, from, to, via?, role?, ...the guards' facts}",
    "merge_policy": "a fold payload {now, records, interpretations}",
}


def traceable(book: "Rulebook") -> dict[str, str]:
    """Every table `eval` can trace (embedded decision tables too) -> its kind."""
    out = {table.id: "decision_table" for table, _, _ in book.decision_tables()}
    for table_id, kind in book.kinds.items():
        if kind in INPUTS and kind != "decision_table":
            out[table_id] = kind
    return dict(sorted(out.items()))


def misfit(book: "Rulebook", contract: str, value: Any) -> list[str]:
    """Why `value` is not a value of the contract (`schemas/<contract>`), one line per problem;
    [] when it fits (or there is no such contract)."""
    found = contract_named(book.schemas, contract)
    if found is None:
        return []
    faults: list = []
    check_given(value, found, (), faults, what="the value")
    if faults:
        return [f.message + (f" ({f.hint})" if f.hint else "") for f in faults]
    from ...core.schema_check import contract as checker
    try:
        problem = checker(book.schemas, contract).located(value)
    except Exception:  # noqa: BLE001 - a contract the fast checker cannot compile is not the value's fault
        return []
    return [problem] if problem else []


def fitting(book: "Rulebook", value: Any, but: str) -> list[str]:
    """The decision and transition tables (other than `but`) whose input contract `value` fits."""
    out = []
    for table, _, _ in book.decision_tables():
        if table.id != but and table.input and not misfit(book, table.input, value):
            out.append(table.id)
    for table_id, kind in book.kinds.items():
        source = book.sources[table_id].data
        if kind == "transition_table" and table_id != but and source.get("input") \
                and not misfit(book, source["input"], value):
            out.append(table_id)
    return sorted(out)


def where_of(source: Source, prefix: tuple = ()) -> Where:
    def at(path: tuple) -> str:
        line, col, _ = location(source, prefix + tuple(path))
        return f"{source.file}:{line}:{col}"
    return at


def located(value: Any, at: Where) -> Any:
    """The trace as JSON for --json: every key path `where` becomes `at`, a file:line:col."""
    if isinstance(value, dict):
        return {("at" if k == "where" else k): (at(v) if k == "where" else located(v, at)) for k, v in value.items()}
    if isinstance(value, list):
        return [located(v, at) for v in value]
    return value


def located_lock_trace(trace: dict, sources: dict) -> dict:
    """A lock trace for --json: each table's key paths as file:line:col of that table."""
    return dict(trace, tables=[located(t, where_of(sources[t["table"]])) for t in trace["tables"]])
