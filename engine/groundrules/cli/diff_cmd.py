"""`groundrules diff`: the effect of a table edit on the case corpora, before -> after."""
from __future__ import annotations

import argparse
from pathlib import Path

from ..core import canonical, rulebook
from ..analyst.corpus_diff import corpus_diff
from ..analyst.corpus_diff.text import lines
from .base_tables import base_rulebook
from .io import emit, emit_text, usage_error


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("diff", help="show what a table edit changes over the case corpora",
                       description="Evaluate every decision table on its cases (tests/cases/<table-id>/), "
                                   "the lock tables on the conversations of tests/cases/locks/ and the chat "
                                   "corpora (tests/cases/lock_chat*/), the fold on the payloads of "
                                   "tests/cases/fold/ and the finding ledger (its transition tables) on the "
                                   "call sequences of tests/cases/findings/, with the tables of BASE and with "
                                   "the current ones; list every edited table and schema file, and print each "
                                   "case whose outcome changed: primary code, codes added/removed/reordered, "
                                   "and every changed sentence as '-' (before) and '+' (after) lines.")
    p.add_argument("--base", required=True, metavar="DIR|REV",
                   help="a folder holding rules/, locks/, schemas/, or a git revision of this checkout "
                        "(e.g. HEAD)")
    p.add_argument("--cases", metavar="DIR", help="case corpus (default: tests/cases beside the tables)")
    p.add_argument("--json", action="store_true", help="print the same changes as an envelope")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    root = Path(args.rules) if args.rules else rulebook.data_root()
    cases = Path(args.cases) if args.cases else root / "tests" / "cases"
    if not cases.is_dir():
        raise usage_error("usage.no_corpus", path=str(cases))
    after = rulebook.load(root)
    with base_rulebook(args.base, root) as before:
        diff = corpus_diff(before, after, cases)
    if args.json:
        emit(canonical.envelope(ok=True, data=diff, rulebook=after.version))
    else:
        emit_text("\n".join(lines(diff, args.cases or "tests/cases")))
    return 0
