"""`groundrules lint`, `groundrules test` and `groundrules eval`: the analyst's checks on the tables."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..core import rulebook
from ..analyst import gate, lint_formats
from ..analyst.lint import lint
from ..core.tables import location
from . import eval_cmd
from ..core.errors import closest, echo
from .io import emit_text, usage_error


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lint", help="check rule tables: shape, semantics, examples, silent mistakes, coverage",
                       description="Check the tables (all of them, or PATHS) and report every problem "
                                   "as path:line:col: code: message, then the coverage of every decision "
                                   "table over its case corpus (tests/cases/<table-id>/*.json).")
    p.add_argument("paths", nargs="*", metavar="PATH", help="table files or folders (default: all)")
    p.add_argument("--cases", metavar="DIR",
                   help="case corpus for the coverage report (default: tests/cases beside the tables)")
    p.add_argument("--format", choices=lint_formats.NAMES, default="text",
                   help="text (default: problems, then coverage); json (an envelope with the problem list); "
                        "sarif (a SARIF 2.1.0 log for code review and CI); github (GitHub Actions annotations)")
    p.set_defaults(func=run_lint)
    t = sub.add_parser("test", help="run the inline examples and acceptance checks of every table "
                                    "(or of one table or row)",
                       description="Run the examples written inside the tables and the acceptance "
                                   "tables' checks and requirements; fail on any mismatch and on any "
                                   "row without an example.")
    t.add_argument("-v", "--verbose", action="store_true", help="list passing examples too")
    t.add_argument("--table", metavar="T", help="only this table's examples (a table inside another: merge.resolve)")
    t.add_argument("--row", metavar="R", help="only this row's (or pattern's, guard's) examples; needs --table")
    t.add_argument("--snapshots", action="store_true",
                   help="also run the test modules that own the reviewed snapshots (snapshots/, in a checkout) "
                        "and report each that fails: a table edit that changes an output fails here as in CI")
    t.add_argument("--accept", action="store_true",
                   help="after reviewing `groundrules diff --base HEAD`: rewrite the stale snapshots and list "
                        "each changed file with its lines removed and added")
    t.set_defaults(func=run_test)
    c = sub.add_parser("case", help="add a case to a decision table's corpus (tests/cases/<table>/)",
                       description="Add FILE (JSON, or - for stdin) to the case corpus of TABLE as "
                                   "tests/cases/TABLE/NAME.json, after checking it against the table's input "
                                   "contract; print the rows it fires.")
    csub = c.add_subparsers(dest="case_command", metavar="ACTION", required=True)
    a = csub.add_parser("add", help="add one case", description="Add one case to TABLE's corpus.")
    a.add_argument("table", metavar="TABLE", help="a decision table id (support_reason)")
    a.add_argument("case_file", metavar="FILE", help="the case, a JSON file or - for stdin")
    a.add_argument("--name", required=True, help="the case's name: tests/cases/TABLE/NAME.json")
    a.add_argument("--cases", metavar="DIR", help="case corpus (default: tests/cases beside the tables)")
    a.set_defaults(func=run_case_add)
    eval_cmd.register(sub)


def _root(args: argparse.Namespace) -> Path:
    return Path(args.rules) if args.rules else rulebook.data_root()


def run_lint(args: argparse.Namespace) -> int:
    root = _root(args)
    files = [Path(p) for p in args.paths] or None
    for p in files or ():
        if not p.exists():
            raise usage_error("usage.no_such_path", input=str(p))
    cases = Path(args.cases) if args.cases else root / "tests" / "cases"
    report = lint(root, files, cases if cases.is_dir() else None)
    if args.format != "text":
        emit_text(lint_formats.render(args.format, report.problems, report.failed, None if files else root))
        return 1 if report.failed else 0
    lines = [str(p) if p.severity == "error" else f"{p} [warning]" for p in report.problems]
    for table, source, prefix, coverage in report.coverage:
        lines += coverage_lines(table, source, prefix, coverage)
    for coverage in report.kind_coverage:
        lines += kind_coverage_lines(coverage)
    errors = sum(p.severity == "error" for p in report.problems)
    warnings = len(report.problems) - errors
    lines.append(f"lint: {errors} error(s), {warnings} warning(s)")
    emit_text("\n".join(lines))
    return 1 if report.failed else 0


# a corpus that runs tables inside a part: what one of its cases is
RUN_BY = {"fold": "fold payload(s)", "findings": "call sequence(s)"}


def coverage_lines(table, source, prefix: tuple, coverage) -> list[str]:
    """Per row, how many cases it holds on; per test, those that never held or never failed."""
    head = f"coverage: {table.id}:"
    if coverage is None:
        return [f"{head} no case corpus (put JSON values under tests/cases/{table.id}/ to measure it)"]
    cases = f"{coverage.cases} case(s)" if not coverage.corpus else \
        f"{coverage.cases} {RUN_BY.get(coverage.corpus, 'case(s)')} of tests/cases/{coverage.corpus} (the values asked)"
    out = []
    never = [row.id for row, _, fired in coverage.rows if fired == 0]
    if never:
        out.append(f"{head} {len(never)} row(s) fired by none of {cases}: " + ", ".join(never))
    else:
        out.append(f"{head} every row fired by at least one of {cases}")
    out.append(f"{head} rows held on: " + ", ".join(f"{row.id} {held}" for row, held, _ in coverage.rows))
    taken = [f"{row.id} (held on {held})" for row, held, fired in coverage.rows if held and not fired]
    if taken:
        out.append(f"{head} held but never fired, every such case taken by a row before it: " + ", ".join(taken))
    for row, test, held, failed in coverage.tests:
        if coverage.cases and (held == 0 or failed == 0):
            line, col, _ = location(source, prefix + test.where)
            what = "never held" if held == 0 else "never failed"
            out.append(f"{head} {source.file}:{line}:{col}: row {row.id}: test {test.field} {test.op} {what} "
                       f"over {coverage.cases} case(s)")
    return out


def kind_coverage_lines(cov) -> list[str]:
    """A lock or transition table over its corpus: one line per item never exercised one way."""
    head = f"coverage: {cov.table}:"
    out = [f"{head} over {cov.cases} {cov.unit} of tests/cases/{cov.corpus}"]
    quiet = []
    for what, item, path, counts in cov.items:
        said = ", ".join(f"{k} {v}" for k, v in counts.items())
        if any(v == 0 for v in counts.values()):
            line, col, _ = location(cov.source, path)
            out.append(f"{head} {cov.source.file}:{line}:{col}: {what} {item}: {said}")
        else:
            quiet.append(f"{item} ({said})")
    if quiet:
        out.append(f"{head} exercised every way: " + ", ".join(quiet))
    return out


def run_test(args: argparse.Namespace) -> int:
    book = rulebook.load(args.rules) if args.rules else rulebook.default()
    if args.row and not args.table:
        raise usage_error("usage.row_needs_table")
    outcomes = gate.run(book)
    if args.table:
        outcomes = [o for o in outcomes if o.id.split(":")[0] == args.table]
        if not outcomes:
            known = sorted({o.id.split(":")[0] for o in gate.run(book)})
            close = closest(args.table, known)
            raise usage_error("usage.test_no_table_close" if close else "usage.test_no_table",
                              table=echo(args.table), closest=close)
    if args.row:
        in_table = outcomes
        outcomes = [o for o in outcomes if o.id.split(":")[1:2] == [args.row]]
        if not outcomes:
            rows = sorted({o.id.split(":")[1] for o in in_table if o.id.count(":") >= 1})
            close = closest(args.row, rows)
            raise usage_error("usage.test_no_row_close" if close else "usage.test_no_row", row=echo(args.row),
                              table=args.table, closest=close)
    lines = []
    for o in outcomes:
        if not o.ok:
            lines.append(f"{o.where}: FAIL {o.id}: {o.message}")
        elif args.verbose:
            lines.append(f"{o.where}: ok {o.id}")
    passed = sum(o.ok for o in outcomes)
    failed = len(outcomes) - passed
    lines.append(f"{passed} passed, {failed} failed")
    stale = 0
    if args.snapshots or args.accept:
        stale = _snapshot_lines(_root(args), args.accept, lines)
    emit_text("\n".join(lines))
    return 1 if failed or stale or not outcomes else 0


def _snapshot_lines(root: Path, accept: bool, lines: list[str]) -> int:
    """Run the snapshot-owning test modules of the checkout at `root`; append what they said."""
    from ..analyst import snapshots
    if not snapshots.is_checkout(root):
        raise usage_error("usage.no_checkout", path=str(root))
    done = snapshots.run(root, accept=accept)
    for name, removed, added in done.changed:
        lines.append(f"{name}: rewritten, -{removed} +{added} line(s): read every changed line before committing")
    for failure in done.failed:
        lines.append(f"FAIL {failure}")
    if done.failed and not accept:
        lines.append("snapshots: review the change with `groundrules diff --base HEAD`, then accept it with "
                     "`groundrules test --accept`")
    verb = "accepted" if accept else "checked"
    lines.append(f"snapshots: {len(done.ran)} module(s) {verb}, {len(done.changed)} file(s) rewritten, "
                 f"{len(done.failed)} failure(s)")
    return len(done.failed)


def run_case_add(args: argparse.Namespace) -> int:
    from ..analyst.case_add import add_case
    from .io import read_json
    root = _root(args)
    book = rulebook.load(args.rules) if args.rules else rulebook.default()
    cases = Path(args.cases) if args.cases else root / "tests" / "cases"
    path, fired = add_case(book, cases, args.table, read_json(args.case_file), args.name)
    shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    emit_text(f"added {shown}: fires {', '.join(fired) or 'no row'}")
    return 0


