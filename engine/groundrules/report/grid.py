"""A decision table as a DMN-like grid: one column per field the rows test, one per output.

A row's condition is split into its conjuncts (the items of a top-level `all`); a conjunct that
reads one field goes to that field's column, written without the field (`> 0`); a conjunct that
reads several fields goes to the `other conditions` column, written in full. An empty input cell
means "any value", as in DMN.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..conditions import Condition
from ..corpus import TableRef
from ..decide import Row
from ..rulebook import Rulebook
from .condtext import fields_read, text
from .coverage import Coverage, Examples

HIDDEN_ATTRIBUTES = ("description",)     # shown as the code's tooltip, not as a column


@dataclass(frozen=True)
class GridRow:
    n: int                    # position in evaluation order, 1-based; 0 for the default
    id: str
    code: str
    rank: int | None          # the code's place in `priority` (output_order), 1-based
    line: int
    description: str
    inputs: dict              # column field -> cell text
    other: str                # conjuncts reading several fields
    outputs: dict             # output column -> cell text
    fired: tuple | None       # case names the row fired on (None: no corpus)
    examples: Examples | None
    changed: tuple = ()       # why the row is highlighted against the base


@dataclass(frozen=True)
class Grid:
    ref: TableRef
    title: str
    line: int | None          # where an embedded table starts in its owner's file
    hit_policy: str
    priority: tuple
    columns: tuple            # input fields, in order of first use
    has_other: bool
    outputs: tuple            # code attributes, then rendered outputs
    code_notes: dict          # code -> its description
    rows: tuple
    coverage: Coverage | None
    table_examples: Examples | None
    removed: tuple = ()       # ids of base rows the edit removed


def conjuncts(cond: Condition) -> tuple:
    return cond.children if cond.kind == "all" else (cond,)


def build(ref: TableRef, book: Rulebook, coverage: Coverage | None, examples: dict,
          base: tuple | None = None) -> Grid:
    """The grid of one decision table; `base` is (base TableRef, base Rulebook, base Coverage) or
    None, and marks rows the edit changed."""
    table = ref.table
    data = ref.data(book)
    source = book.sources[ref.owner]
    prefix = (ref.key,) if ref.key else ()
    columns: list[str] = []
    for row in table.rows:
        for c in conjuncts(row.when):
            read = fields_read(c)
            if len(read) == 1 and read[0] not in columns:
                columns.append(read[0])
    attributes: list[str] = []
    for attrs in table.codes.values():
        attributes += [k for k in attrs if k not in HIDDEN_ATTRIBUTES and k not in attributes]
    rendered: list[str] = []
    for raw in data["rows"]:
        rendered += [k for k in raw.get("output", {}) if k not in rendered and k not in attributes]
    if "default" in data:
        rendered += [k for k in data["default"].get("output", {}) if k not in rendered and k not in attributes]
    rank = {code: i + 1 for i, code in enumerate(table.priority)}
    changes = _changes(ref, book, base, coverage)

    def grid_row(row: Row, n: int, raw: dict) -> GridRow:
        inputs: dict = {}
        other = []
        if n:
            for c in conjuncts(row.when):
                read = fields_read(c)
                if len(read) == 1:
                    cell = text(c, read[0])
                    inputs[read[0]] = f"{inputs[read[0]]} and {cell}" if read[0] in inputs else cell
                else:
                    other.append(text(c))
        attrs = table.codes.get(row.code, {})
        outputs = {k: _shown(attrs[k]) for k in attributes if k in attrs}
        outputs.update({k: _shown(v) for k, v in raw.get("output", {}).items()})
        line = source.where(prefix + row.where)[0]
        fired = coverage.fired.get(row.id, ()) if coverage is not None else None
        return GridRow(n, row.id, row.code, rank.get(row.code), line, raw.get("description", ""),
                       inputs, " and ".join(other), outputs, fired, examples.get(row.id if n else "default"),
                       changes.get(row.id, ()))

    rows = [grid_row(row, n, data["rows"][row.index]) for n, row in enumerate(table.rows, 1)]
    if table.default is not None:
        rows.append(grid_row(table.default, 0, data["default"]))
    removed = ()
    if base is not None and base[0] is not None:
        ids = {r["id"] for r in data["rows"]}
        removed = tuple(r["id"] for r in base[0].data(base[1])["rows"] if r["id"] not in ids)
    return Grid(ref, data.get("title", "") if not ref.key else "", source.where(prefix)[0] if prefix else None,
                table.hit_policy,
                table.priority, tuple(columns), any(r.other for r in rows), tuple(attributes + rendered),
                {c: a.get("description", "") for c, a in table.codes.items()}, tuple(rows), coverage,
                examples.get("examples"), removed)


def _shown(value: Any) -> str:
    if isinstance(value, dict) and set(value) == {"bind"}:
        return f"⟨{value['bind']}⟩"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _changes(ref: TableRef, book: Rulebook, base: tuple | None, coverage: Coverage | None) -> dict:
    """Row id -> why the edit touches it: new, edited, its code's outputs edited, priority moved,
    fires on other cases."""
    if base is None:
        return {}
    base_ref, base_book, base_coverage = base
    table = ref.table
    data = ref.data(book)
    if base_ref is None:
        return {r["id"]: ("new table",) for r in data["rows"]} | {"default": ("new table",)}
    old = base_ref.table
    old_rows = {r["id"]: r for r in base_ref.data(base_book)["rows"]}
    old_rank = {code: i for i, code in enumerate(old.priority)}
    new_rank = {code: i for i, code in enumerate(table.priority)}
    out: dict = {}
    raws = [(r["id"], r) for r in data["rows"]] + [("default", data.get("default"))]
    old_raws = dict(old_rows, default=base_ref.data(base_book).get("default"))
    for row_id, raw in raws:
        if raw is None:
            continue
        why = []
        code = raw.get("code", row_id)
        if row_id not in old_raws or old_raws[row_id] is None:
            why.append("new row")
        elif old_raws[row_id] != raw:
            why.append("row edited")
        if table.codes.get(code) != old.codes.get(code):
            why.append(f"outputs of {code} edited")
        if code in new_rank and code in old_rank and new_rank[code] != old_rank[code]:
            why.append(f"priority {old_rank[code] + 1} → {new_rank[code] + 1}")
        if coverage is not None and base_coverage is not None and \
                set(coverage.fired.get(row_id, ())) != set(base_coverage.fired.get(row_id, ())):
            why.append("fires on other cases")
        if why:
            out[row_id] = tuple(why)
    return out
