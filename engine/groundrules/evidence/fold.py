"""`fold(payload)`: the public entry of the evidence part (docs/spec/evidence.md).

payload = {now, scope_context?, records, interpretations} (schemas/evidence.v1.schema.json). The
payload is checked against the contract, the ledger index is built and checked (every raw source
locked by the engine), every interpretation is checked against it; asked for a scope_context, each
record's applicability and version are weighed against it (scope.py); then the merge policy folds
the events. Returns {evidence, events, state};
refuses with a GroundrulesError whose code is in rules/evidence_refusals.yaml, and never raises
anything else.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core import codes, rulebook as rulebooks
from ..core.canonical import detached
from ..core.errors import GroundrulesError
from ..core import messages as catalogues
from ..core.messages import refused, worded
if TYPE_CHECKING:                      # rulebook imports this part's compilers
    from ..results import Fold
    from ..core.rulebook import Rulebook
from .catalogue import EventCatalogue
from .contract import first_problem
from .core import Folder
from .index import LedgerIndex, Locker
from .interpret import NO_VALUE, Checked, Checker
from .policy import MergePolicy
from . import scope as scoping
from . import writers
from ..provenance import table as provenance
from .refusals import RefusalCatalogue
from ..core.dates import parse_instant as parse

def tables(book: Rulebook) -> tuple[EventCatalogue, MergePolicy, RefusalCatalogue]:
    """The one event catalogue, merge policy and refusal catalogue of a rulebook."""
    found = []
    for kind in ("event_catalogue", "merge_policy", "refusal_catalogue"):
        of_kind = book.of_kind(kind)
        if len(of_kind) != 1:
            exc = refused(book, codes.RULEBOOK_INCOMPLETE, "rulebook.one_table", kind=kind, count=len(of_kind))
            exc.details["kind"] = kind
            raise exc
        found.append(of_kind[0])
    return tuple(found)


def fold(payload: Any, rulebook: Rulebook | None = None, *, redaction_key: bytes | None = None,
         weigh_writers: bool = False, pending_locks: bool = False) -> "Fold":
    """Current slot state per scope, with the evidence and events behind it; or a GroundrulesError.
    `redaction_key` lets a value be checked against a redacted lock's keyed digest. `weigh_writers`
    (a ledger's fold, whose records carry the writer the ledger stamped): a record whose writer
    rules/provenance.yaml does not let decide is set aside, and state.provenance lists it.
    `pending_locks` (a ledger's fold): a lock no interpretation has disposed of yet (a new
    message's, a redacted record's) is listed in `state.pending` with the slots it could decide,
    instead of failing the whole fold with LOCK_DROPPED."""
    book = rulebook or rulebooks.default()
    catalogue, policy, refusals = tables(book)
    try:
        return _fold(payload, book, catalogue, policy, refusals, redaction_key, weigh_writers, pending_locks)
    except GroundrulesError as exc:
        if exc.code == codes.LOCK_TIMEOUT and exc.code in refusals.codes:     # the scanner's, worded by the table
            raise refusals.error(codes.LOCK_TIMEOUT, **exc.details) from None
        raise worded(exc, catalogues.of(book)) from None      # one made by name, in the book's language
    except RecursionError:
        raise refusals.error(codes.PAYLOAD_INVALID, problem="nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - a host must get a code, never a traceback
        raise refusals.error(codes.FOLD_INTERNAL, problem=type(exc).__name__) from None


def _fold(payload: Any, book: Rulebook, catalogue: EventCatalogue, policy: MergePolicy,
          refusals: RefusalCatalogue, redaction_key: bytes | None, weigh_writers: bool,
          pending_locks: bool = False) -> "Fold":
    for shapes in book.of_kind("shape_map"):       # the seed's own shapes, mapped by rules/seed_shapes.yaml
        payload = shapes.translate(payload)
    problem = first_problem(book.schemas, catalogue.records, payload)
    if problem is not None:
        raise refusals.error(codes.PAYLOAD_INVALID, problem=problem)
    now = parse(payload["now"])
    if now is None:
        raise refusals.error(codes.PAYLOAD_INVALID, problem="now: not a real date and time")
    index = LedgerIndex(payload["records"], policy, refusals, now, Locker(catalogue, book, redaction_key))
    checked = Checker(index, catalogue, policy, redaction_key, pending_locks=pending_locks).check(
        payload["interpretations"])
    context = _context(payload, refusals)
    fits = None if context is None else scoping.weigh(index, policy, context)
    table = provenance.of(book) if weigh_writers else None
    verdicts = None if table is None else writers.weigh(index, table)
    aside = {} if table is None or verdicts is None else writers.set_aside(table, verdicts, index)
    deciding = fits
    if aside:                         # the writer's verdict first: a relay decides no context
        deciding = dict(fits or {rid: {"decides": True} for rid in index.entries}, **aside)
    folder = Folder(index, policy, deciding)
    folder.field_pass(checked.events, folder.scope_pass(checked.events))
    scopes = folder.finish()
    for event in checked.events:
        for rid in event.evidence:
            index.entries[rid].cited_by.append(event.id)
    state = {"now": payload["now"], "current_scope": folder.current, "scopes": scopes,
             "clarifications": list(folder.clarifications.values()), "locks": _locks(index, checked)}
    if checked.pending:
        state["pending"] = _pending(index, policy, checked)
    if folder.activity:
        state["activity"] = folder.activity
    if context is not None and fits is not None:
        state["scope_context"] = _fit_report(context, fits, checked)
    if verdicts is not None:
        state["provenance"] = {"set_aside": _aside_report(aside, verdicts, index, checked)}
    interpreters = {i["id"]: i["writer"] for i in payload["interpretations"] if "writer" in i}
    return {"evidence": _evidence(index, catalogue, verdicts), "events": _events(checked, folder, interpreters),
            "state": state}


def _context(payload: dict, refusals: RefusalCatalogue) -> dict | None:
    """The scope_context asked for, as dotted keys; a key given both nested and dotted is refused,
    since which value wins would depend on the order of the keys."""
    if "scope_context" not in payload:
        return None
    flat, twice = scoping.flatten(payload["scope_context"])
    if twice:
        raise refusals.error(codes.PAYLOAD_INVALID, problem=f"scope_context: {', '.join(twice)} given twice "
                             "(nested and dotted)")
    return flat


def _fit_report(context: dict, fits: dict, checked: Checked) -> dict:
    """Which records were set aside for the context and why, and which fit only on conditions it
    does not name, each with the field events citing it."""
    citing: dict = {}
    for ev in checked.events:
        if ev.layer == "field":
            for rid in ev.evidence:
                citing.setdefault(rid, []).append(ev.id)
    report: dict = {"given": dict(context), "set_aside": [], "conditional": []}
    for rid, fit in fits.items():
        where = "set_aside" if not fit["decides"] else "conditional" if fit["by_row"] else None
        if where:
            report[where].append({"record": rid, "verdict": fit["verdict"], "label": fit["label"],
                                  "detail": fit["detail"], "events": citing.get(rid, [])})
    return report


def _aside_report(aside: dict, verdicts: dict, index: LedgerIndex, checked: Checked) -> list:
    """The records set aside by their writer, each with its class, verdict, writer and the field
    events that cited it."""
    citing: dict = {}
    for ev in checked.events:
        if ev.layer == "field":
            for rid in ev.evidence:
                citing.setdefault(rid, []).append(ev.id)
    out = []
    for rid, fit in aside.items():
        v = verdicts[rid]
        entry = index.entries[rid]
        source = entry.message if entry.record["type"] == "lock" and entry.message is not None else entry.record
        out.append({"record": rid, "class": v.cls, "verdict": v.verdict, "label": fit["label"],
                    "writer": detached(source["writer"]) if "writer" in source else None,
                    "detail": fit["detail"], "events": citing.get(rid, [])})
    return out


def _evidence(index: LedgerIndex, catalogue: EventCatalogue, verdicts: dict | None) -> list:
    out = []
    for rid, entry in index.entries.items():
        record = entry.record
        facts = {"record": record, "message": entry.message} if entry.message else {"record": record}
        item = {"id": rid, "type": record["type"], "source": entry.source,
                "raw": catalogue.records[record["type"]].is_raw(facts), "validity": index.validity(rid),
                "cited_by": list(entry.cited_by), "record": detached(record)}
        if verdicts is not None:
            item["provenance"] = verdicts[rid].as_json()
        out.append(item)
    return out


def _events(checked: Checked, folder: Folder, interpreters: dict) -> list:
    out = []
    for ev in checked.events:
        result = folder.results[ev.id]
        item = {"id": ev.id, "interpretation": ev.interpretation, "type": ev.type, "layer": ev.layer,
                "slot": ev.slot, "value": None if ev.value is NO_VALUE else ev.value, "scope": result.scope}
        if ev.interpretation in interpreters:
            item["interpreted_by"] = detached(interpreters[ev.interpretation])
        if ev.readings is not None:
            item["readings"] = [dict(r) for r in ev.readings]
        if ev.id in folder.bindings:
            item["bound"] = dict(folder.bindings[ev.id])
        if ev.turn is not None:
            item["turn"] = ev.turn
        item.update(ev.activity)
        item.update(evidence=[dict(c) for c in ev.citations], outcome=result.outcome, rule=result.rule)
        out.append(item)
    return out


def _pending(index: LedgerIndex, policy: MergePolicy, checked: Checked) -> list:
    """Each lock no interpretation has disposed of yet, why, and the slots it could decide (those
    whose merge policy takes its kind): their state waits on an interpretation that disposes of it."""
    out = []
    for rid in checked.pending:
        entry = index.entries[rid]
        lock = entry.record["lock"]
        redacted = "redaction" in entry.record or bool(entry.message and "redaction" in entry.message)
        out.append({"lock": lock["id"], "record": rid, "kind": lock["kind"],
                    "why": "redacted" if redacted else "no_disposition",
                    "slots": [sid for sid, slot in policy.slots.items() if lock["kind"] in slot.lock_kinds]})
    return out


def _locks(index: LedgerIndex, checked: Checked) -> list:
    """Every lock with its disposition, and the field events of its slot that rest on it."""
    used_by: dict = {}
    for ev in checked.events:
        for rid in ev.locks:
            if ev.layer == "field" and checked.dispositions.get(rid, {}).get("slot") == ev.slot:
                used_by.setdefault(rid, []).append(ev.id)
    out = []
    for rid in index.lock_records():
        lock = index.entries[rid].record["lock"]
        disposition = dict(checked.dispositions[rid]) if rid in checked.dispositions else {"pending": True}
        out.append({"lock": lock["id"], "record": rid, "kind": lock["kind"], "valid": lock["valid"],
                    "disposition": disposition, "used_by": used_by.get(rid, [])})
    return out
