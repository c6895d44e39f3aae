"""`groundrules eval TABLE FILE [--trace]`: one decision table on one JSON value, for the analyst.

Text by default: the rows that fired with their outputs, each at its file:line; with --trace every
other row too, with the test that failed at its file:line:col, the value it read, and for a list
operator the item that decided. --json prints the same as an envelope.
"""
from __future__ import annotations

import argparse
import json
from typing import Any

from .. import canonical
from ..errors import GroundrulesError, did_you_mean
from ..tables import location
from ..yamlsrc import undotted
from .io import emit, emit_text, read_json, usage_error
from .session import rulebook_from


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="evaluate one decision table on a JSON value (--trace: why each row did or did not fire)",
                       description="Evaluate decision table TABLE (a table inside another, such as the merge "
                                   "policy's resolve table, is merge.resolve) on the JSON value in FILE, and "
                                   "print the rows that fired, each at its file:line.")
    p.add_argument("table", metavar="TABLE", help="decision table id")
    p.add_argument("file", metavar="FILE|-", help="JSON value file, or - for stdin")
    p.add_argument("--trace", action="store_true",
                   help="every row: fired, skipped by the hit policy, or the test that failed and what it read")
    p.add_argument("--now", metavar="DATETIME",
                   help="the now that date tests compare with (RFC 3339 with offset, e.g. 2024-05-01T08:00:00+08:00); "
                        "the clock is never read")
    p.add_argument("--json", action="store_true", help="print an envelope instead of text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    book = rulebook_from(args)
    found = {table.id: (table, source, prefix) for table, source, prefix in book.decision_tables()}
    if args.table not in found:
        hint = did_you_mean(args.table, found) or "decision tables: " + ", ".join(sorted(found))
        raise usage_error(f"{args.table}: no such decision table ({hint})")
    table, source, prefix = found[args.table]
    value = read_json(args.file)
    try:
        decision = table.evaluate(value, trace=args.trace, now=args.now)
    except GroundrulesError as exc:
        if args.json:
            emit(canonical.envelope(ok=False, error=exc.as_dict(), rulebook=book.version))
        else:
            emit_text(f"{table.id}: {exc.code}: {exc.message}")
        return 1

    def at(path: tuple) -> str:
        line, col, _ = location(source, prefix + path)
        return f"{source.file}:{line}:{col}"

    fired = [{"row": f.row.id, "code": f.code, "at": at(f.row.where), "outputs": f.outputs} for f in decision.fired]
    notes = [_located(note, table, at) for note in decision.trace or ()]
    if args.json:
        data = {"table": table.id, "hit_policy": table.hit_policy, "fired": fired}
        if args.trace:
            data["trace"] = notes
        emit(canonical.envelope(ok=True, data=data, rulebook=book.version))
        return 0
    lines = [f"{table.id} ({source.file}, hit policy {table.hit_policy}): {len(fired)} row(s) fired"]
    for f in fired:
        lines.append(f"{f['at']}: fired {f['row']} -> {f['code']}")
        lines += [f"    {key}: {_brief(value)}" for key, value in f["outputs"].items()]
    for note in notes if args.trace else ():
        if note["fired"]:
            continue
        if "skipped" in note:
            lines.append(f"{note['at']}: skipped {note['row']}: {note['skipped']}")
        else:
            lines.append(f"{note['at']}: not fired {note['row']}")
            lines += [f"    {text}" for text in _failure_lines(note["failed"], at)]
    emit_text("\n".join(lines))
    return 0


def _located(note: dict, table: Any, at) -> dict:
    row = next(r for r in table.rows if r.id == note["row"])
    return {"at": at(row.where), **note}


def _failure_lines(failure: dict | None, at, depth: int = 0) -> list[str]:
    """A failed test in words: where it is, what it compared, what it read; for list operators the
    item that decided."""
    if failure is None:
        return []
    pad = "  " * depth
    where = at(undotted(failure["at"]))
    if failure.get("op") == "any" and "failed" in failure:           # an `any: [...]` of conditions
        out = [f"{pad}{where}: none of these held:"]
        for inner in failure["failed"]:
            out += _failure_lines(inner, at, depth + 1)
        return out
    if failure.get("op") == "not":
        return [f"{pad}{where}: not: the condition inside held"]
    expected = failure.get("expected")
    out = [f"{pad}{where}: {failure['field']} {failure['op']} {_brief(expected)}: read {_brief(failure['read'])}"]
    if "item" in failure:
        item = failure["item"]
        if "failed" in item:
            out.append(f"{pad}  item [{item['index']}] failed:")
            out += _failure_lines(item["failed"], at, depth + 2)
        else:
            out.append(f"{pad}  item [{item['index']}] held: {_brief(item['held'])}")
    for item in failure.get("items", ()):
        out.append(f"{pad}  item [{item['index']}] of {failure['of']} failed:")
        out += _failure_lines(item["failed"], at, depth + 2)
    if "counted" in failure:
        out.append(f"{pad}  counted {failure['counted']}")
    return out


def _brief(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"
