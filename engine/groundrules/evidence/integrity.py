"""One record's integrity against the records before it: the one check the fold (index.py) and the
ledger's append path (ledger.py) both run, so a record the ledger stores is a record the fold takes.

No earlier record answers to one of the record's names (records.names); an excerpt (the seed's
E07: a message with a locator) quotes its earlier message exactly; a derived record names earlier
records. A lock record's own checks (its source, its quote, the engine's lock it names) are
locking.accept's. `admit` runs them all, and a record that breaks several is refused with the
one the refusal catalogue's precedence puts first, so the answer never depends on which path ran
which check first. Where a refusal points is the caller's (`name_at`): the fold names the record,
the ledger the field that holds the name.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

from ..core import codes
from ..core.errors import GroundrulesError
from . import records as rec

if TYPE_CHECKING:
    from .refusals import Refuses


class Earlier(Protocol):
    """What the check reads of the records before this one."""

    def answers(self, name: str) -> bool:
        """Does an earlier record answer to `name` (as record id, message id or lock id)?"""

    def source_text(self, sid: str) -> Any:
        """The raw text of the earlier source that answers to `sid`, or None when none does."""


def check(record: dict, earlier: Earlier, refusals: Refuses, at: str, name_at: Callable[[str], str]) -> None:
    """Raise the first refusal of `record` (at `at`) against the records before it, if any."""
    for name, key in rec.names(record):
        if earlier.answers(name):
            raise refusals.error(codes.DUPLICATE_ID, id=name, at=name_at(key))
    loc = rec.excerpt(record)
    if loc is not None:
        text = earlier.source_text(loc["message_id"])
        if text is not None and rec.span_problem(text, loc["start"], loc["end"], record["content"]) == "mismatch":
            raise refusals.error(codes.QUOTE_MISMATCH, at=f"{at}.locator", message_id=loc["message_id"],
                                 start=loc["start"], end=loc["end"])
    for n, ref in enumerate(rec.derived_from(record)):
        if not earlier.answers(ref):
            raise refusals.error(codes.UNKNOWN_EVIDENCE, ref=ref, at=f"{at}.derived_from[{n}]")


def admit(record: dict, earlier: Earlier, refusals: Refuses, at: str, name_at: Callable[[str], str],
          accept: Callable[[dict], dict] | None = None) -> dict:
    """`record` as admitted (a lock record: as `accept` completes it from the engine's lock it
    names), or, when it breaks rules, the refusal of the one the catalogue's precedence lists
    first: its integrity (check), a lock's acceptance, and the name the engine's lock gives it."""
    broken: list[GroundrulesError] = []
    _met(broken, lambda: check(record, earlier, refusals, at, name_at))
    admitted = record
    if accept is not None:
        try:
            admitted = accept(record)
        except GroundrulesError as refusal:
            broken.append(refusal)
        else:
            if rec.lock_id(admitted) != rec.lock_id(record):     # named by the engine: a name of its own
                _met(broken, lambda: check(admitted, earlier, refusals, at, name_at))
    if broken:
        raise refusals.first(broken)
    return admitted


def _met(broken: list, run: Callable[[], None]) -> None:
    try:
        run()
    except GroundrulesError as refusal:
        broken.append(refusal)
