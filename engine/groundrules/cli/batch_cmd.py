"""`groundrules batch TOOL INPUT… --out OUTPUT`: one call of a stateless tool per row of JSONL, CSV
or Parquet files, over worker processes, resumable (engine/groundrules/batch)."""
from __future__ import annotations

import argparse
import os
import sys

from ..core import limits
from ..core.errors import echo
from .io import usage_error
from .session import caller_from, rulebook_from


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("batch", help="call a stateless tool once per row of JSONL, CSV or Parquet files",
                       description="Answer every row of the inputs with TOOL (explain_support, lock_message, "
                                   "fold_evidence, verify_extraction) and write one answer row per input row, in "
                                   "input order: its key and the envelope (ok, data, warnings, error, rulebook). "
                                   "A row that is the tool's arguments needs no mapping; --map and --set build the "
                                   "arguments from other layouts. A bad row is an error row (INVALID_ROW), never a "
                                   "stopped run; a rerun resumes after the rows already written (docs/batch.md).")
    p.add_argument("tool", metavar="TOOL", help="the stateless tool to call")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="a .jsonl/.ndjson, .csv or .parquet file, a folder of them (sorted), or - (JSONL on stdin)")
    p.add_argument("--out", required=True, metavar="OUTPUT",
                   help="the answers: a .jsonl, .csv or .parquet file, or - (JSONL on stdout)")
    p.add_argument("--format", dest="in_format", choices=("jsonl", "csv", "parquet"),
                   help="the inputs' format when their names do not say it")
    p.add_argument("--out-format", choices=("jsonl", "csv", "parquet"), help="the output's format when its name "
                                                                             "does not say it")
    p.add_argument("--key", metavar="COLUMN", help="the column holding each row's key, kept in its answer and not "
                                                   "passed to the tool (default: the row's place, INPUT:N)")
    p.add_argument("--map", action="append", default=[], metavar="ARG.PATH=COLUMN",
                   help="build the arguments: put COLUMN's value at ARG.PATH (repeatable), "
                        "e.g. --map message.content=content")
    p.add_argument("--set", action="append", default=[], metavar="ARG.PATH=VALUE",
                   help="with --map: a constant at ARG.PATH, JSON if it reads as JSON, else text "
                        "(repeatable), e.g. --set message.role=user")
    p.add_argument("--json-column", metavar="COLUMN",
                   help="the column holding each row's arguments as JSON text (a CSV or Parquet of exported calls)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="worker processes (default: the cores, %(default)s here); the output is the same bytes "
                        "for any N")
    p.add_argument("--restart", action="store_true",
                   help="answer every row again, replacing OUTPUT, instead of resuming after the rows it holds")
    p.add_argument("--progress", choices=("auto", "bar", "lines", "none"), default="auto",
                   help="progress on stderr: a bar on a terminal, plain lines otherwise (default: auto)")
    p.add_argument("--project", default="default", help="the project the caller works in (default: %(default)s)")
    p.add_argument("--operator", metavar="NAME", help="who is calling (default: the login name)")
    p.add_argument("--role", default="agent",
                   help="the caller's role, one of the roles in rules/roles.yaml (default: %(default)s)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..batch import formats, plan as plans, run as runner
    from ..batch.answer import Answerer, stateless
    from ..batch.progress import Progress
    book = rulebook_from(args)
    if args.tool not in stateless():
        raise usage_error("usage.batch_stateless", tool=echo(args.tool), tools=list(stateless()))
    if args.workers < 1:
        raise usage_error("usage.at_least", option="--workers", least=1)
    if args.set and not args.map:
        raise usage_error("usage.batch_set_needs_map")
    if args.json_column and args.map:
        raise usage_error("usage.batch_json_or_map")
    maps = tuple(plans.parse_map(m) for m in args.map)
    sets = tuple(plans.parse_set(s) for s in args.set)
    plan = plans.Plan(args.tool, key=args.key, maps=maps, sets=sets, text=args.json_column)
    answerer = Answerer(book, plan, caller_from(args, book))
    inputs = formats.sources(args.inputs, args.in_format)
    table = limits.of(book)
    chunk_rows = table.chunk_rows if table else limits.DEFAULT_CHUNK_ROWS
    in_flight = table.chunks_in_flight if table else limits.DEFAULT_CHUNKS_IN_FLIGHT
    mode = args.progress
    progress = Progress(bar={"bar": True, "lines": False, "none": False}.get(mode),
                        every_s=float("inf") if mode == "none" else 5.0)
    try:
        runner.run(answerer, inputs, args.out, out_format=args.out_format, workers=args.workers,
                             chunk_rows=chunk_rows, in_flight=in_flight, restart=args.restart, progress=progress)
    finally:
        progress.close()
    if mode != "none":
        sys.stderr.write(f"batch: {progress.line()}; rulebook {book.version}\n")
    return 0
