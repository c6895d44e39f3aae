"""Inline examples: every table carries its own tests, run by `groundrules test`.

A compiled table exposes `check_examples()` yielding ExampleResults; a table kind that can
carry examples reports each item that has none as a failure too. Test ids are
`<table-id>:<row-or-item>:<n>`. An acceptance table (acceptance.py) exposes `check_acceptance(book,
run)` instead: its checks call tools, so they run only when the caller gives `run`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from .tables import location

if TYPE_CHECKING:
    from .rulebook import Rulebook


class ExampleResult(NamedTuple):
    id: str
    ok: bool
    message: str = ""
    path: tuple = ()
    code: str = "failing-example"    # what lint calls it when not ok ("missing-example": none written)


class Outcome(NamedTuple):
    id: str
    ok: bool
    file: str
    line: int
    column: int
    message: str
    code: str = "failing-example"
    key: str = ""

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


def run_all(book: "Rulebook", tables: list[str] | None = None,
            run: Callable[[str, dict], Any] | None = None) -> list[Outcome]:
    """Every example of every table (or of `tables`), located; with `run` (tool, arguments ->
    envelope), every acceptance check too."""
    out: list[Outcome] = []
    for table_id in sorted(book.tables) if tables is None else tables:
        table = book.tables[table_id]
        check = getattr(table, "check_examples", None)
        accept = getattr(table, "check_acceptance", None)
        if check is not None:
            results = check()
        elif accept is not None and run is not None:
            results = accept(book, run)
        else:
            continue
        source = book.sources[table_id]
        for result in results:
            line, col, key = location(source, result.path)
            out.append(Outcome(result.id, result.ok, source.file, line, col, result.message, result.code, key))
    return out
