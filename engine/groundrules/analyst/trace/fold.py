"""Why each event of a fold ended as it did: the facts the merge policy's `resolve` table read for
it (the event meeting its slot's current state) and, row by row, which row decided and why the
earlier ones did not. A fold answer names only the deciding row's id (`"rule": "default"`); this
is what an analyst needs to trace a merge row without building the facts by hand.

The fold runs unchanged, on a rulebook whose resolve table records what it is asked (the way the
report counts the merge rows): the facts are the fold's own, never rebuilt beside it.
"""
from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ...core import codes
from ...core.errors import refusal
from ...evidence import fold

if TYPE_CHECKING:
    from ...core.rulebook import Rulebook


class _Recording:
    """A decision table that keeps every value it is asked about with its traced decision."""

    def __init__(self, table: Any):
        self._table = table
        self.asked: list[tuple[Any, Any]] = []

    def evaluate(self, value: Any, **kwargs: Any) -> Any:
        decision = self._table.evaluate(value, **dict(kwargs, trace=True))
        self.asked.append((value, decision))
        return decision

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)


SET_ASIDE = "set_aside"       # an event resting only on evidence the asked-for scope set aside


def fold_trace(book: "Rulebook", policy_id: str, payload: Any) -> dict:
    """The fold's answer, and per event the resolve facts and rows (events that resolve nothing:
    scope, decline and activity events, a reading left for clarification, say so)."""
    policy = book.tables[policy_id]
    recording = _Recording(policy.resolve)
    tables = dict(book.tables)
    tables[policy_id] = dataclasses.replace(policy, resolve=recording)
    answer = fold(payload, dataclasses.replace(book, tables=MappingProxyType(tables), memo={}))
    asked = iter(recording.asked)
    events = []
    for ev in answer["events"]:
        item = {"event": ev["id"], "type": ev["type"], "layer": ev["layer"], "slot": ev["slot"],
                "scope": ev["scope"], "outcome": ev["outcome"], "rule": ev["rule"]}
        if ev["outcome"] == SET_ASIDE:              # decided by the scope-fit table, before any resolve
            item["decided_by"] = "scope_fit"
        elif ev["rule"] is not None:
            facts, decision = next(asked)
            fired = decision.fired[0]
            if (fired.row.id if fired.row.index >= 0 else "default") != ev["rule"]:
                raise refusal(codes.TRACE_DISAGREES, "trace.fold")
            item.update(facts=facts, trace=list(decision.trace or ()))
        events.append(item)
    return {"table": policy.resolve.id, "events": events, "answer": answer}
