"""From a row to a tool's arguments: a row that is the arguments object goes as it is; a column
mapping (`--map message.content=content`, `--set message.role=user`) builds them from the columns
of other layouts, such as a CSV with one `content` column. The row's key (`--key COLUMN`, else its
place in the input) is never part of the arguments."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..core import codes
from ..core.errors import refusal


@dataclass(frozen=True)
class Plan:
    """What one call per row is: the tool, the key column, and the mapping (empty: the row is the
    arguments). `maps` are (argument path, column) pairs; `sets` (argument path, JSON value)."""

    tool: str
    key: str | None = None
    maps: tuple[tuple[tuple[str, ...], str], ...] = ()
    sets: tuple[tuple[tuple[str, ...], Any], ...] = field(default=())
    text: str | None = None            # a column holding each row's arguments as JSON text


    @property
    def mapped(self) -> bool:
        return bool(self.maps or self.sets)

    def columns(self) -> list[str]:
        """The columns the mapping reads (and the key's), in the order given."""
        named = [self.key, self.text] + [c for _, c in self.maps]
        return list(dict.fromkeys(c for c in named if c))


class RowError(ValueError):
    """A row that cannot become arguments: its answer is an error row (INVALID_ROW, worded by the
    role table's message `name`), and the run goes on."""

    def __init__(self, name: str, **params: Any):
        super().__init__(name)
        self.name, self.params = name, params


def parse_map(spec: str) -> tuple[tuple[str, ...], str]:
    """`message.content=content` -> (("message", "content"), "content")."""
    target, sep, column = spec.partition("=")
    if not sep or not target or not column or any(not p for p in target.split(".")):
        raise refusal(codes.USAGE, "usage.batch_map", spec=spec)
    return tuple(target.split(".")), column


def parse_set(spec: str) -> tuple[tuple[str, ...], Any]:
    """`message.role=user` -> (("message", "role"), "user"); a value that reads as JSON is taken
    as JSON (`--set report=true`), anything else as text."""
    target, sep, text = spec.partition("=")
    if not sep or not target or any(not p for p in target.split(".")):
        raise refusal(codes.USAGE, "usage.batch_set", spec=spec)
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    return tuple(target.split(".")), value


def arguments(plan: Plan, row: Any) -> Any:
    """The tool's arguments for one row (a dict of columns). Unmapped, the row without its key
    column; mapped, an object built from the maps and sets, in the order given. A mapped column
    the row lacks is a RowError. With `text`, that column's JSON text is the arguments."""
    if plan.text:
        if not isinstance(row, dict) or plan.text not in row:
            raise RowError("row_no_column", column=plan.text)
        value = row[plan.text]
        return decode(value.encode("utf-8") if isinstance(value, str) else value) if isinstance(value, (str, bytes)) \
            else value
    if not plan.mapped:
        if plan.key and isinstance(row, dict) and plan.key in row:
            return {k: v for k, v in row.items() if k != plan.key}
        return row
    if not isinstance(row, dict):
        raise RowError("row_not_object")
    out: dict = {}
    for path, column in plan.maps:
        if column not in row:
            raise RowError("row_no_column", column=column)
        _put(out, path, row[column])
    for path, value in plan.sets:
        _put(out, path, value)
    return out


def _put(target: dict, path: tuple[str, ...], value: Any) -> None:
    for part in path[:-1]:
        nxt = target.get(part)
        if not isinstance(nxt, dict):
            nxt = target[part] = {}
        target = nxt
    target[path[-1]] = value


def _finite(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:20]} is too large")
    return number


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 4000:
        raise ValueError("a number has too many digits")
    return int(text)


_DECODER = json.JSONDecoder(parse_float=_finite, parse_constant=_no_constant, parse_int=_bounded_int)


def decode(raw: bytes | bytearray) -> Any:
    """One row's JSON (a JSONL line, a column's text), or RowError row_not_json saying what is wrong."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RowError("row_not_json", problem=f"not UTF-8 (byte {exc.start})") from None
    try:
        return _DECODER.decode(text.strip())
    except json.JSONDecodeError as exc:
        raise RowError("row_not_json", problem=f"{exc.msg} (column {exc.colno})") from None
    except ValueError as exc:
        raise RowError("row_not_json", problem=str(exc)) from None
    except RecursionError:
        raise RowError("row_not_json", problem="nested too deeply") from None
