"""`groundrules lint`: load errors, per-kind semantic checks, the silent mistakes of
lintchecks.CHECKS, and case-corpus coverage.

A compiled table may expose `lint_faults()` (more Faults, located by key path) and
`coverage(values)` (the ids of its rows that fire on none of the values); the case corpus for a
table lives in `tests/cases/<table-id>/*.json`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .errors import Problem, RulesError
from .lintchecks import CHECKS, WHOLE_BOOK_CHECKS
from .rulebook import Rulebook, load
from .resources import data_root
from .tables import load_schemas, location, schema_problems


@dataclass
class LintReport:
    problems: list = field(default_factory=list)     # Problem, errors and warnings
    coverage: list = field(default_factory=list)     # (table, source, key prefix, Coverage | None)

    @property
    def failed(self) -> bool:
        return any(p.severity == "error" for p in self.problems)


def lint(root: Path | str | None = None, files: list[Path] | None = None,
         cases: Path | None = None) -> LintReport:
    report = LintReport()
    try:
        book = load(root, files, cache=False)      # lint checks every table afresh
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
        report.coverage = _coverage(book, cases)
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


def _coverage(book: Rulebook, cases: Path) -> list:
    """(table, its source, its key path prefix, Coverage or None when it has no corpus) for every
    decision table, those inside other tables included."""
    out = []
    for table, source, prefix in book.decision_tables():
        folder = cases / table.id
        if not folder.is_dir():
            out.append((table, source, prefix, None))
            continue
        values = []
        for path in sorted(folder.glob("*.json")):
            try:
                values.append(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, ValueError, RecursionError):   # a broken case covers nothing
                continue
        out.append((table, source, prefix, table.coverage_report(values)))
    return out
