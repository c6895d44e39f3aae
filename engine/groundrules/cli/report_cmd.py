"""`groundrules report`: write the rulebook as one static HTML page."""
from __future__ import annotations

import argparse
import json
from contextlib import nullcontext
from pathlib import Path

from ..analyst import report
from ..core import rulebook
from ..core.schema_check import contract
from .base_tables import base_rulebook
from ..core.errors import echo
from .io import emit_text, reason, usage_error


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write a static HTML picture of every table, with coverage",
                       description="Write DIR/index.html: every decision table as a grid (rows x conditions x "
                                   "outputs, hit policy and priority), transition tables as state diagrams, "
                                   "lock tables with their examples; each row with its coverage by the case "
                                   "corpus and the status of its examples. With --base, the rows and cases the "
                                   "edit changes are highlighted. Open the file in any browser; it needs no "
                                   "network.")
    p.add_argument("--out", metavar="DIR",
                   help="folder to write index.html into (created if needed; default: report, but with --batch)")
    p.add_argument("--base", metavar="DIR|REV",
                   help="highlight what changed since these tables: a folder holding rules/, locks/, schemas/, "
                        "or a git revision of this checkout (e.g. HEAD)")
    p.add_argument("--cases", metavar="DIR", help="case corpus (default: tests/cases beside the tables)")
    p.add_argument("--replay", metavar="FILE",
                   help="add what these tables change on logged traffic: the JSON `groundrules replay --rules "
                        "<these tables> --format json` wrote (docs/decision-log.md)")
    p.add_argument("--batch", metavar="OUTPUT",
                   help="instead of the tables, draw what a batch answered: OUTPUT is what `groundrules batch` wrote "
                        "(.jsonl, .csv or .parquet); charts of refusal codes, support reasons, lock kinds and invalid "
                        "reasons, patterns, issues, slots")
    p.add_argument("--json", action="store_true", help="with --batch: print the counts as an envelope instead")
    p.set_defaults(func=run)


DEFAULT_OUT = "report"


def run(args: argparse.Namespace) -> int:
    if args.batch:
        return _batch(args)
    if args.json:
        raise usage_error("usage.report_json_batch")
    args.out = args.out or DEFAULT_OUT                 # the rulebook page goes where the docs say
    root = Path(args.rules) if args.rules else rulebook.data_root()
    cases = Path(args.cases) if args.cases else root / "tests" / "cases"
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise usage_error("usage.out_not_folder", out=args.out)
    book = rulebook.load(root)
    replayed = _replay(args.replay, book) if args.replay else None
    with (base_rulebook(args.base, root) if args.base else nullcontext()) as base:
        html = report.render(book, cases, base, replayed)
    return _write(args, out, html)


def _replay(path: str, book: rulebook.Rulebook) -> dict:
    """The replay FILE holds, checked against replay.v1.schema.json and against `book`: a replay
    under other tables would put another edit's changes in this report."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise usage_error("usage.replay_unread", path=path, reason=reason(exc)) from None
    except ValueError:
        raise usage_error("usage.replay_not_json", path=path) from None
    problem = contract(book.schemas, "replay.v1.schema.json").located(data)
    if problem is not None:
        raise usage_error("usage.replay_not_replay", path=path, problem=str(problem))
    if data["candidate"] != book.version:
        raise usage_error("usage.replay_other_tables", path=path, replayed=echo(data["candidate"]), version=book.version)
    return data


def _batch(args: argparse.Namespace) -> int:
    """The page (or, with --json, the counts) of a batch's answers, read once, in a stream."""
    from ..analyst.report import batch_html
    from ..batch import formats, summary
    from ..core import canonical
    from .io import emit
    if args.base or args.replay or args.cases:
        raise usage_error("usage.report_batch_alone")
    if not args.json and not args.out:
        raise usage_error("usage.report_batch_out")
    path = Path(args.batch)
    if args.batch != "-" and not path.is_file():
        raise usage_error("usage.no_such_file", input=f"--batch {args.batch}")
    try:
        counted = summary.summarize(formats.answers(args.batch))
    except (ValueError, KeyError, TypeError):
        raise usage_error("usage.report_batch_not_answers", batch=args.batch) from None
    except OSError as exc:
        raise usage_error("usage.cannot_read", input=f"--batch {args.batch}", reason=reason(exc)) from None
    if args.json:
        versions = [r["rulebook"] for r in counted["rulebooks"]]
        emit(canonical.envelope(ok=True, data=counted, rulebook=versions[0] if len(versions) == 1 else None))
        return 0
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise usage_error("usage.out_not_folder", out=args.out)
    return _write(args, out, batch_html.page(counted, path.name))


def _write(args: argparse.Namespace, out: Path, html: str) -> int:
    try:
        target = report.write(out, html)
    except OSError as exc:
        raise usage_error("usage.out_unwritten", out=args.out, reason=reason(exc)) from None
    emit_text(f"wrote {target} ({len(html.encode('utf-8'))} bytes); open it in a browser")
    return 0
