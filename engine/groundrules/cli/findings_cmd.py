"""`groundrules serve` (the MCP server over stdio) and `groundrules findings …` (the ledger, for people)."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..findings import Ledger
from .io import CliError, emit
from .rulebook_arg import rulebook_from


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("serve", help="serve every groundrules tool to an agent over MCP (stdio)",
                       description="Run the MCP server on stdin/stdout: the ten finding-ledger tools, "
                                   "explain_support, lock_message, fold_evidence and verify_extraction.")
    _ledger_args(s)
    s.set_defaults(func=run_serve)

    f = sub.add_parser("findings", help="read the finding ledger and decide rule proposals",
                       description="The finding ledger for people: list and show findings, approve or reject "
                                   "the rules agents proposed.")
    fsub = f.add_subparsers(dest="findings_command", metavar="ACTION", required=True)
    ls = fsub.add_parser("list", help="list current findings (query_findings)")
    _ledger_args(ls)
    ls.add_argument("--keyword", help="keyword, Chinese or not (all whitespace-separated terms must match)")
    ls.add_argument("--tag", action="append", dest="tags", metavar="TAG", help="required tag (repeatable)")
    ls.add_argument("--state", action="append", dest="states", metavar="STATE",
                    help="epistemic state to keep (repeatable)")
    ls.add_argument("--history", action="store_true", help="include superseded, withdrawn and archived findings")
    ls.add_argument("--limit", type=int, help="at most this many (default and cap: see the vocabulary table)")
    ls.set_defaults(func=run_list)
    show = fsub.add_parser("show", help="show one finding with full excerpts (get_finding)")
    _ledger_args(show)
    show.add_argument("finding_id", metavar="FINDING_ID")
    show.set_defaults(func=run_show)
    approve = fsub.add_parser("approve-rule", help="approve a proposal: append its rule to the target document",
                              description="Append the proposal's rule text to its target document (a path inside "
                                          "--root; absolute paths, '..' and symlinks out are refused) and record "
                                          "it applied.")
    _ledger_args(approve)
    approve.add_argument("proposal_id", metavar="PROPOSAL_ID")
    approve.add_argument("--root", required=True, metavar="DIR", help="the project root the target path is inside")
    approve.add_argument("--by", required=True, metavar="NAME", help="who approves (recorded)")
    approve.add_argument("--note", default="", help="why (recorded)")
    approve.set_defaults(func=run_decide, tool="approve_rule")
    reject = fsub.add_parser("reject-rule", help="reject a proposal (recorded; no file changes)")
    _ledger_args(reject)
    reject.add_argument("proposal_id", metavar="PROPOSAL_ID")
    reject.add_argument("--by", required=True, metavar="NAME", help="who rejects (recorded)")
    reject.add_argument("--note", default="", help="why (recorded)")
    reject.set_defaults(func=run_decide, tool="reject_rule")


def _ledger_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", required=True, metavar="PATH", help="the ledger's SQLite file (created if missing)")
    p.add_argument("--project", default="default", help="the project served (default: %(default)s)")


def _ledger(args: argparse.Namespace) -> Ledger:
    db = Path(args.db)
    if not db.parent.is_dir():
        raise CliError(f"{args.db}: the folder does not exist")
    return Ledger(db, project=args.project, rulebook=rulebook_from(args))


def run_serve(args: argparse.Namespace) -> int:
    from ..mcp_server import serve
    ledger = _ledger(args)
    serve(ledger, ledger.book)
    return 0


def _emit(envelope: dict) -> int:
    emit(envelope)
    return 0 if envelope["ok"] else 1


def run_list(args: argparse.Namespace) -> int:
    query = {"include_history": args.history}
    for key, value in (("keyword", args.keyword), ("tags", args.tags), ("epistemic_state", args.states),
                       ("limit", args.limit)):
        if value is not None:
            query[key] = value
    return _emit(_ledger(args).call("query_findings", query))


def run_show(args: argparse.Namespace) -> int:
    return _emit(_ledger(args).call("get_finding", {"finding_id": args.finding_id, "full_excerpts": True}))


def run_decide(args: argparse.Namespace) -> int:
    decision = {"proposal_id": args.proposal_id, "decided_by": args.by, "note": args.note}
    if args.tool == "approve_rule":
        root = Path(args.root)
        if not root.is_dir():
            raise CliError(f"{args.root}: not a folder")
        decision["root"] = str(root)
    return _emit(_ledger(args).decide_rule(args.tool, decision))
