"""The `limits` kind (rules/limits.yaml): the caps an operator may tune, compiled once.

Read by the stdio and HTTP transports (message size, nesting, digits, ids), the commands that read a file or
stdin (input bytes), the checks that run a caller-supplied pattern (its time budget and length), and the compilers
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
# the tables' own patterns' budget, and a caller pattern's length, when the rulebook has no limits
# table (a load of some of its files) or one from before the cap (a `diff --base` revision)
DEFAULT_TABLE_BUDGET_MS = 50
DEFAULT_PATTERN_CHARS = 1000
# a batch's chunk and how many may be under way per worker, for tables from before the `batch` caps
DEFAULT_CHUNK_ROWS = 500
DEFAULT_CHUNKS_IN_FLIGHT = 3


@dataclass(frozen=True)
class Limits:
    kind: str
    id: str
    file: str
    wire: dict
    input_bytes: int
    pattern_budget_ms: int
    table_budget_ms: int
    pattern_max_chars: int
    chunk_rows: int = DEFAULT_CHUNK_ROWS
    chunks_in_flight: int = DEFAULT_CHUNKS_IN_FLIGHT


def compile_limits(data: dict, ctx: CompileContext) -> Limits:
    # the metaschema requires table_budget_ms and max_chars; tables from before them (a `diff --base`
    # revision) hold none
    patterns, batch = data["patterns"], data.get("batch", {})
    return Limits("limits", data["id"], ctx.source.file, dict(data["wire"]), data["inputs"]["input_bytes"],
                  patterns["budget_ms"], patterns.get("table_budget_ms", DEFAULT_TABLE_BUDGET_MS),
                  patterns.get("max_chars", DEFAULT_PATTERN_CHARS),
                  batch.get("chunk_rows", DEFAULT_CHUNK_ROWS), batch.get("chunks_in_flight", DEFAULT_CHUNKS_IN_FLIGHT))


def pattern_max_chars(book) -> int:
    """How long a caller's pattern may be under this rulebook."""
    table = of(book)
    return table.pattern_max_chars if table is not None else DEFAULT_PATTERN_CHARS


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
