"""Who wrote a ledger record, and whether it may count (rules/provenance.yaml).

On append, a record is stamped with its writer (the authenticated caller, never an argument), its
signature (if any) is verified against the operator's trust store, and the provenance table's
verdict refuses what the writer's role may not append. In the fold of a ledger, a record whose
verdict does not decide (an agent's relay of a user's words, a record stored before writers were
stamped) is set aside like a record that does not fit the scope asked for: it is kept and shown,
and decides no slot.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core import codes
from ..provenance import table as provenance
from ..provenance.trust import EMPTY
from . import records as rec

if TYPE_CHECKING:
    from ..core.rulebook import Rulebook
    from ..provenance.table import ProvenanceTable, Verdict
    from ..provenance.trust import TrustStore
    from .index import LedgerIndex
    from .refusals import RefusalCatalogue

LOCAL_HOST = {"principal": "local", "role": "host", "auth": {"method": "local"}}
# what a record stored before records named their writer reads as (rules/provenance.yaml unknown_writer)
UNKNOWN = {"principal": "unknown", "role": provenance.UNKNOWN_ROLE, "auth": {"method": "unknown"}}
SIGNATURE_CODES = {"invalid": codes.SIGNATURE_INVALID, "unknown_signer": codes.SIGNER_UNKNOWN}


def stamp(writer: dict) -> dict:
    """The stamp a record keeps: principal, role and how it was authenticated (nothing else the
    caller object might carry)."""
    return {"principal": writer["principal"], "role": writer["role"], "auth": dict(writer["auth"])}


def admit(raw: dict, record: dict, writer: dict, trust: TrustStore | None, book: Rulebook,
          refusals: RefusalCatalogue, at: str) -> dict:
    """The writer `record` is stored with, once its signature (of `raw`, the record as given) is
    verified and the provenance table lets the writer's role append its class; refused otherwise."""
    out = stamp(writer)
    table = provenance.of(book)
    cls = None if table is None or rec.is_lock(record) else table.class_of(record)
    if "signature" in raw:
        from ..provenance import signatures           # joserfc, imported by the appends that carry a signature
        if rec.is_lock(record):
            raise refusals.error(codes.PAYLOAD_INVALID, problem=f"{at}: a lock is the engine's reading of its source; "
                                 "sign the source instead")
        try:
            signer = signatures.verify(raw, trust or EMPTY)
        except signatures.SignatureRefused as exc:
            raise refusals.error(SIGNATURE_CODES[exc.reason], at=at) from None
        if table is not None and cls is not None:
            if not signatures.vouches(signer, record_class=cls):
                raise refusals.error(codes.SIGNER_NOT_ALLOWED, at=at, signer=signer.name, label=_label(table, cls),
                                     **{"class": cls})
        out["signer"] = signer.name
    if table is not None and cls is not None:
        verdict = table.judge(record, out, cls)
        if verdict.effect == provenance.REFUSED:
            raise refusals.error(codes.PROVENANCE_REFUSED, at=at, role=out["role"], label=verdict.label,
                                 **{"class": verdict.cls})
    return out


def _label(table: ProvenanceTable, cls: str) -> str:
    return table.classes.codes.get(cls, {}).get("label", cls)


def weigh(index: LedgerIndex, table: ProvenanceTable) -> dict[str, Verdict]:
    """Each record's verdict by its writer: a lock is judged as its source, by its source's writer."""
    out = {}
    for rid, entry in index.entries.items():
        source = entry.message if rec.is_lock(entry.record) and entry.message is not None else entry.record
        out[rid] = table.judge(source, source.get("writer"))
    return out


def set_aside(table: ProvenanceTable, verdicts: dict[str, Verdict], index: LedgerIndex) -> dict[str, dict]:
    """{record id: the fold's set-aside verdict} of every record whose verdict does not decide."""
    out = {}
    for rid, verdict in verdicts.items():
        if not verdict.decides:
            entry = index.entries[rid]
            source = entry.message if rec.is_lock(entry.record) and entry.message is not None else entry.record
            writer: Any = source.get("writer") or {}
            detail = table.message("set_aside", label=verdict.label, verdict_label=verdict.verdict_label,
                                   principal=writer.get("principal", "?"), role=writer.get("role", provenance.UNKNOWN_ROLE))
            out[rid] = {"verdict": verdict.verdict, "label": verdict.verdict_label, "decides": False,
                        "detail": detail, "by_row": True}
    return out
