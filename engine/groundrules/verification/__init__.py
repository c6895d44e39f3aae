"""Part 3: verifying a model's extraction candidate (docs/spec/verification.md).

`verify(request, schema, candidate)` decides mechanically whether a candidate may be used and,
if not, returns the exact error the seed shows; `repair_loop` feeds the issues back to the host's
model. Bad arguments (request, schema, rulebook) raise GroundrulesError INVALID_ARGUMENT; anything
wrong with the candidate is a verification result, never an exception.

The report: {"ok", "data": <the seed's result object> | null, "error": {code, stage, message,
issues, partialResult?} | null, "repairable", "warnings": [issue], "grounding": [{path, sourceId,
quote, start, end}]}. Hosts over MCP or the CLI reach it as the `verify_extraction` tool.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core import rulebook as rulebooks
from ..core.errors import GroundrulesError
from ..core.messages import refused
if TYPE_CHECKING:                      # rulebook imports this part's compilers
    from ..results import Repair, VerifyReport
    from ..core.rulebook import Rulebook
from .checks import Tables, run
from .instances import INVALID_ARGUMENT, resolve
from .repair import Propose, loop
from .selection import read_request

TABLES = {"catalogue": "verify.issues", "phrases": "verify.prohibition_phrases",
          "heuristics": "verify.intent_heuristics", "derivations": "verify.value_derivations"}


def verify(request: Any, schema: Any, candidate: Any, rulebook: Rulebook | None = None) -> "VerifyReport":
    """The verification report of `candidate` for `request` under `schema` (a JSON Schema object
    or the name of an instance in rules/instances/)."""
    tables, book = _tables(rulebook)
    ext = resolve(schema, book)
    return run(read_request(request, ext, book), ext, candidate, tables)


def draft_candidate(request: Any, schema: Any, rulebook: Rulebook | None = None) -> dict:
    """The candidate a model fills in for `request` under `schema` (drafts.py): the intent block,
    a fieldResult per selected field and a description check per applicable description."""
    from .drafts import candidate_draft
    _, book = _tables(rulebook)
    ext = resolve(schema, book)
    return candidate_draft(read_request(request, ext, book), ext)


def repair_loop(request: Any, schema: Any, propose: Propose, max_attempts: int = 3,
                rulebook: Rulebook | None = None) -> "Repair":
    """Call `propose(request, schema, feedback_issues) -> candidate` until a candidate verifies, an
    error is not repairable, or `max_attempts` attempts were made; every attempt is in `history`."""
    tables, book = _tables(rulebook)
    if not callable(propose):
        raise refused(book, INVALID_ARGUMENT, "verify.propose", field="propose")
    if type(max_attempts) is not int or max_attempts < 1:
        raise refused(book, INVALID_ARGUMENT, "verify.max_attempts", field="max_attempts")
    ext = resolve(schema, book)
    req = read_request(request, ext, book)
    return loop(request, schema, req, ext, propose, max_attempts, tables)


def _tables(rulebook: Any) -> tuple[Tables, Rulebook]:
    if rulebook is not None and not isinstance(rulebook, rulebooks.Rulebook):
        raise refused(rulebooks.default(), INVALID_ARGUMENT, "verify.rulebook", field="rulebook")
    book = rulebook or rulebooks.default()
    found = {}
    for name, table_id in TABLES.items():
        if table_id not in book.tables:
            raise refused(book, INVALID_ARGUMENT, "verify.rulebook_table", field="rulebook", table=table_id)
        found[name] = book.table(table_id)
    locks = book.memoized("verify.locks", lambda: _locks(book, found["derivations"]))
    return Tables(schemas=book.schemas, locks=locks, **found), book


def _locks(book: Rulebook, derivations: Any) -> dict:
    """The patterns of every lock table the derivations read through, by table id."""
    locks = {}
    for table_id in derivations.lock_tables():
        if table_id not in book.tables:
            raise refused(book, INVALID_ARGUMENT, "verify.rulebook_lock_table", field="rulebook", table=table_id,
                          by=TABLES["derivations"])
        locks[table_id] = book.table(table_id).patterns
    return locks


__all__ = ["draft_candidate", "repair_loop", "verify"]
