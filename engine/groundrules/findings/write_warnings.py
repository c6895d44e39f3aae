"""The warnings a write answers with (rules/findings_warnings.yaml), over the facts its tool
returns; log_finding's `needs` reads the same rows."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:                      # rulebook imports this part's compilers
    from ..core.rulebook import Rulebook
    from .independence import Judge
    from .call import Call

WARNINGS_TABLE = "findings_warnings"


class WarningRows:
    """The warnings table's fired rows for `facts`, evaluated once per call: a tool's `needs` and
    the ledger's warnings ask for the same facts, and get the same rows without a second pass."""

    def __init__(self, book: Rulebook, judge: Judge):
        self._book = book
        self._judge = judge
        self._last: tuple | None = None

    def __call__(self, facts: dict | None) -> tuple:
        if facts is None:
            return ()
        if self._last is None or self._last[0] is not facts:
            facts["evidence"] = self._judge(facts.get("evidence", []))
            self._last = (facts, self._book.table(WARNINGS_TABLE).evaluate(facts).fired)
        return self._last[1]


def needs(call: Call, facts: dict) -> list[str]:
    """What the warnings table says a new finding still lacks (log_finding's `needs`)."""
    return [f.outputs["need"] for f in call.warning_rows(facts) if f.outputs.get("need")]
