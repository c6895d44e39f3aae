"""One record's integrity against the records before it: the one check the fold (index.py) and the
ledger's append path (ledger.py) both run, so a record the ledger stores is a record the fold takes.

No earlier record answers to one of the record's names (records.names); an excerpt (the seed's
E07: a message with a locator) quotes its earlier message exactly; a derived record names earlier
records. A lock record's own checks (its source, its quote, the engine's lock it names) are
locking.accept's, run before this one. Where a refusal points is the caller's (`name_at`): the
fold names the record, the ledger the field that holds the name.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

from . import records as rec

if TYPE_CHECKING:
    from .refusals import RefusalCatalogue


class Earlier(Protocol):
    """What the check reads of the records before this one."""

    def answers(self, name: str) -> bool:
        """Does an earlier record answer to `name` (as record id, message id or lock id)?"""

    def source_text(self, sid: str) -> Any:
        """The raw text of the earlier source that answers to `sid`, or None when none does."""


def check(record: dict, earlier: Earlier, refusals: RefusalCatalogue, at: str, name_at: Callable[[str], str]) -> None:
    """Raise the first refusal of `record` (at `at`) against the records before it, if any."""
    for name, key in rec.names(record):
        if earlier.answers(name):
            raise refusals.error("DUPLICATE_ID", id=name, at=name_at(key))
    loc = rec.excerpt(record)
    if loc is not None:
        text = earlier.source_text(loc["message_id"])
        if text is not None and rec.span_problem(text, loc["start"], loc["end"], record["content"]) == "mismatch":
            raise refusals.error("QUOTE_MISMATCH", at=f"{at}.locator", message_id=loc["message_id"],
                                 start=loc["start"], end=loc["end"])
    for n, ref in enumerate(rec.derived_from(record)):
        if not earlier.answers(ref):
            raise refusals.error("UNKNOWN_EVIDENCE", ref=ref, at=f"{at}.derived_from[{n}]")
