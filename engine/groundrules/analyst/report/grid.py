"""A decision table as a DMN-like grid: one column per field the rows test, one per output.

A row's condition is split into its conjuncts (the items of a top-level `all`); a conjunct that
reads one field goes to that field's column, written without the field (`> 0`); a conjunct that
reads several fields goes to the `other conditions` column, written in full. An empty input cell
means "any value", as in DMN.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...core.conditions import Condition
from ..corpus import TableRef
from ...core.decide import Row
from ...core.rulebook import Rulebook
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
    changed: tuple = ()       # why the row is highlighted against the base: what it decides changed
    noted: tuple = ()         # edits of the row that change nothing it decides (description, examples)
    taken: tuple = ()         # case names the row held on but never fired on: a row before it won


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
    changes, notes = _changes(ref, book, base, coverage)

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
        taken = tuple(c for c in coverage.taken.get(row.id, ()) if c not in set(fired or ())) if coverage else ()
        return GridRow(n, row.id, row.code, rank.get(row.code), line, raw.get("description", ""),
                       inputs, " and ".join(other), outputs, fired, examples.get(row.id if n else "default"),
                       changes.get(row.id, ()), notes.get(row.id, ()), taken)

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


MEANING = ("when", "code", "output")     # what a row says; description and examples only explain it


def _changes(ref: TableRef, book: Rulebook, base: tuple | None, coverage: Coverage | None) -> tuple[dict, dict]:
    """(row id -> why the edit changes what the row decides, row id -> edits that change nothing
    it decides). A row's meaning is its condition, code and outputs, its code's outputs, and its
    place among the rows and codes both versions have: inserting a code into `priority` moves the
    codes after it down a rank without changing their order, so it changes none of them."""
    if base is None:
        return {}, {}
    base_ref, base_book, base_coverage = base
    table = ref.table
    data = ref.data(book)
    if base_ref is None:
        return {r["id"]: ("new table",) for r in data["rows"]} | {"default": ("new table",)}, {}
    old = base_ref.table
    old_data = base_ref.data(base_book)
    old_raws = {r["id"]: r for r in old_data["rows"]} | {"default": old_data.get("default")}
    raws = [(r["id"], r) for r in data["rows"]] + [("default", data.get("default"))]
    ahead_now = _ahead(table.priority, old.priority)
    ahead_was = _ahead(old.priority, table.priority)
    order_now = _row_order(table, old)
    order_was = _row_order(old, table)
    out: dict = {}
    notes: dict = {}
    for row_id, raw in raws:
        if raw is None:
            continue
        why, noted = [], []
        code = raw.get("code", row_id)
        was = old_raws.get(row_id)
        if was is None:
            why.append("new row")
        else:
            why += [f"{key} edited" for key in MEANING if raw.get(key) != was.get(key)]
            noted += [f"{key} edited" for key in ("description", "examples") if raw.get(key) != was.get(key)]
            if order_now.get(row_id) != order_was.get(row_id):
                why.append("moved among the rows")
        attrs_now, attrs_was = table.codes.get(code, {}), old.codes.get(code, {})
        if _meaning(attrs_now) != _meaning(attrs_was):
            why.append(f"outputs of {code} edited")
        elif attrs_now != attrs_was:
            noted.append(f"description of {code} edited")
        if code in ahead_now and code in ahead_was and ahead_now[code] != ahead_was[code]:
            why.append(_priority_moved(code, ahead_was[code], ahead_now[code]))
        if coverage is not None and base_coverage is not None and \
                set(coverage.fired.get(row_id, ())) != set(base_coverage.fired.get(row_id, ())):
            why.append("fires on other cases")
        if why:
            out[row_id] = tuple(why)
        if noted:
            notes[row_id] = tuple(noted)
    return out, notes


def _meaning(attrs: dict) -> dict:
    return {k: v for k, v in attrs.items() if k not in HIDDEN_ATTRIBUTES}


def _ahead(priority: tuple, other: tuple) -> dict:
    """code -> the codes both lists hold that rank before it in `priority`."""
    common = [c for c in priority if c in other]
    return {c: frozenset(common[:i]) for i, c in enumerate(common)}


def _priority_moved(code: str, was: frozenset, now: frozenset) -> str:
    below = sorted(now - was)      # codes it used to outrank
    above = sorted(was - now)      # codes that used to outrank it
    parts = ([f"now below {', '.join(below)}"] if below else []) + ([f"now above {', '.join(above)}"] if above else [])
    return "priority: " + "; ".join(parts)


def _row_order(table, other) -> dict:
    """row id -> the rows both tables hold that are tried before it, where that order decides: every
    row under `first` and `collect`, the rows of the same code under `output_order` (a code fires
    from its first matching row); `unique` tables have no order."""
    if table.hit_policy == "unique":
        return {}
    both = {r.id for r in other.rows}
    rows = sorted((r for r in table.rows if r.id in both), key=lambda r: r.index)
    same_code = table.hit_policy == "output_order"
    return {r.id: frozenset(o.id for o in rows[:i] if not same_code or o.code == r.code)
            for i, r in enumerate(rows)}
