"""The library entry point the engines call: a batch of rows in, a batch of answers out.

Each row goes through the registry (`Service.call`'s checks and envelope) as the caller given, on
a rulebook compiled once per process: `answerer(rules, ...)` keeps one `Answerer` per tables folder
and caller in the process (a Spark or Dask Python worker, a `batch --workers` process), so a second
batch pays no load; the verdict cache (core/rulecache) spares a fresh process most of the first.

An answer row is the row's key and the envelope: as one JSON line (`line`, what `batch` writes:
`{"key": …, "ok": …, "data": …, "warnings": …, "error": …, "rulebook": …}`), or as columns
(`COLUMNS`: data, warnings and error as their JSON text) in an Arrow record batch (`answer_batch`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from ..api import ROLES_TABLE, TOOLS, Caller, Service
from ..core import canonical, limits
from ..core import rulebook as rulebooks
from ..core import codes
from ..core.errors import GroundrulesError, echo
from ..core.messages import refused
from .plan import Plan, RowError, arguments, decode

if TYPE_CHECKING:
    import pyarrow

COLUMNS = ("key", "ok", "data", "warnings", "error", "rulebook")
ROW_MESSAGES = ("row_not_json", "row_too_large", "row_not_object", "row_no_column")
BATCH_CALLER = Caller("batch", "agent", ())


def stateless() -> list[str]:
    """The tools a batch may run: those that need no ledger (pure functions of input and tables)."""
    return [name for name, tool in TOOLS.items() if not tool.ledger]


class Answerer:
    """Answers rows of one plan as one caller under one rulebook."""

    def __init__(self, book: rulebooks.Rulebook, plan: Plan, caller: Caller = BATCH_CALLER):
        if plan.tool not in stateless():
            raise refused(book, codes.USAGE, "usage.batch_stateless", tool=echo(plan.tool), tools=list(stateless()))
        self.service, self.plan, self.caller = Service(book), plan, caller
        self.roles = book.table(ROLES_TABLE)
        missing = [m for m in ROW_MESSAGES if m not in self.roles.messages]
        if missing:
            raise refused(book, codes.RULEBOOK_INCOMPLETE, "rulebook.row_messages", missing=missing)
        table = limits.of(book)
        self.row_bytes = table.input_bytes if table is not None else None
        self.version = book.version

    def answered(self, place: Any, row: Any) -> tuple[Any, Mapping[str, Any], str]:
        """(key, envelope, the envelope's JSON text) of one row: a dict of columns, or a JSONL
        line's bytes. A row that is no JSON, too large, or short of a mapped column answers
        INVALID_ROW, worded by the role table; nothing a row holds stops the batch."""
        key = place
        try:
            if isinstance(row, (bytes, bytearray)):
                if self.row_bytes is not None and len(row) > self.row_bytes:
                    raise RowError("row_too_large", limit=self.row_bytes)
                row = decode(row)
            key = self.key_of(row, place)
            args = arguments(self.plan, row)
        except RowError as exc:
            error = GroundrulesError(codes.INVALID_ROW, self.roles.message(exc.name, **exc.params)).as_dict()
            refusal = canonical.envelope(ok=False, error=error, rulebook=self.version)
            text = canonical.json_text(refusal)
            assert text is not None, "an envelope of the role table's words is JSON"
            return key, refusal, text
        envelope, text = self.service.answer(self.plan.tool, args, self.caller, decoded=True)
        return key, envelope, text

    def key_of(self, row: Any, place: Any) -> Any:
        """The row's key: its key column's value where it has one, else its place in the input."""
        if self.plan.key and isinstance(row, dict) and self.plan.key in row:
            return row[self.plan.key]
        return place

    def line(self, place: Any, row: Any) -> str:
        """One answer row as the JSON line `batch` writes (no newline)."""
        key, _, text = self.answered(place, row)
        return '{"key": ' + json.dumps(key, ensure_ascii=False) + ", " + text[1:]

    def lines(self, rows: Iterable[tuple[Any, Any]]) -> list[str]:
        """A chunk's answer lines, in the order of its (place, row) pairs."""
        return [self.line(place, row) for place, row in rows]

    def columns(self, rows: Iterable[tuple[Any, Any]]) -> dict[str, list]:
        """A chunk's answers as COLUMNS (key as text; data, warnings, error as JSON text or null)."""
        out: dict[str, list] = {c: [] for c in COLUMNS}
        for place, row in rows:
            key, envelope, _ = self.answered(place, row)
            for name, value in column_values(key, envelope).items():
                out[name].append(value)
        return out


def column_values(key: Any, envelope: Mapping[str, Any]) -> dict:
    """One answer row as COLUMNS' values: the key as text, data, warnings and error as JSON text."""
    out = {"key": key if isinstance(key, str) else json.dumps(key, ensure_ascii=False), "ok": envelope["ok"]}
    for name in ("data", "warnings", "error"):
        value = envelope.get(name)
        out[name] = None if value is None else canonical.json_text(value)
    out["rulebook"] = envelope["rulebook"]
    return out


# one Answerer per (tables folder, plan, caller) in this process: the rulebook is compiled once and
# reused by every batch the process answers (a Spark or Dask worker answers many)
_ANSWERERS: dict[tuple, Answerer] = {}


def answerer(rules: str | Path | None, plan: Plan, caller: Caller = BATCH_CALLER) -> Answerer:
    """This process's Answerer for the tables under `rules` (None: the bundled tables)."""
    key = (str(rules) if rules is not None else None, plan, caller)
    found = _ANSWERERS.get(key)
    if found is None:
        book = rulebooks.load(rules) if rules is not None else rulebooks.default()
        found = _ANSWERERS[key] = Answerer(book, plan, caller)
    return found


def answer_rows(rows: Iterable[dict], plan: Plan, *, rules: str | Path | None = None,
                caller: Caller = BATCH_CALLER, first: int = 1) -> list[str]:
    """The answer lines of plain rows (dicts of columns), placed `first`, `first`+1, …"""
    return answerer(rules, plan, caller).lines(enumerate(rows, first))


def arrow_schema() -> "pyarrow.Schema":
    import pyarrow as pa
    return pa.schema([("key", pa.string()), ("ok", pa.bool_()), ("data", pa.string()),
                      ("warnings", pa.string()), ("error", pa.string()), ("rulebook", pa.string())])


def answer_batch(batch: "pyarrow.RecordBatch", plan: Plan, *, rules: str | Path | None = None,
                 caller: Caller = BATCH_CALLER, places: Iterable[Any] | None = None) -> "pyarrow.RecordBatch":
    """An Arrow record batch of rows -> the record batch of their answers (`arrow_schema()`), one
    row each, in order. Only the columns the plan reads are converted to Python; without a
    mapping the row is every column. `places` are the rows' keys where the plan names no key
    column (default: their positions in the batch, from 1)."""
    import pyarrow as pa
    wanted = plan.columns() if (plan.mapped or plan.text) else batch.schema.names
    if plan.key and plan.key not in wanted:
        wanted = [plan.key, *wanted]
    present = [c for c in wanted if c in batch.schema.names]
    rows = batch.select(present).to_pylist() if present else [{} for _ in range(batch.num_rows)]
    placed = zip(places if places is not None else range(1, batch.num_rows + 1), rows)
    return pa.RecordBatch.from_pydict(answerer(rules, plan, caller).columns(placed), schema=arrow_schema())
