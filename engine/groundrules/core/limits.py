"""The `limits` kind (rules/limits.yaml): the caps an operator may tune, compiled once.

Read by the stdio and HTTP transports (message size, nesting, digits, ids), the commands that read a file or
stdin (input bytes), and the checks that run a caller-supplied pattern (time budget).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tables import CompileContext

LIMITS_TABLE = "limits"


@dataclass(frozen=True)
class Limits:
    kind: str
    id: str
    file: str
    wire: dict
    input_bytes: int
    pattern_budget_ms: int


def compile_limits(data: dict, ctx: CompileContext) -> Limits:
    return Limits("limits", data["id"], ctx.source.file, dict(data["wire"]), data["inputs"]["input_bytes"],
                  data["patterns"]["budget_ms"])


def of(book) -> Limits | None:
    """The rulebook's limits table, if it has one."""
    return book.tables.get(LIMITS_TABLE)
