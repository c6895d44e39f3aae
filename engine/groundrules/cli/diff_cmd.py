"""`groundrules diff`: the effect of a table edit on the case corpus, before -> after."""
from __future__ import annotations

import argparse
import subprocess
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from .. import canonical, rulebook
from ..corpus_diff import CaseChange, corpus_diff
from ..errors import RulesError
from .io import usage_error, emit, emit_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("diff", help="show what a table edit changes over the case corpus",
                       description="Evaluate every decision table on its cases (tests/cases/<table-id>/) "
                                   "with the tables of BASE and with the current ones, and print the cases "
                                   "whose fired rows or outputs changed.")
    p.add_argument("--base", required=True, metavar="DIR|REV",
                   help="a folder holding rules/, locks/, schemas/, or a git revision of this checkout "
                        "(e.g. HEAD)")
    p.add_argument("--cases", metavar="DIR", help="case corpus (default: tests/cases beside the tables)")
    p.add_argument("--json", action="store_true", help="print the changes as an envelope")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = Path(args.rules) if args.rules else rulebook.data_root()
    cases = Path(args.cases) if args.cases else root / "tests" / "cases"
    if not cases.is_dir():
        raise usage_error(f"{cases}: no case corpus here (give --cases DIR)")
    after = rulebook.load(root)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            before = rulebook.load(_base(args.base, root, Path(tmp)))
        except RulesError as exc:
            raise usage_error(f"--base {args.base}: its tables do not load with this groundrules "
                           f"({len(exc.problems)} problem(s), first: {exc.problems[0]})") from None
        changes = corpus_diff(before, after, cases)
    if args.json:
        data = [{"table": c.table, "case": c.case, "before": c.before, "after": c.after} for c in changes]
        emit(canonical.envelope(ok=True, data={"changes": data}, rulebook=after.version))
    else:
        emit_text("\n".join([line for c in changes for line in _lines(c)] +
                            [f"{len(changes)} case(s) changed (base {before.version} -> {after.version})"]))
    return 0


def _base(base: str, root: Path, tmp: Path) -> Path:
    """The folder of the base tables: as given, or exported from git at revision `base`."""
    if Path(base).is_dir():
        return Path(base)
    if base.startswith("-"):                 # git would read it as an option (--output=FILE writes)
        raise usage_error(f"--base {base}: neither a folder nor a git revision of this checkout")
    try:
        tar = subprocess.run(["git", "-C", str(root), "archive", "--format=tar", base, "--",
                              "rules", "locks", "schemas"], capture_output=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        raise usage_error(f"--base {base}: neither a folder nor a git revision of this checkout") from None
    with tarfile.open(fileobj=BytesIO(tar)) as archive:
        try:
            archive.extractall(tmp, filter="data")
        except TypeError:                    # Python before 3.11.4 has no extraction filters
            archive.extractall(tmp)          # noqa: S202 - our own checkout's git archive
    return tmp


def _lines(change: CaseChange) -> list[str]:
    """The case, then only the rows that differ: '-' as before the edit, '+' as after."""
    before, after = _rows(change.before), _rows(change.after)
    out = [f"{change.table}: {change.case}"]
    out += [f"  - {_show(r)}" for r in before if r not in after]
    out += [f"  + {_show(r)}" for r in after if r not in before]
    return out


def _rows(outcome) -> list:
    if outcome is None:
        return [{"code": "(no such table)"}]
    return outcome if isinstance(outcome, list) else [outcome]


def _show(row: dict) -> str:
    rest = {k: v for k, v in row.items() if k not in ("row", "code")}
    head = row.get("code") or row.get("error", "")
    return head + (" " + canonical.dumps(rest, indent=None) if rest else "")
