"""`groundrules decisions list|show|purge` (the decision log, for reviewers) and `groundrules replay`
(logged calls under a candidate rulebook; `--promote` writes one as a corpus case).

list and show are read_decisions calls as the reviewer on the command line (so they are logged
too, without what they showed); replay and promote read the database with the key, as the
operator who holds both.
"""
from __future__ import annotations

import argparse
from contextlib import ExitStack
from pathlib import Path

from ..core import canonical, limits, rulebook
from ..api import ROLES_TABLE, Service
from ..core.errors import echo
from ..store import database
from .io import emit, emit_envelope, emit_text, usage_error
from .session import add_caller_args, add_key_arg, caller_from, decision_log, lang_from, rulebook_from

FAIL_ON = ("primary", "locks", "refusals", "any")


def register(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("decisions", help="read the decision log (reviewers) and enforce its retention",
                       description="The decision log kept in the --db database (docs/decision-log.md): what each "
                                   "call asked and answered, under which rulebook, for whom. Personal values are "
                                   "masked unless --reveal.")
    dsub = d.add_subparsers(dest="decisions_command", metavar="ACTION", required=True)
    ls = dsub.add_parser("list", help="the newest decisions of the project (read_decisions)")
    add_caller_args(ls, role="reviewer", ledger=True)
    ls.add_argument("--tool", help="only calls of this tool")
    ls.add_argument("--since", help="only calls since: ISO 8601 with an offset, or 7d / 12h / 30m back from now")
    ls.add_argument("--outcome", choices=("ok", "error"), help="only answered or only refused calls")
    ls.add_argument("--before", metavar="DECISION_ID", help="only decisions older than this one (the page's next)")
    ls.add_argument("--limit", type=int, help="at most this many (default 20, at most 100)")
    ls.add_argument("--reveal", action="store_true", help="show personal values instead of their masks")
    ls.set_defaults(func=run_read)
    show = dsub.add_parser("show", help="one decision (read_decisions)")
    add_caller_args(show, role="reviewer", ledger=True)
    show.add_argument("decision_id", metavar="DECISION_ID")
    show.add_argument("--reveal", action="store_true", help="show personal values instead of their masks")
    show.set_defaults(func=run_read)
    purge = dsub.add_parser("purge", help="delete the decisions older than their tool's retention (cron)")
    add_caller_args(purge, role="reviewer", ledger=True)
    purge.set_defaults(func=run_purge)
    export = dsub.add_parser("export", help="write the log's rows to Parquet, payloads still sealed (replay on Spark)")
    add_caller_args(export, role="reviewer", ledger=True)
    export.add_argument("--out", required=True, metavar="FILE.parquet", help="the Parquet file to write")
    export.add_argument("--tool", action="append", metavar="TOOL", help="only this tool (repeatable)")
    export.add_argument("--since", help="only calls since: ISO 8601 with an offset, or 7d / 12h / 30m back from now")
    export.set_defaults(func=run_export)
    rekey = dsub.add_parser("rekey", help="re-seal every decision under the current --decision-key (key rotation)",
                            description="Re-seal the decisions sealed under a retired key (--retired-decision-key, "
                                        "repeatable) under the current --decision-key, so that the retired key may be "
                                        "destroyed; a decision no key given opens is left as it is and counted. "
                                        "Safe to run again: what is under the current key is not touched.")
    add_caller_args(rekey, role="reviewer", ledger=True)
    rekey.set_defaults(func=run_rekey)

    r = sub.add_parser("replay", help="replay logged calls under a candidate rulebook: what would change",
                       description="Re-run the logged calls of the stateless tools (explain_support, lock_message, "
                                   "fold_evidence, verify_extraction) under the candidate tables and compare every "
                                   "answer with the logged one. Under the rulebook that logged them, every answer "
                                   "must come back byte for byte; one that does not is reported as not reproduced.")
    r.add_argument("--db", required=True, metavar="PATH|URI", help="the database the decisions were logged in")
    r.add_argument("--rules", dest="candidate", metavar="DIR|REV",
                   help="the candidate tables: a folder holding rules/, locks/, schemas/, or a git revision of this "
                        "checkout (default: the global --rules, else the bundled tables)")
    r.add_argument("--logged", action="append", default=[], metavar="DIR|REV",
                   help="the tables that logged them (repeatable), matched by version: each decision logged under "
                        "one of them is first checked to reproduce under it")
    r.add_argument("--since", help="only calls since: ISO 8601 with an offset, or 7d / 12h / 30m back from now")
    r.add_argument("--tool", action="append", metavar="TOOL", help="only this stateless tool (repeatable)")
    r.add_argument("--project", action="append", metavar="PROJECT", help="only this project (repeatable; default: all)")
    r.add_argument("--format", choices=("text", "json", "html"), default="text")
    r.add_argument("--fail-on", choices=FAIL_ON, metavar="|".join(FAIL_ON),
                   help="exit 1 when a primary code, a lock, a refusal, or anything changes (and always when a "
                        "decision does not reproduce)")
    r.add_argument("--workers", type=int, default=1, metavar="N",
                   help="re-run the calls in N forked processes, a chunk at a time (rules/limits.yaml batch); the "
                        "report is the same for any N (default 1)")
    r.add_argument("--examples", type=int, default=3, metavar="N", help="examples shown per kind of change (default 3)")
    r.add_argument("--reveal", action="store_true", help="show personal values in the examples (reviewers)")
    r.add_argument("--role", default="reviewer",
                   help="who is replaying, a role of rules/roles.yaml; --reveal needs one that may call "
                        "read_decisions (default: %(default)s)")
    r.add_argument("--key-store", metavar="FILE",
                   help="the key store the decisions' data keys are in (default: beside a SQLite --db, PATH.keys)")
    r.add_argument("--promote", metavar="DECISION_ID",
                   help="instead of replaying, write this logged call as a corpus case (with --to)")
    r.add_argument("--to", metavar="DIR", help="the case folder to write the promoted case into "
                                               "(tests/cases/support_reason/, tests/cases/locks/<group>/, ...)")
    add_key_arg(r)
    r.set_defaults(func=run_replay)


def _db(args: argparse.Namespace):
    db = database(args.db)
    if isinstance(db, Path) and not db.exists():
        raise usage_error("usage.no_such_database", db=args.db)
    return db


def run_read(args: argparse.Namespace) -> int:
    book = rulebook_from(args)
    log = decision_log(args, book, _db(args))
    service = Service(book, decisions=log, lang=lang_from(args))
    arguments: dict = {}
    if args.decisions_command == "show":
        arguments["decision_id"] = args.decision_id
    else:
        for key in ("tool", "since", "outcome", "before", "limit"):
            if getattr(args, key) is not None:
                arguments[key] = getattr(args, key)
    if args.reveal:
        arguments["reveal"] = True
    try:
        return emit_envelope(service.call("read_decisions", arguments, caller_from(args, book)))
    finally:
        log.close()


def _may_read_decisions(args: argparse.Namespace, book, what: str) -> None:
    """`what`: the catalogue's message (usage.decisions_…) naming what is refused."""
    """Reading the log's personal values or deleting its rows is for the roles the role table lets
    call read_decisions (rules/roles.yaml), as `decisions list --reveal` is."""
    roles = book.table(ROLES_TABLE)
    if args.role not in roles.roles:
        raise usage_error("usage.role_unknown", role=echo(args.role), roles=list(roles.roles))
    if not roles.may_call(args.role, "read_decisions"):
        allowed = [r for r in roles.roles if roles.may_call(r, "read_decisions")]
        raise usage_error(what, roles=allowed, role=echo(args.role))


def run_purge(args: argparse.Namespace) -> int:
    book = rulebook_from(args)
    _may_read_decisions(args, book, "usage.decisions_purge")
    log = decision_log(args, book, _db(args))
    try:
        deleted = log.purge()
    finally:
        log.close()
    emit(canonical.envelope(ok=True, data={"deleted": deleted}, rulebook=book.version))
    return 0


def run_export(args: argparse.Namespace) -> int:
    """The rows as stored (payloads sealed, masked paths never kept): for reviewers, as reading is."""
    from ..decision_log import export, times
    book = rulebook_from(args)
    _may_read_decisions(args, book, "usage.decisions_export")
    if not args.out.endswith(".parquet"):
        raise usage_error("usage.export_parquet", out=args.out)
    out = Path(args.out)
    if not out.parent.is_dir():
        raise usage_error("usage.out_folder_missing", out=args.out)
    log = decision_log(args, book, _db(args))
    try:
        since = None
        if args.since is not None:
            since = times.since(args.since, log.now())
            if since is None:
                raise usage_error("usage.since", value=echo(args.since))
        written = export.export(log, out, projects=[args.project], tools=args.tool, since=since)
    finally:
        log.close()
    emit(canonical.envelope(ok=True, data={"exported": written, "out": out.name}, rulebook=book.version))
    return 0


def run_rekey(args: argparse.Namespace) -> int:
    book = rulebook_from(args)
    _may_read_decisions(args, book, "usage.decisions_rekey")
    log = decision_log(args, book, _db(args))
    try:
        counts = log.rekey()
    finally:
        log.close()
    emit(canonical.envelope(ok=True, data=counts, rulebook=book.version))
    return 0


def run_replay(args: argparse.Namespace) -> int:
    from ..decision_log import promote, replay
    from ..decision_log.log import DecisionLog
    from .base_tables import base_rulebook
    if args.reveal:
        _may_read_decisions(args, rulebook_from(args), "usage.decisions_reveal")
    if (args.promote is None) != (args.to is None):
        raise usage_error("usage.promote_with_to")
    if args.examples < 0:
        raise usage_error("usage.at_least", option="--examples", least=0)
    if args.workers < 1:
        raise usage_error("usage.at_least", option="--workers", least=1)
    root = Path(args.rules) if getattr(args, "rules", None) else rulebook.data_root()
    from .session import decision_key, key_store
    key = decision_key(args)
    with ExitStack() as stack:
        candidate = stack.enter_context(base_rulebook(args.candidate, root)) if args.candidate else rulebook_from(args)
        logged = [stack.enter_context(base_rulebook(b, root)) for b in args.logged]
        db = _db(args)
        log = DecisionLog(db, key=key, data_keys=key_store(args, db), rulebook=candidate, purge_every_s=None)
        stack.callback(log.close)
        if args.promote is not None:
            written = promote.promote(log, args.promote, Path(args.to), candidate, {b.version: b for b in logged})
            emit_text(promote.lines(written))
            return 0
        since = None
        if args.since is not None:
            from ..decision_log import times
            since = times.since(args.since, log.now())
            if since is None:
                raise usage_error("usage.since", value=echo(args.since))
        tools = args.tool or list(replay.STATELESS)
        unknown = [t for t in tools if t not in replay.STATELESS]
        if unknown:
            raise usage_error("usage.replay_stateless", tool=echo(unknown[0]), tools=list(replay.STATELESS))
        table = limits.of(candidate)
        chunking = {"chunk_rows": table.chunk_rows, "in_flight": table.chunks_in_flight} if table else {}
        result = replay.replay(log, candidate, logged, projects=args.project, tools=tools, since=since,
                               examples=args.examples, reveal=args.reveal, workers=args.workers, **chunking)
    if args.format == "json":
        emit(result)
    elif args.format == "html":
        from ..analyst.report import replay_html
        emit_text(replay_html.page(result))
    else:
        emit_text("\n".join(replay.lines(result)))
    return 1 if args.fail_on and replay.fails(result, args.fail_on) else 0
