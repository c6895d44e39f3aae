"""What a command runs on: the rulebook, the ledgers, and who is calling.

The command line is trusted as the operator's: the caller is the operator it names (`--operator`,
default the login name), in the role it names (`--role`), for the project it names (`--project`).
"""
from __future__ import annotations

import argparse
import getpass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..core import capped, codes, limits, rulebook
from ..access import SUFFIX, TOOL_SCHEMAS
from ..api import ROLES_TABLE, Caller, Service
from ..core.errors import GroundrulesError, StorageFailure, echo
from ..core.rulebook import Rulebook
from .io import reason, usage_error

if TYPE_CHECKING:
    from ..results import Envelope
    from ..store.keystore import MemoryKeyStore, SqliteKeyStore

MIN_KEY_BYTES = 16


def rulebook_from(args: argparse.Namespace) -> Rulebook:
    root = getattr(args, "rules", None)
    return rulebook.load(root) if root else rulebook.default()


def input_cap(args: argparse.Namespace) -> int:
    """How many bytes a command may read from its input file (rules/limits.yaml inputs.input_bytes)."""
    table = limits.of(rulebook_from(args))
    return table.input_bytes if table is not None else capped.DEFAULT_INPUT_BYTES


def add_caller_args(p: argparse.ArgumentParser, *, role: str = "agent", ledger: bool = False) -> None:
    """The options every tool command shares; `ledger` makes --db required."""
    p.add_argument("--db", required=ledger, metavar="PATH|URI",
                   help="the ledgers' SQLite file (created if missing), or a postgresql:// URI"
                   + ("" if ledger else ", for the ledger tools"))
    p.add_argument("--redaction-key", metavar="FILE",
                   help="a file holding the secret (16 bytes or more) redacted evidence fields are digested "
                        "with (HMAC-SHA256); it never enters the database. Without it a redacted field keeps no digest")
    p.add_argument("--key-store", metavar="FILE",
                   help="the key store: a file (created if missing) of the data keys personal evidence values are "
                        "sealed under, kept apart from the database and its backups; a redaction destroys the keys. "
                        "Default: beside a SQLite --db (PATH.keys); on a PostgreSQL --db the evidence tools and the decision "
                        "log need one")
    p.add_argument("--trust", metavar="FILE",
                   help="the trust store (YAML): the signers whose signed records count whoever relays them "
                        "(docs/provenance.md); re-read on SIGHUP by serve --http")
    p.add_argument("--root", metavar="DIR",
                   help="the project root rule documents live under (approve_rule writes only inside it)")
    p.add_argument("--project", default="default", help="the project the caller works in (default: %(default)s)")
    p.add_argument("--operator", metavar="NAME", help="who is calling, as recorded in the audit trail "
                                                      "(default: the login name)")
    p.add_argument("--role", default=role,
                   help="the caller's role, one of the roles in rules/roles.yaml (default: %(default)s)")
    decisions = p.add_argument_group("decision log (docs/decision-log.md)")
    decisions.add_argument("--log-decisions", action="store_true",
                           help="log every call in the --db database, sealed with the decision key and masked by "
                                "rules/decision_masking.yaml; the envelope then names its decision")
    add_key_arg(decisions)
    repro = p.add_argument_group("reproducible ledgers (tests, replays)")
    repro.add_argument("--step-clock", metavar="START", help="read time from a clock that starts at START "
                       "(YYYY-MM-DDTHH:MM:SSZ) and advances one second per reading, instead of the wall clock")
    repro.add_argument("--sequential-ids", metavar="FROM", type=int,
                       help="number new ids FROM+1, FROM+2, … per prefix instead of random ones")


def add_key_arg(group) -> None:
    group.add_argument("--decision-key", metavar="FILE",
                       help="the decision log's key (32 bytes or more; never stored in the database); default: the "
                            "file $GROUNDRULES_DECISION_KEY_FILE names, or $GROUNDRULES_DECISION_KEY itself")
    group.add_argument("--retired-decision-key", metavar="FILE", action="append", default=[],
                       help="a key the log was sealed under before the current one (repeatable): it opens the rows "
                            "sealed under it until they expire or `decisions rekey` re-seals them")


