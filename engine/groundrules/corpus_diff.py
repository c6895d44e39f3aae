"""What an edit of the tables changes over the case corpus, for the analyst who made it.

Every decision table with a case folder (`tests/cases/<table-id>/*.json`) is evaluated on each case
with the rulebook before and after the edit; the cases whose fired rows or rendered outputs differ
are the change's effect, shown side by side.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import GroundrulesError
from .rulebook import Rulebook


@dataclass(frozen=True)
class CaseChange:
    table: str
    case: str
    before: Any       # list of fired rows with their outputs; None when the table did not exist
    after: Any


def outcome(table: Any, value: Any) -> Any:
    """What a decision table decides on one value: fired rows in order, each with its code's
    attributes (label, role) and its rendered outputs."""
    if table is None:
        return None
    try:
        decision = table.evaluate(value)
    except GroundrulesError as exc:
        return {"error": exc.code}
    except Exception as exc:  # noqa: BLE001 - a hostile case (a regex timeout, absurd nesting) is an outcome
        return {"error": type(exc).__name__}
    return [{"row": f.row.id, "code": f.code, **table.codes.get(f.code, {}), **f.outputs}
            for f in decision.fired]


def corpus_diff(before: Rulebook, after: Rulebook, cases: Path) -> list[CaseChange]:
    """Every case whose outcome differs between the two rulebooks, table by table, case by case."""
    changes = []
    for table_id in sorted(set(before.tables) | set(after.tables)):
        old, new = before.tables.get(table_id), after.tables.get(table_id)
        if not any(t is not None and t.kind == "decision_table" for t in (old, new)):
            continue
        for path in sorted((cases / table_id).glob("*.json")):
            try:
                value = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError, RecursionError):   # not a case: nothing to compare
                continue
            a, b = outcome(old, value), outcome(new, value)
            if a != b:
                changes.append(CaseChange(table_id, path.stem, a, b))
    return changes
