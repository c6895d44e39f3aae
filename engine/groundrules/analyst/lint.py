"""`groundrules lint`: load errors, per-kind semantic checks, the silent mistakes of
lintchecks.CHECKS, and coverage over every corpus the report uses.

A compiled table may expose `lint_faults()` (more Faults, located by key path). Coverage: a decision
table over its case corpus (`tests/cases/<table-id>/*.json`), a merge-policy table over the values
the fold asked it while folding `tests/cases/fold/`, a transition table over the moves the finding
ledger checked while running `tests/cases/findings/`, a lock table over the conversations of
`tests/cases/locks/` and the chat corpora (corpus_runs.py, trace/locks.py).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import corpus, corpus_runs
from ..core.decide import Coverage, DecisionTable, tests_of
from ..core.errors import GroundrulesError, Problem, RulesError
from .lintchecks import CHECKS, WHOLE_BOOK_CHECKS
from ..core.rulebook import Rulebook, load
from ..core.resources import data_root
from ..core.tables import load_schemas, location, schema_problems
from ..core.yamlsrc import Source


@dataclass
class KindCoverage:
    """A lock or transition table over its corpus: per item (pattern, rule, transition, guard),
    its key path and how often it was exercised each way (`counts`, e.g. {"made": 2, "refused": 1})."""

    table: str
    source: Source
    corpus: str
    cases: int
    unit: str                       # what a case is: conversation(s), call sequence(s)
    items: list = field(default_factory=list)     # (what, id, key path, counts: dict)


@dataclass
class LintReport:
    problems: list = field(default_factory=list)     # Problem, errors and warnings
    coverage: list = field(default_factory=list)     # (table, source, key prefix, Coverage | None)
    kind_coverage: list = field(default_factory=list)  # KindCoverage of lock and transition tables

    @property
    def failed(self) -> bool:
        return any(p.severity == "error" for p in self.problems)


def lint(root: Path | str | None = None, files: list[Path] | None = None,
         cases: Path | None = None, overrides: Mapping[str, bytes] | None = None) -> LintReport:
    """Every problem of the tables (with `overrides`, display path -> bytes, standing in for the
    files they name: an editor's unsaved copy); with `cases`, the coverage over the corpora."""
    report = LintReport()
    try:
        book = load(root, files, cache=False, overrides=overrides)      # lint checks every table afresh
    except RulesError as exc:
        report.problems = sorted(set(exc.problems) | set(_schema_problems(root)))
        return report
    report.problems = list(book.warnings) + schema_problems(book.schemas)
    for table_id in sorted(book.tables):
        table = book.tables[table_id]
        source = book.sources[table_id]
        for f in getattr(table, "lint_faults", lambda: [])():
            line, col, key = location(source, f.path)
            report.problems.append(Problem(source.file, line, col, f.code, f.message, key, f.hint,
                                           f.severity))
    for check in CHECKS + (WHOLE_BOOK_CHECKS if files is None else ()):
        report.problems += check(book)
    report.problems = _once(report.problems)
    if cases is not None:
        runs = corpus_runs.findings_runs(book, cases)
        report.coverage = _coverage(book, cases, runs)
        report.kind_coverage = _transition_coverage(book, cases, runs) + _lock_coverage(book, cases)
    return report


def _once(problems: list[Problem]) -> list[Problem]:
    """One problem per place and code (a row without an example is both a table's lint fault and
    a failing example), the first said kept; sorted."""
    seen, out = set(), []
    for p in problems:
        if (p.file, p.line, p.column, p.code) not in seen:
            seen.add((p.file, p.line, p.column, p.code))
            out.append(p)
    return sorted(out)


def _schema_problems(root: Path | str | None) -> list[Problem]:
    """What is wrong inside the schemas, when they parse: a broken metaschema fails the load, and
    the load only names the file."""
    try:
        return schema_problems(load_schemas(Path(root) if root is not None else data_root()))
    except RulesError:
        return []


def _coverage(book: Rulebook, cases: Path, runs: dict | None) -> list:
    """(table, its source, its key path prefix, Coverage or None when no corpus runs it) for every
    decision table, those inside other tables included (the merge policy's: over the fold corpus)."""
    asked = corpus_runs.asked_values(book, cases, runs)
    out = []
    for table, source, prefix in book.decision_tables():
        folder, per_case = asked.get(table.id, ("", None))
        out.append((table, source, prefix,
                    None if per_case is None else _case_coverage(table, per_case)._replace(corpus=folder)))
    return out


def _case_coverage(table: DecisionTable, per_case: list) -> Coverage:
    """Per row, in how many cases it holds on some value and in how many it fires under the hit policy
    (the report's count); per test (outside list quantifiers), on how many values it held and failed.
    A value the table cannot read counts for nothing."""
    rows = sorted(table.rows, key=lambda r: r.index)
    tests = [(r, t) for r in rows for t in tests_of(r.when)]
    held = {r.index: 0 for r in rows}
    fired = {r.index: 0 for r in rows}
    counts = {id(t): [0, 0] for _, t in tests}
    for _, values in per_case:
        won = set().union(*(_fires(table, v) for v in values)) if values else set()
        for row in rows:
            held[row.index] += any(_holds(row.when, v) for v in values)
            fired[row.index] += row.id in won
        for value in values:
            for _, test in tests:
                got = _holds(test, value)
                if got is not None:
                    counts[id(test)][0 if got else 1] += 1
    return Coverage(len(per_case), tuple((r, held[r.index], fired[r.index]) for r in rows),
                    tuple((r, t, counts[id(t)][0], counts[id(t)][1]) for r, t in tests))


def _fires(table: DecisionTable, value: Any) -> set:
    """Ids of the rows the hit policy picks for `value` (none for a value the table refuses)."""
    try:
        return {f.row.id for f in table.evaluate(value).fired}
    except Exception:  # noqa: BLE001 - a corpus may hold broken cases
        return set()


def _holds(cond, value) -> bool | None:
    try:
        return bool(cond.test(value))
    except Exception:  # noqa: BLE001 - a corpus may hold broken cases
        return None


def _transition_coverage(book: Rulebook, cases: Path, runs: dict | None) -> list[KindCoverage]:
    """Per transition, how often the corpus's calls made it and were refused it; per guard, how
    often it passed and refused."""
    if runs is None:
        return []
    out = []
    for table_id in sorted(t for t, k in book.kinds.items() if k == "transition_table"):
        table, cov = book.tables[table_id], KindCoverage(table_id, book.sources[table_id], corpus.FINDINGS,
                                                         len(runs), "call sequence(s)")
        moves = [m for run in runs.values() for m in run["moves"][table_id]]
        for name, m in sorted(table.machines.items()):
            for t in m.transitions:
                tried = [mv for mv in moves if mv[0] == name and mv[2] == t.to and mv[1] in t.sources]
                made = sum(1 for mv in tried if mv[-1] is None)
                cov.items.append(("transition", f"{name}.{t.id}", t.where, {"made": made, "refused": len(tried) - made}))
        for guard_id, guard in sorted(table.guards.items()):
            asked = [mv for mv in moves if guard_id in _guards_of(table, mv)]
            refused = sum(1 for mv in asked if mv[-1] is not None and mv[-1].guard == guard_id)
            passed = sum(1 for mv in asked if _passed(table, guard_id, mv))
            cov.items.append(("guard", guard_id, guard.where, {"passed": passed, "refused": refused}))
        out.append(cov)
    return out


def _guards_of(table, move: tuple) -> tuple:
    machine, source, target = move[0], move[1], move[2]
    m = table.machines[machine]
    found = m.find(source, target)
    return m.requires + (found.guards if found is not None else ())


def _passed(table, guard_id: str, move: tuple) -> bool:
    machine, source, target, facts, via, role = move[:6]
    value = dict(facts, machine=machine, via=via or "", role=role or "", **{"from": source, "to": target})
    return bool(table.guards[guard_id].when.test(value))


def _lock_coverage(book: Rulebook, cases: Path) -> list[KindCoverage]:
    """Per pattern, in how many conversations it locked something; per drop or attempt rule, on how
    many candidates it held and did not (the lock corpus and the chat corpora together)."""
    from .trace.locks import lock_trace
    convs = corpus.lock_conversations(cases) or []
    tables = book.of_kind("lock_patterns")
    if not convs or not tables:
        return []
    locked: dict = {}
    rules: dict = {}
    for name, messages in convs:
        for message in messages if isinstance(messages, list) else ():
            try:
                traced = lock_trace(book, None, message)
            except (GroundrulesError, TypeError, KeyError, AttributeError):   # a message lock() refuses
                continue
            for t in traced["tables"]:
                for c in t["locks"]:
                    locked.setdefault(c["pattern"], set()).add(name)
                for p in t["patterns"]:
                    for cand in p["candidates"]:
                        for r in cand["rules"]:
                            if r["held"] is not None:
                                rules.setdefault((t["table"], r["rule"]), [0, 0])[0 if r["held"] else 1] += 1
    out = []
    for table in tables:
        cov = KindCoverage(table.id, book.sources[table.id], corpus.LOCK_COVERAGE_CORPUS, len(convs), "conversation(s)")
        for p in table.patterns:
            cov.items.append(("pattern", p.id, p.where, {"locked in": len(locked.get(p.id, ()))}))
        for row in table.rows:
            held, failed = rules.get((table.id, row.id), (0, 0))
            cov.items.append((f"{row.section} rule", row.id, row.where, {"held": held, "did not hold": failed}))
        out.append(cov)
    return out