def decision_key(args: argparse.Namespace):
    """The decision log's key: --decision-key FILE, else the environment's; a usage error without one."""
    from ..decision_log import crypto
    key: crypto.DecisionKey | None
    if getattr(args, "decision_key", None):
        key = crypto.key_from_file(args.decision_key)
    else:
        key = crypto.key_from_environment()
    if key is None:
        raise usage_error("usage.decision_key_missing")
    return crypto.DecisionKeyring(key, [crypto.key_from_file(f) for f in getattr(args, "retired_decision_key", [])])


def decision_log(args: argparse.Namespace, book: Rulebook, db, data_keys: MemoryKeyStore | None = None):
    """The decision log on `db`, with --step-clock / --sequential-ids of its own (so that logging
    never moves the ledgers' clocks or ids); `data_keys`: the key store its payloads are sealed
    under (the evidence ledger's, so that a redaction destroys both; default: key_store(args, db))."""
    from ..decision_log.log import DecisionLog
    options = _reproducible(args)
    return DecisionLog(db, key=decision_key(args), data_keys=data_keys or key_store(args, db), rulebook=book,
                       ids=options.get("ids"), clock=options.get("clock"))


def tool_arguments(book: Rulebook, tool: str, doc: Any, convenience: Callable[[Any], Any]) -> Any:
    """One input shape per tool: a file holding the tool's own arguments, as MCP takes them (an object
    whose keys are all the tool's argument names), is passed on as it is; anything else is the
    command's convenience shape (a bare message, a bare context), mapped to the arguments."""
    schema = book.schemas.get(f"{TOOL_SCHEMAS}{tool}{SUFFIX}") or {}
    names = schema.get("$defs", {}).get("input", {}).get("properties", {})
    if isinstance(doc, dict) and doc and all(key in names for key in doc):
        return doc
    return convenience(doc)


def caller_from(args: argparse.Namespace, book: Rulebook) -> Caller:
    """The operator on the command line, in a role the role table (the bundled or --rules one) has."""
    roles = book.table(ROLES_TABLE).roles if ROLES_TABLE in book.tables else {}
    if args.role not in roles:
        raise usage_error("usage.role_unknown", role=echo(args.role), roles=list(roles))
    return Caller(args.operator or _login(), args.role, (args.project,))


def service_from(args: argparse.Namespace, *, read_only: bool = False, book: Rulebook | None = None) -> Service:
    """The registry over `book` (default: the bundled or --rules tables) and, with --db, both ledgers
    in that file; `read_only` opens the finding ledger alone, read-only (list, show), so that they
    work in a read-only folder and never create or migrate a database."""
    book = book or rulebook_from(args)
    trust = trust_from(args)
    if not getattr(args, "db", None):
        if getattr(args, "log_decisions", False):
            raise usage_error("usage.log_needs_db")
        return Service(book, trust=trust, lang=lang_from(args))
    from ..evidence import EvidenceLedger
    from ..findings import FindingLedger, RandomIds, SystemClock
    from ..store import database
    db = database(args.db)
    if isinstance(db, Path) and not db.parent.is_dir():
        raise usage_error("usage.db_folder_missing", db=args.db)
    root = getattr(args, "root", None)
    if root is not None and not Path(root).is_dir():
        raise usage_error("usage.not_a_folder", input=root)
    options = _reproducible(args)
    if read_only:
        from ..store import open_finding_store
        store = open_finding_store(db, read_only=True) if isinstance(db, Path) else open_finding_store(db)
        return Service(book, findings=FindingLedger(store, rulebook=book, rules_root=root, **options), trust=trust,
                       lang=lang_from(args))
    key = redaction_key(args.redaction_key) if getattr(args, "redaction_key", None) else None
    findings = FindingLedger(db, rulebook=book, rules_root=root, **options)
    ids, clock = options.get("ids") or RandomIds(), options.get("clock") or SystemClock()
    # a PostgreSQL --db without --key-store serves the finding ledger alone: the evidence tools
    # answer NOT_CONFIGURED, since personal values are kept only sealed under keys kept apart
    keys = key_store(args, db) if isinstance(db, Path) or getattr(args, "key_store", None) else None
    if keys is None and getattr(args, "log_decisions", False):
        findings.close()
        raise usage_error("usage.log_needs_key_store")
    evidence = None
    try:
        if keys is not None:
            evidence = EvidenceLedger(db, ids=lambda: ids.new("R"), clock=clock, rulebook=book, redaction_key=key,
                                      keys=keys)
    except GroundrulesError as exc:      # --rules without the evidence tables: its tools answer NOT_CONFIGURED
        if exc.code != codes.RULEBOOK_INCOMPLETE:
            findings.close()
            raise
    decisions = decision_log(args, book, db, keys) if getattr(args, "log_decisions", False) else None
    return Service(book, findings=findings, evidence=evidence, decisions=decisions, trust=trust,
                   lang=lang_from(args))


