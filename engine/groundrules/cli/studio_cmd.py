"""`groundrules studio`: the table editor in the browser, served on loopback (analyst/studio/)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core import rulebook
from .io import reason, usage_error
from .session import add_caller_args, caller_from, decision_log, rulebook_from


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("studio", help="edit the decision, lock, transition and merge tables as grids in the browser, "
                                      "with lint, examples, the corpus and a simulator on every change",
                       description="Serve the table editor on 127.0.0.1 (only): the tables under rules/ and locks/ "
                                   "of the project (--rules DIR, default the bundled tables) as grids, lint's "
                                   "problems at their cells as you type, the table's examples and its corpus run on "
                                   "an unsaved copy, a simulator (an input, a corpus case or, with --db, a logged "
                                   "decision), and Save, which writes only what changed and only when lint passes.")
    p.add_argument("--port", type=int, default=8765, help="the port on 127.0.0.1 (0: pick a free one; the address "
                                                          "is printed either way; default: %(default)s)")
    p.add_argument("--cases", metavar="DIR", help="the case corpora (default: tests/cases beside the tables)")
    add_caller_args(p, role="reviewer")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..analyst.studio.server import make_server
    from ..analyst.studio.workspace import Workspace
    root = Path(args.rules) if args.rules else rulebook.data_root()
    if not (root / "rules").is_dir():
        raise usage_error("usage.no_rules_folder", path=str(root))
    decisions, service = None, None
    if args.db:
        from ..api import Service
        from ..store import is_postgres
        book = rulebook_from(args)
        db = args.db if is_postgres(args.db) else Path(args.db)
        if isinstance(db, Path) and not db.exists():
            raise usage_error("usage.no_such_database", db=args.db)
        service = Service(book, decisions=decision_log(args, book, db))
        caller = caller_from(args, book)
        decisions = lambda arguments: service.call("read_decisions", arguments, caller)  # noqa: E731
    workspace = Workspace(root, Path(args.cases) if args.cases else None, decisions)
    try:
        server = make_server(workspace, args.port)
    except OSError as exc:
        raise usage_error("usage.port_busy", port=args.port, reason=reason(exc)) from None
    host, port = server.server_address[:2]
    assert isinstance(host, str), "an AF_INET server's address is (str, int)"
    print(f"studio: http://{host}:{port}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if service is not None and service.decisions is not None:
            service.decisions.close()
    sys.stdout.flush()
    return 0
