"""Running the corpora that exercise tables inside a part, and noting what each table was asked.

The merge policy's decision tables are evaluated by the fold, and the transition tables by the
finding ledger's tools: their corpora (`tests/cases/fold/`, `tests/cases/findings/`) are payloads
and call sequences, not values of the tables' contracts. Both run here on a rulebook whose tables
record every question they are asked, so lint's coverage and `groundrules diff` see what the
report sees. The parts run unchanged: a recording table answers exactly as the table it wraps.
"""
from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from types import MappingProxyType
from typing import Any

from . import corpus
from ..core import codes
from ..core.errors import GroundrulesError
from ..core.rulebook import Rulebook

CALLER_ROLE = "reviewer"          # a call sequence's caller, unless a step names its `role`
CLOCK_START = "2030-01-01T00:00:00Z"


class Asked:
    """A table that notes each question (arguments, answer) under the case being run."""

    def __init__(self, table: Any, method: str, notes: dict):
        self._table, self._method, self._notes = table, method, notes
        self.case = ""

    def _ask(self, *args: Any, **kwargs: Any) -> Any:
        answer = getattr(self._table, self._method)(*args, **kwargs)
        self._notes.setdefault(self.case, []).append((args, kwargs, answer))
        return answer

    def __getattr__(self, name: str) -> Any:
        if name == self._method:
            return self._ask
        return getattr(self._table, name)


class _AskedMoves(Asked):
    """A transition table noting every move it checks (check) and every stay (check_stay)."""

    def __init__(self, table: Any, notes: dict):
        super().__init__(table, "check", notes)

    def check(self, machine: str, source: str, target: str, facts: dict, via: str | None = None,
              role: str | None = None):
        answer = self._table.check(machine, source, target, facts, via, role)
        self._notes.setdefault(self.case, []).append(((machine, source, target, facts, via, role), {}, answer))
        return answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)

    def check_stay(self, machine: str, state: str, facts: dict, via: str | None = None, role: str | None = None):
        answer = self._table.check_stay(machine, state, facts, via, role)
        self._notes.setdefault(self.case, []).append(((machine, state, state, facts, via, role), {}, answer))
        return answer


def fold_evaluations(book: Rulebook, cases: Path) -> tuple[int, dict[str, list]] | None:
    """(payloads in the fold corpus, {embedded table id: [(case, [value, ...]), ...]}): every value
    the fold asked each merge-policy table, per payload; None without a fold corpus."""
    payloads = corpus.fold_cases(cases)
    embedded = [ref for ref in corpus.decision_tables(book) if ref.run_by == corpus.FOLD]
    if payloads is None or not embedded:
        return None
    from ..evidence import fold
    notes: dict = {ref.id: {} for ref in embedded}
    asked = {ref.id: Asked(ref.table, "evaluate", notes[ref.id]) for ref in embedded}
    tables = dict(book.tables)
    for owner in sorted({ref.owner for ref in embedded}):
        swaps = {ref.key: asked[ref.id] for ref in embedded if ref.owner == owner}
        tables[owner] = dataclasses.replace(tables[owner], **swaps)
    recording = dataclasses.replace(book, tables=MappingProxyType(tables), memo={})
    for name, payload in payloads:
        for a in asked.values():
            a.case = name
        try:
            fold(payload, recording)
        except GroundrulesError:
            continue
    return len(payloads), {ref.id: [(name, [args[0] for args, _, _ in notes[ref.id].get(name, [])])
                                    for name, _ in payloads] for ref in embedded}


def findings_runs(book: Rulebook, cases: Path) -> dict | None:
    """Every call sequence of tests/cases/findings/ on a fresh ledger (injected clock and ids, so two
    rulebooks' runs compare step by step): {case: {"steps": [outcome per call, with the moves it
    made as (table id, machine, from, to, facts, via, role, Blocked | None)], "moves": {table id:
    [(machine, from, to, facts, via, role, Blocked | None), ...]}, "values": {decision table id:
    [every value the tools asked it], ...}}}; None without that corpus."""
    sequences = corpus.findings_cases(cases)
    machines = [t for t in sorted(book.kinds) if book.kinds[t] == "transition_table"]
    if sequences is None:
        return None
    from ..api import Caller, Service
    from ..findings import FindingLedger, SequentialIds, StepClock
    notes: dict = {t: {} for t in machines}
    asked: dict = {t: _AskedMoves(book.tables[t], notes[t]) for t in machines}
    decisions = [t for t in sorted(book.kinds) if book.kinds[t] == "decision_table"]
    values: dict = {t: {} for t in decisions}
    asked.update({t: Asked(book.tables[t], "evaluate", values[t]) for t in decisions})
    recording = dataclasses.replace(book, tables=MappingProxyType({**book.tables, **asked}), memo={})
    out = {}
    with tempfile.TemporaryDirectory(prefix="groundrules-corpus-") as tmp:
        for n, (name, steps) in enumerate(sequences):
            for a in asked.values():
                a.case = name
            try:
                ledger = FindingLedger(Path(tmp) / f"{n}.db", rulebook=recording, clock=StepClock(CLOCK_START),
                                       ids=SequentialIds())
                service = Service(recording, findings=ledger)
            except GroundrulesError as exc:      # a rulebook of some tables only (lint FILE...): no ledger runs
                if exc.code != codes.RULEBOOK_INCOMPLETE:
                    raise
                return None
            outcomes = []
            try:
                for step in steps:
                    if not isinstance(step, dict):
                        continue
                    caller = Caller("corpus", step.get("role", CALLER_ROLE), (step.get("project", "p1"),))
                    seen = {t: len(notes[t].get(name, [])) for t in machines}
                    env = service.call(step.get("tool", ""), step.get("args", {}), caller)
                    error = env["error"] or {}
                    made = [(t, *args, answer) for t in machines for args, _, answer in notes[t].get(name, [])[seen[t]:]]
                    outcomes.append({"tool": step.get("tool"), "ok": env["ok"], "error": error.get("code"),
                                     "message": error.get("message"), "guard": error.get("guard"), "data": env["data"],
                                     "warnings": [w["code"] for w in env["warnings"]], "moves": made})
            finally:
                ledger.close()
            out[name] = {"steps": outcomes,
                         "moves": {t: [(*args, answer) for args, _, answer in notes[t].get(name, [])]
                                   for t in machines},
                         "values": {t: [args[0] for args, _, _ in values[t].get(name, [])] for t in decisions}}
    return out


def asked_values(book: Rulebook, cases: Path, runs: dict | None) -> dict[str, tuple[str, list]]:
    """{decision table id: (corpus folder, [(case, [values asked]), ...])} for every decision table a
    corpus exercises: its own cases (folder ''), else what the fold asked it over tests/cases/fold/,
    else what the finding ledger's tools asked it over the call sequences `runs` (findings_runs).
    Lint's coverage and the report's count rows over these same values."""
    folded = fold_evaluations(book, cases)
    out: dict = {}
    for table, _, _ in book.decision_tables():
        own = corpus.table_cases(cases, table.id)
        if own is not None:
            out[table.id] = ("", [(name, [value]) for name, value in own])
        elif folded is not None and table.id in folded[1]:
            out[table.id] = (corpus.FOLD, folded[1][table.id])
        elif runs is not None and any(run["values"].get(table.id) for run in runs.values()):
            out[table.id] = (corpus.FINDINGS, [(name, run["values"][table.id]) for name, run in runs.items()])
    return out

