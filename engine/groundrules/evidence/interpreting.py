"""Appending an interpretation (the event layer: docs/spec/evidence.md, events): stamped with its
writer, checked by the fold against what it touches, stored with the keys it is found by."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import codes
from ..core.errors import GroundrulesError
from . import filing, reach, touches, writers
from .fold import fold
if TYPE_CHECKING:
    from ..store.protocols import EvidenceTx
    from .context import LedgerContext


def append_checked(ctx: LedgerContext, tx: EvidenceTx, interpretation: dict) -> dict:
    """Check `interpretation` as the fold does, against the stored records it touches and the
    stored interpretations whose check could come out otherwise with it, and store it; answers
    its id and when it was recorded. Only a refusal the refusal table marks
    `later_interpretation_may_cure` (a lock not yet disposed of) is let through; whatever else the
    fold refuses would make every later fold of the stored ones fail."""
    now, later = reach.checked_at(ctx, tx, ctx.clock())
    keys = reach.keys(ctx, tx, interpretation)
    touched = reach.touched(tx, touches.lookups(keys)) if touches.WHOLE not in keys else None
    if touched is None:           # it depends on every earlier event (touches.WHOLE)
        records, given = filing.records(ctx, tx, tx.rows()), filing.stored(tx)
    else:
        read, given = touched
        records = reach.records_touched(ctx, tx, read | later)
    try:
        fold({"now": now, "records": records, "interpretations": given + [interpretation]}, ctx.book,
             redaction_key=ctx.key)
    except GroundrulesError as exc:
        if exc.code not in ctx.refusals.curable:
            raise
    tx.add_interpretation(interpretation, now, sorted(keys))
    return {"id": interpretation["id"], "recorded_at": now}


def stamped(ctx: LedgerContext, interpretations: list, writer: dict, *, refuse: bool) -> list:
    """Interpretations as `writer` wrote them; with `refuse`, one naming a writer is refused (an
    append), else its writer is replaced (a fold of given ones)."""
    if not isinstance(interpretations, list):
        return interpretations                    # fold() refuses it, as it refuses any malformed payload
    stamp = writers.stamp(writer)
    out = []
    for n, interpretation in enumerate(interpretations):
        if isinstance(interpretation, dict):
            if "writer" in interpretation and refuse:
                raise ctx.refusals.error(codes.WRITER_GIVEN, at=f"interpretations[{n}]")
            interpretation = dict(interpretation, writer=stamp)
        out.append(interpretation)
    return out