def catalogue_from(args: argparse.Namespace) -> Any:
    """The message catalogue of --rules (the bundled one when those tables do not load), speaking
    --lang when it declares that language, else its first."""
    from ..core import messages
    try:
        book = rulebook_from(args)
    except GroundrulesError:
        book = rulebook.default()
    catalogue = messages.of(book)
    lang = lang_from(args)
    if catalogue is not None and lang is not None and lang in catalogue.languages:
        catalogue = messages.speaking(catalogue, lang)
    return catalogue


def worded(args: argparse.Namespace, exc: GroundrulesError) -> GroundrulesError:
    """A refusal as the command line prints it: in the language of --lang (core/messages.worded)."""
    from ..core.messages import worded as in_language
    return in_language(exc, catalogue_from(args))


def lang_from(args: argparse.Namespace) -> str | None:
    """The language --lang names (None: the message catalogue's first)."""
    return getattr(args, "lang", None)


def trust_from(args: argparse.Namespace):
    """The trust store --trust names (None: no signer is trusted)."""
    if not getattr(args, "trust", None):
        return None
    from ..provenance.trust import load_trust
    return load_trust(args.trust)


def call_once(args: argparse.Namespace, tool: str, arguments, *, read_only: bool = False,
              book: Rulebook | None = None) -> Envelope:
    """One tool call on a Service opened for it; its ledgers (a PostgreSQL pool, say) are closed
    before the command returns."""
    book = book or rulebook_from(args)
    caller = caller_from(args, book)                  # a bad --role opens no ledger
    service = service_from(args, read_only=read_only, book=book)
    try:
        return service.call(tool, arguments, caller)
    finally:
        close(service)


def close(service: Service) -> None:
    """Close the decision log first (it writes what it still holds), then the ledgers."""
    for ledger in (service.decisions, service.findings, service.evidence):
        if ledger is not None:
            ledger.close()


def key_store(args: argparse.Namespace, db: Any) -> SqliteKeyStore:
    """The evidence ledger's key store (store/keystore.py): --key-store, or beside a SQLite --db."""
    from ..store.keystore import SqliteKeyStore
    path = getattr(args, "key_store", None)
    if path is None:
        if isinstance(db, str):
            raise usage_error("usage.postgres_needs_key_store")
        path = f"{db}.keys"
    if not Path(path).parent.is_dir():
        raise usage_error("usage.key_store_folder_missing", path=path)
    try:
        return SqliteKeyStore(path)
    except StorageFailure:
        raise usage_error("usage.key_store_unopened", path=path) from None


def redaction_key(path: str) -> bytes:
    """The redaction key from its file (a trailing newline is not part of it)."""
    try:
        key = Path(path).read_bytes().rstrip(b"\r\n")
    except OSError as exc:
        raise usage_error("usage.redaction_key_unread", path=path, reason=reason(exc)) from None
    if len(key) < MIN_KEY_BYTES:
        raise usage_error("usage.redaction_key_short", path=path, bytes=MIN_KEY_BYTES)
    return key


def _reproducible(args: argparse.Namespace) -> dict:
    from ..findings import SequentialIds, StepClock
    options: dict = {}
    if args.step_clock:
        try:
            options["clock"] = StepClock(args.step_clock)
        except ValueError:
            raise usage_error("usage.step_clock", value=echo(args.step_clock)) from None
    if args.sequential_ids is not None:
        options["ids"] = SequentialIds(start=args.sequential_ids)
    return options


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "operator"
