"""A table's YAML as grids: what the editor shows, cell by cell, each cell at its key path and lines.

The grids are found in the table's own shape, whatever its kind: a list of mappings (a decision
table's rows, a lock table's patterns and rules, a machine's transitions: each item names its id;
at the top, examples too) is a grid of rows whose columns are their keys; a mapping of mappings (outputs, guards, states) a grid keyed by
name; a list of scalars (a priority order) and a mapping of scalars (the top-level settings,
messages, word lists) a one-column grid. A cell holding a string shows the string; any other value
shows as one line of flow YAML, and is typed back as YAML.
"""
from __future__ import annotations

from typing import Any

from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from . import yamltext

VALUE = "value"         # the column of a one-column grid


def grids(text: str) -> list[dict]:
    """Every grid of the table, in the order its keys come."""
    root = yamltext.compose(text)
    data = yamltext.read(text)
    out: list[dict] = []
    if not isinstance(root, MappingNode) or not isinstance(data, dict):
        return out
    settings = [(k.value, v) for k, v in root.value if isinstance(v, ScalarNode)]
    if settings:
        out.append(_scalars("settings", (), settings, data))
    _walk(root, data, (), out)
    return out


def _walk(node: MappingNode, data: dict, path: tuple, out: list[dict]) -> None:
    for key_node, value in node.value:
        key = key_node.value
        here = path + (key,)
        held: Any = data.get(key)           # what the table loaded at the node: its shape is the node's
        if _is_rows(value, top=not path):
            out.append(_rows(here, value, held))
        elif isinstance(value, SequenceNode) and value.value and all(isinstance(i, ScalarNode) for i in value.value) \
                and not path:
            out.append(_list(here, value, held))
        elif isinstance(value, MappingNode) and value.value:
            if _holds_rows(value):
                _walk(value, held, here, out)
            elif all(isinstance(v, MappingNode) for _, v in value.value):
                out.append(_named(here, value, held))
            elif all(isinstance(v, ScalarNode) for _, v in value.value):
                out.append(_scalars(".".join(map(str, here)), here, [(k.value, v) for k, v in value.value], held))


def _is_rows(node: Node, top: bool) -> bool:
    """A list of mappings that are rows: each names its `id` (a list at the top, examples too)."""
    return isinstance(node, SequenceNode) and bool(node.value) and all(
        isinstance(i, MappingNode) and (top or yamltext.child(i, "id") is not None) for i in node.value)


def _holds_rows(node: MappingNode) -> bool:
    """Somewhere inside, a list of mappings (a machine's transitions): walk into it."""
    for _, value in node.value:
        if _is_rows(value, top=False):
            return True
        if isinstance(value, MappingNode) and _holds_rows(value):
            return True
    return False


def _rows(path: tuple, node: SequenceNode, data: list) -> dict:
    columns = _columns(item for item in data)
    rows = [_row(path + (i,), str(item.get("id", i)) if isinstance(item, dict) else str(i), n, item, columns)
            for i, (n, item) in enumerate(zip(node.value, data))]
    return {"name": ".".join(map(str, path)), "path": list(path), "shape": "rows", "columns": columns,
            "movable": True, "rows": rows}


def _named(path: tuple, node: MappingNode, data: dict) -> dict:
    columns = _columns(data.values())
    rows = [_row(path + (k.value,), str(k.value), v, data[k.value], columns, k) for k, v in node.value]
    return {"name": ".".join(map(str, path)), "path": list(path), "shape": "named", "columns": columns,
            "movable": True, "rows": rows}


def _list(path: tuple, node: SequenceNode, data: list) -> dict:
    rows = [{"path": list(path + (i,)), "label": str(i + 1), "lines": list(yamltext.lines_of(n)),
             "cells": {VALUE: _cell(path + (i,), n, value)}} for i, (n, value) in enumerate(zip(node.value, data))]
    return {"name": ".".join(map(str, path)), "path": list(path), "shape": "list", "columns": [VALUE],
            "movable": True, "rows": rows}


def _scalars(name: str, path: tuple, pairs: list, data: dict) -> dict:
    rows = [{"path": list(path + (key,)), "label": str(key), "lines": list(yamltext.lines_of(n)),
             "cells": {VALUE: _cell(path + (key,), n, data[key])}} for key, n in pairs]
    return {"name": name, "path": list(path), "shape": "values", "columns": [VALUE], "movable": False,
            "rows": rows}


def _columns(items: Any) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        if isinstance(item, dict):
            seen.update(dict.fromkeys(str(k) for k in item))
    return list(seen)


def _row(path: tuple, label: str, node: Node, item: Any, columns: list[str], key: Node | None = None) -> dict:
    first, last = yamltext.lines_of(node)
    if key is not None:
        first = key.start_mark.line + 1
    cells = {}
    for column in columns:
        value_node = yamltext.child(node, column)
        if value_node is not None:
            cells[column] = _cell(path + (column,), value_node, item[column])
    return {"path": list(path), "label": label, "lines": [first, last], "cells": cells}


def _cell(path: tuple, node: Node, value: Any) -> dict:
    typed = not isinstance(value, str)
    return {"path": list(path), "text": yamltext.flow(value) if typed else value, "yaml": typed,
            "lines": list(yamltext.lines_of(node))}


def cell_of(sections: list[dict], line: int) -> tuple[list | None, list | None]:
    """(the cell's path, the row's path) a problem at `line` belongs to: the narrowest cell whose
    lines hold it, else the row; (None, None) outside every grid."""
    best, row_at = None, None
    for section in sections:
        for row in section["rows"]:
            if not row["lines"][0] <= line <= row["lines"][1]:
                continue
            if row_at is None or row["lines"][1] - row["lines"][0] < row_at[1]:
                row_at = (row["path"], row["lines"][1] - row["lines"][0])
            for cell in row["cells"].values():
                a, b = cell["lines"]
                if a <= line <= b and (best is None or b - a < best[1]):
                    best = (cell["path"], b - a)
    return (best[0] if best else None), (row_at[0] if row_at else None)
