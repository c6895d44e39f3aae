"""What the evidence store files and gives back (store/evidence_rows.py): a record as a row, its
personal values sealed apart; a row as a record, its values opened or tombstoned; the stored
interpretations."""
from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING

from ..core import codes
from ..core.dates import parse_instant as parse
from ..store import sealing
from . import records as rec, writers
if TYPE_CHECKING:
    from ..store.protocols import EvidenceTx
    from .context import LedgerContext


def filed(ctx: LedgerContext, record: dict, project: str) -> dict:
    """A record as the store files it: its personal values apart from the rest (a redaction
    clears only them), sealed under a data key of their own (store/sealing.py: a redaction
    destroys it), their keyed digests, the names and keys the store finds it by."""
    personal = rec.personal(record, ctx.catalogue.records[record["type"]].personal)
    body = copy.deepcopy(record)
    box = rec.holder(body)
    for f in personal:
        box[f] = None
    subject = record.get("subject")
    observed = parse(record["observed_at"])
    assert observed is not None, "a record is filed only once admitted (its observed_at parsed there)"
    return {"id": record["id"], "type": record["type"],
            "message_id": rec.message_name(record), "lock_id": rec.lock_id(record),
            "subject": subject if isinstance(subject, str) else None,          # the store's indexes
            "source_id": rec.inside(record),
            "observed_s": math.floor(observed.timestamp()),
            "recorded_at": record["recorded_at"], "body": body,
            "personal": ctx.sealer.seal(personal, sealing.record_data(project, record["id"])),
            "digests": {f: rec.keyed_digest(v, ctx.key) if ctx.key else None for f, v in personal.items()}}


def records(ctx: LedgerContext, tx: EvidenceTx, rows: list[dict]) -> list[dict]:
    """from_row of each row, their data keys read in one go."""
    materials = ctx.sealer.materials(r["personal"] for r in rows)
    return [from_row(ctx, tx, row, materials) for row in rows]


def from_row(ctx: LedgerContext, tx: EvidenceTx, row: dict, materials: dict | None = None) -> dict:
    """The record the store gave back, its personal values in place, or their tombstones (also
    while a redaction that destroyed its key is not yet recorded: the values are gone)."""
    try:
        record = row["body"]                      # read afresh by the store: ours to fill
        record.setdefault("writer", dict(writers.UNKNOWN))      # stored before records named their writer
        box = rec.holder(record)
        values = personal(ctx, tx, row, materials)
        if values is not None:
            box.update(values)
        elif row["redaction_id"] is None:
            for f, keyed in row["digests"].items():
                box[f] = rec.tombstone(keyed, None)
        else:
            for f, keyed in row["digests"].items():
                box[f] = rec.tombstone(keyed, row["redaction_id"])
            event = tx.redaction(row["redaction_id"])
            if event is None:
                raise KeyError(row["redaction_id"])
            record["redaction"] = event["event"]
        return record
    except (KeyError, TypeError):
        raise ctx.refusals.error(codes.LEDGER_CORRUPT, record=row.get("id")) from None


def personal(ctx: LedgerContext, tx: EvidenceTx, row: dict, materials: dict | None = None) -> dict | None:
    """A row's personal values, opened; None when cleared or their key is destroyed."""
    if row["personal"] is None:
        return None
    if not sealing.is_sealed(row["personal"]):
        return row["personal"]            # stored in the clear before sealing (docs/erasure.md)
    try:
        return ctx.sealer.open(row["personal"], sealing.record_data(tx.project, row["id"]), materials)
    except (ValueError, KeyError, TypeError):
        raise ctx.refusals.error(codes.LEDGER_CORRUPT, record=row.get("id")) from None


def stored(tx: EvidenceTx, rows: list[dict] | None = None) -> list[dict]:
    """The interpretations of `rows` (None: every stored one) in append order, but those a
    redaction withdrew; one stored before interpretations named their writer reads as unknown's."""
    return [dict({"writer": dict(writers.UNKNOWN)}, **row["body"]) if "writer" not in row["body"] else row["body"]
            for row in (tx.interpretation_rows() if rows is None else rows) if row["body"] is not None]
