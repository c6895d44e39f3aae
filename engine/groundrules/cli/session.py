"""What a command runs on: the rulebook, the ledgers, and who is calling.

The command line is trusted as the operator's: the caller is the operator it names (`--operator`,
default the login name), in the role it names (`--role`), for the project it names (`--project`).
"""
from __future__ import annotations

import argparse
import getpass
from pathlib import Path

from .. import rulebook
from ..api import Caller, Service
from ..rulebook import Rulebook
from .io import usage_error


def rulebook_from(args: argparse.Namespace) -> Rulebook:
    root = getattr(args, "rules", None)
    return rulebook.load(root) if root else rulebook.default()


def add_caller_args(p: argparse.ArgumentParser, *, role: str = "agent", ledger: bool = False) -> None:
    """The options every tool command shares; `ledger` adds --db (required) and --root."""
    if ledger:
        p.add_argument("--db", required=True, metavar="PATH", help="the ledger's SQLite file (created if missing)")
        p.add_argument("--root", metavar="DIR",
                       help="the project root rule documents live under (approve_rule writes only inside it)")
    else:
        p.add_argument("--db", metavar="PATH", help="the ledger's SQLite file, for the finding tools")
    p.add_argument("--project", default="default", help="the project the caller works in (default: %(default)s)")
    p.add_argument("--operator", metavar="NAME", help="who is calling, as recorded in the audit trail "
                                                      "(default: the login name)")
    p.add_argument("--role", default=role, choices=("agent", "reviewer"),
                   help="the caller's role in rules/roles.yaml (default: %(default)s)")


def caller_from(args: argparse.Namespace) -> Caller:
    return Caller(args.operator or _login(), args.role, (args.project,))


def service_from(args: argparse.Namespace) -> Service:
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
        findings = FindingLedger(db, project=args.project, rulebook=book, rules_root=root)
    return Service(book, findings=findings)


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "operator"
