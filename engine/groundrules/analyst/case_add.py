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
from ..core.errors import GroundrulesError, did_you_mean
from ..core.rulebook import Rulebook
from ..core.schema_check import contract

NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")


def add_case(book: Rulebook, cases: Path, table_id: str, value: Any, name: str) -> tuple[Path, list[str]]:
    """Write `value` as case `name` of `table_id`; (its path, the rows it fires)."""
    table = book.tables.get(table_id)
    if not isinstance(table, DecisionTable):
        known = sorted(t for t, v in book.tables.items() if isinstance(v, DecisionTable))
        hint = did_you_mean(table_id, known)
        raise GroundrulesError(codes.CASE_REFUSED, f"no decision table '{table_id}'" + (f" ({hint})" if hint else ""))
    if not NAME.fullmatch(name):
        raise GroundrulesError(codes.CASE_REFUSED, f"case name '{name}': lower-case letters, digits, '.', '_' and '-'")
    if table.input:
        problem = contract(book.schemas, table.input).located(value)
        if problem is not None:
            raise GroundrulesError(codes.CASE_REFUSED, f"the value breaks {table.input}: {problem}")
    path = cases / table_id / f"{name}.json"
    if path.exists():
        raise GroundrulesError(codes.CASE_REFUSED, f"tests/cases/{table_id}/{name}.json exists already")
    try:
        fired = [f.row.id for f in table.evaluate(value).fired]
    except GroundrulesError as exc:       # a table that needs now: the case is still a case
        fired = [f"(not evaluated here: {exc.code})"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return path, fired
