"""What a command runs on: the rulebook, the ledgers, and who is calling.

The command line is trusted as the operator's: the caller is the operator it names (`--operator`,
default the login name), in the role it names (`--role`), for the project it names (`--project`).
"""
from __future__ import annotations

import argparse
import getpass
from pathlib import Path

from .. import capped, limits, rulebook
from ..api import Caller, Service
from ..rulebook import Rulebook
from .io import usage_error


def rulebook_from(args: argparse.Namespace) -> Rulebook:
    root = getattr(args, "rules", None)
    return rulebook.load(root) if root else rulebook.default()


def input_cap(args: argparse.Namespace) -> int:
    """How many bytes a command may read from its input file (rules/limits.yaml inputs.input_bytes)."""
    table = limits.of(rulebook_from(args))
    return table.input_bytes if table is not None else capped.DEFAULT_INPUT_BYTES


def add_caller_args(p: argparse.ArgumentParser, *, role: str = "agent", ledger: bool = False) -> None:
    """The options every tool command shares; `ledger` makes --db required."""
    p.add_argument("--db", required=ledger, metavar="PATH",
                   help="the ledger's SQLite file (created if missing)" + ("" if ledger else ", for the finding tools"))
    p.add_argument("--root", metavar="DIR",
                   help="the project root rule documents live under (approve_rule writes only inside it)")
    p.add_argument("--project", default="default", help="the project the caller works in (default: %(default)s)")
    p.add_argument("--operator", metavar="NAME", help="who is calling, as recorded in the audit trail "
                                                      "(default: the login name)")
    p.add_argument("--role", default=role, choices=("agent", "reviewer"),
                   help="the caller's role in rules/roles.yaml (default: %(default)s)")
    repro = p.add_argument_group("reproducible ledgers (tests, replays)")
    repro.add_argument("--step-clock", metavar="START", help="read time from a clock that starts at START "
                       "(YYYY-MM-DDTHH:MM:SSZ) and advances one second per reading, instead of the wall clock")
    repro.add_argument("--sequential-ids", metavar="FROM", type=int,
                       help="number new ids FROM+1, FROM+2, … per prefix instead of random ones")


def caller_from(args: argparse.Namespace) -> Caller:
    return Caller(args.operator or _login(), args.role, (args.project,))


def service_from(args: argparse.Namespace, *, read_only: bool = False) -> Service:
    """The Service a command calls; `read_only` opens the ledger read-only (list, show), so they
    work in a read-only folder and never create or migrate a database."""
    book = rulebook_from(args)
    findings = None
    if getattr(args, "db", None):
        from ..findings import FindingLedger
        db = Path(args.db)
        if not db.parent.is_dir():
            raise usage_error(f"{args.db}: the folder does not exist")
        root = getattr(args, "root", None)
        if root is not None and not Path(root).is_dir():
            raise usage_error(f"{root}: not a folder")
        from ..store import open_finding_store
        findings = FindingLedger(open_finding_store(db, read_only=read_only), rulebook=book, rules_root=root,
                                 **_reproducible(args))
    return Service(book, findings=findings)


def _reproducible(args: argparse.Namespace) -> dict:
    from ..findings import SequentialIds, StepClock
    options: dict = {}
    if args.step_clock:
        try:
            options["clock"] = StepClock(args.step_clock)
        except ValueError:
            raise usage_error(f"--step-clock {args.step_clock}: expected YYYY-MM-DDTHH:MM:SSZ") from None
    if args.sequential_ids is not None:
        options["ids"] = SequentialIds(start=args.sequential_ids)
    return options


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "operator"
