"""`groundrules case add`: a value joins a decision table's corpus (tests/cases/<table>/<name>.json)
the way the corpus files are written, after the checks a corpus case must pass: the table reads
its corpus, the value satisfies the table's input contract, and no case of that name exists."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..core import codes
from ..core.decide import DecisionTable
from ..core.errors import GroundrulesError, closest, echo
from ..core.messages import refused
from ..core.rulebook import Rulebook
from ..core.schema_check import contract

NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")


def add_case(book: Rulebook, cases: Path, table_id: str, value: Any, name: str) -> tuple[Path, list[str]]:
    """Write `value` as case `name` of `table_id`; (its path, the rows it fires)."""
    table = book.tables.get(table_id)
    if not isinstance(table, DecisionTable):
        known = sorted(t for t, v in book.tables.items() if isinstance(v, DecisionTable))
        close = closest(table_id, known)
        raise refused(book, codes.CASE_REFUSED, "case.no_table_close" if close else "case.no_table",
                      table=echo(table_id), closest=close)
    if not NAME.fullmatch(name):
        raise refused(book, codes.CASE_REFUSED, "case.name", name=echo(name))
    if table.input:
        problem = contract(book.schemas, table.input).located(value)
        if problem is not None:
            raise refused(book, codes.CASE_REFUSED, "case.contract", contract=table.input, problem=str(problem))
    path = cases / table_id / f"{name}.json"
    if path.exists():
        raise refused(book, codes.CASE_REFUSED, "case.exists", table=table_id, name=name)
    try:
        fired = [f.row.id for f in table.evaluate(value).fired]
    except GroundrulesError as exc:       # a table that needs now: the case is still a case
        fired = [f"(not evaluated here: {exc.code})"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path, fired
