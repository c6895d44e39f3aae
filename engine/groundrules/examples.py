"""Inline examples: every table carries its own tests, run by `groundrules test`.

A compiled table exposes `check_examples()` yielding ExampleResults; a table kind that can
carry examples reports each item that has none as a failure too. Test ids are
`<table-id>:<row-or-item>:<n>`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .tables import location

if TYPE_CHECKING:
    from .rulebook import Rulebook


@dataclass(frozen=True)
class ExampleResult:
    id: str
    ok: bool
    message: str = ""
    path: tuple = ()


@dataclass(frozen=True)
class Outcome:
    id: str
    ok: bool
    where: str
    message: str


def run_all(book: "Rulebook") -> list[Outcome]:
    out: list[Outcome] = []
    for table_id in sorted(book.tables):
        table = book.tables[table_id]
        check = getattr(table, "check_examples", None)
        if check is None:
            continue
        source = book.sources[table_id]
        for result in check():
            line, col, _ = location(source, result.path)
            out.append(Outcome(result.id, result.ok, f"{source.file}:{line}:{col}", result.message))
    return out
