"""`groundrules lint` and `groundrules test`: the analyst's checks on the tables."""
from __future__ import annotations

import argparse
from pathlib import Path

from .. import rulebook
from ..examples import run_all
from ..lint import lint
from .io import usage_error, emit_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lint", help="check rule tables: shape, semantics, examples, coverage",
                       description="Check the tables (all of them, or PATHS) and report every problem "
                                   "as path:line:col: code: message.")
    p.add_argument("paths", nargs="*", metavar="PATH", help="table files or folders (default: all)")
    p.add_argument("--cases", metavar="DIR",
                   help="case corpus for the coverage report (default: tests/cases beside the tables)")
    p.set_defaults(func=run_lint)
    t = sub.add_parser("test", help="run every inline example of every table",
                       description="Run the examples written inside the tables; fail on any mismatch "
                                   "and on any row without an example.")
    t.add_argument("-v", "--verbose", action="store_true", help="list passing examples too")
    t.set_defaults(func=run_test)


def _root(args: argparse.Namespace) -> Path:
    return Path(args.rules) if args.rules else rulebook.data_root()


def run_lint(args: argparse.Namespace) -> int:
    root = _root(args)
    files = [Path(p) for p in args.paths] or None
    for p in files or ():
        if not p.exists():
            raise usage_error(f"{p}: no such file or folder")
    cases = Path(args.cases) if args.cases else root / "tests" / "cases"
    report = lint(root, files, cases if cases.is_dir() else None)
    lines = [str(p) if p.severity == "error" else f"{p} [warning]" for p in report.problems]
    for table_id, uncovered, count in report.coverage:
        if uncovered:
            lines.append(f"coverage: {table_id}: {len(uncovered)} row(s) fired by none of {count} case(s): "
                         + ", ".join(uncovered))
        else:
            lines.append(f"coverage: {table_id}: every row fired by at least one of {count} case(s)")
    errors = sum(p.severity == "error" for p in report.problems)
    warnings = len(report.problems) - errors
    lines.append(f"lint: {errors} error(s), {warnings} warning(s)")
    emit_text("\n".join(lines))
    return 1 if report.failed else 0


def run_test(args: argparse.Namespace) -> int:
    book = rulebook.load(args.rules) if args.rules else rulebook.default()
    outcomes = run_all(book)
    lines = []
    for o in outcomes:
        if not o.ok:
            lines.append(f"{o.where}: FAIL {o.id}: {o.message}")
        elif args.verbose:
            lines.append(f"{o.where}: ok {o.id}")
    passed = sum(o.ok for o in outcomes)
    failed = len(outcomes) - passed
    lines.append(f"{passed} passed, {failed} failed")
    emit_text("\n".join(lines))
    return 1 if failed or not outcomes else 0
