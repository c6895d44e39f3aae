"""The `limits` kind (rules/limits.yaml): the caps an operator may tune, compiled once.

Read by the stdio and HTTP transports (message size, nesting, digits, ids), the commands that read a file or
stdin (input bytes), the checks that run a caller-supplied pattern (its time budget), and the compilers
of every other table: the budget of the tables' own patterns (`patterns.table_budget_ms`) is bound into
what they compile (CompileContext.table_budget_s), since a compiled condition is evaluated where no
rulebook reaches.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .tables import CompileContext

LIMITS_TABLE = "limits"
# the tables' own patterns' budget when the rulebook has no limits table (a load of some of its files)
DEFAULT_TABLE_BUDGET_MS = 50


@dataclass(frozen=True)
class Limits:
    kind: str
    id: str
    file: str
    wire: dict
    input_bytes: int
    pattern_budget_ms: int
    table_budget_ms: int


def compile_limits(data: dict, ctx: CompileContext) -> Limits:
    # the metaschema requires table_budget_ms; tables from before it (a `diff --base` revision) hold none
    return Limits("limits", data["id"], ctx.source.file, dict(data["wire"]), data["inputs"]["input_bytes"],
                  data["patterns"]["budget_ms"], data["patterns"].get("table_budget_ms", DEFAULT_TABLE_BUDGET_MS))


def is_limits_table(data: Any) -> bool:
    """Is this table data the rulebook's limits table (the one `of` answers)?"""
    return isinstance(data, dict) and data.get("kind") == "limits" and data.get("id") == LIMITS_TABLE


def table_budget_s(data: Any) -> float:
    """The seconds the tables' own patterns may run per search, as the limits table's data says,
    read before the other tables compile (a value its metaschema refuses fails the load anyway);
    without a limits table, the default."""
    patterns = data.get("patterns") if isinstance(data, dict) else None
    ms = patterns.get("table_budget_ms") if isinstance(patterns, dict) else None
    if ms.__class__ is not int or ms <= 0:
        ms = DEFAULT_TABLE_BUDGET_MS
    return ms / 1000


def of(book) -> Limits | None:
    """The rulebook's limits table, if it has one."""
    return book.tables.get(LIMITS_TABLE)
