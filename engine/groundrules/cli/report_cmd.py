"""`groundrules report`: write the rulebook as one static HTML page."""
from __future__ import annotations

import argparse
from contextlib import nullcontext
from pathlib import Path

from .. import report, rulebook
from .base_tables import base_rulebook
from .io import emit_text, usage_error


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write a static HTML picture of every table, with coverage",
                       description="Write DIR/index.html: every decision table as a grid (rows x conditions x "
                                   "outputs, hit policy and priority), transition tables as state diagrams, "
                                   "lock tables with their examples; each row with its coverage by the case "
                                   "corpus and the status of its examples. With --base, the rows and cases the "
                                   "edit changes are highlighted. Open the file in any browser; it needs no "
                                   "network.")
    p.add_argument("--out", required=True, metavar="DIR", help="folder to write index.html into (created if needed)")
    p.add_argument("--base", metavar="DIR|REV",
                   help="highlight what changed since these tables: a folder holding rules/, locks/, schemas/, "
                        "or a git revision of this checkout (e.g. HEAD)")
    p.add_argument("--cases", metavar="DIR", help="case corpus (default: tests/cases beside the tables)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = Path(args.rules) if args.rules else rulebook.data_root()
    cases = Path(args.cases) if args.cases else root / "tests" / "cases"
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise usage_error(f"--out {args.out}: exists and is not a folder")
    book = rulebook.load(root)
    with (base_rulebook(args.base, root) if args.base else nullcontext()) as base:
        html = report.render(book, cases, base)
    try:
        target = report.write(out, html)
    except OSError as exc:
        raise usage_error(f"--out {args.out}: cannot write ({exc.strerror or type(exc).__name__})") from None
    emit_text(f"wrote {target} ({len(html.encode('utf-8'))} bytes); open it in a browser")
    return 0
