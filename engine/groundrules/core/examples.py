"""Inline examples: every table carries its own tests, run by `groundrules test`.

A compiled table exposes `check_examples()` yielding ExampleResults; a table kind that can
carry examples reports each item that has none as a failure too. Test ids are
`<table-id>:<row-or-item>:<n>`. An acceptance table (analyst/acceptance.py) exposes `check_acceptance(book,
run)` instead: its checks call tools, so they run only when the caller gives `run`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from .tables import location
from .yamlsrc import undotted

if TYPE_CHECKING:
    from .rulebook import Rulebook


class ExampleResult(NamedTuple):
    id: str
    ok: bool
    message: str = ""
    path: tuple = ()
    code: str = "failing-example"    # what lint calls it when not ok ("missing-example": none written)
    example: tuple = ()              # the example's key path, when `path` points at the test that failed


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
            message = result.message
            if result.example:
                message += f" (the example: line {location(source, result.example)[0]})"
            out.append(Outcome(result.id, result.ok, source.file, line, col, message, result.code, key))
    return out


def failed_test(failure: dict | None) -> tuple[str, tuple]:
    """A failed condition (conditions.explain_failure) in one line, and the key path of the test
    that decided it: for a list operator, the test that failed on the item; for `any`, the first
    branch's. That test, not the example, is where a mistyped literal sits."""
    if not failure:
        return "", ()
    at = undotted(failure["at"])
    if failure.get("op") == "any" and "failed" in failure:
        parts = [failed_test(f) for f in failure["failed"] if f]
        return "none of these held: " + "; ".join(w for w, _ in parts), (parts[0][1] if parts else at)
    if failure.get("op") == "not":
        return "not: the condition inside held", at
    field, op = failure["field"], failure["op"]
    inner = failure.get("item") or (failure.get("items") or [None])[0]
    if op == "count" and "counted" in failure:
        return f"{field} count {_brief(failure.get('expected'))}: counted {failure['counted']}", at
    if inner and "failed" in inner:
        said, deeper = failed_test(inner["failed"])
        head = f"no item of {field} held" if op == "any" else f"item [{inner['index']}] of {field} failed"
        where = f" (item [{inner['index']}]: {said})" if op == "any" else f": {said}"
        return head + where, deeper or at
    if inner and "held" in inner:
        return f"item [{inner['index']}] of {field} held: {_brief(inner['held'])}", at
    return f"{field} {op} {_brief(failure.get('expected'))}: read {_brief(failure.get('read'))}", at


def _brief(value: Any, limit: int = 80) -> str:
    import json
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"
