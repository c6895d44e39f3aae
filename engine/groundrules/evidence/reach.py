"""What an evidence-ledger call reads, and no more (touches.py): the keys a record is touched by, the
stored interpretations a check must read, the records behind their keys, a subject's records, and
the time an interpretation is checked at."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..core.dates import parse_instant as parse
from . import filing, locking, records as rec, touches
from .core import CLEARING_OPS
from .sealed_tx import row_of
if TYPE_CHECKING:
    from ..store.protocols import EvidenceTx
    from .context import LedgerContext


def keys(ctx: LedgerContext, tx: EvidenceTx, interpretation: Any) -> set[str]:
    """The keys of an interpretation, its citations resolved against the stored records."""
    found: dict = {}

    def resolve(name: str) -> tuple[str, str | None] | None:
        if name not in found:
            owner = tx.owner(name)
            found[name] = None if owner is None else key_of(ctx, row_of(tx, owner))
        return found[name]
    return touches.of(interpretation, book=ctx.book, policy=ctx.policy, clearing=CLEARING_OPS, resolve=resolve)


def key_of(ctx: LedgerContext, row: dict) -> tuple[str, str | None]:
    """(the key a cited record is touched by, the subject of the record) of a stored row."""
    body = row["body"]
    return record_key(ctx, body), body.get("subject") if isinstance(body.get("subject"), str) else None


def record_key(ctx: LedgerContext, record: dict) -> str:
    """`src:<source>` for a raw source and the locks inside it, `rec:<id>` for any other record."""
    sid = rec.inside(record)
    if sid is None:
        sid = locking.source_id(record, ctx.catalogue)
    return "src:" + sid if sid is not None else "rec:" + record["id"]


def touched(tx: EvidenceTx, wanted: set[str]) -> tuple[set[str], list[dict]] | None:
    """(the keys read, the stored interpretations in append order) that a check with these
    lookup keys must read: every stored interpretation found by them, and in turn by theirs.
    None when one of them must be checked against the whole project (touches.WHOLE): then so
    must this one."""
    asked: set[str] = set()
    rows: dict[int, dict] = {}
    while wanted - asked:
        batch = sorted(wanted - asked)
        asked.update(batch)
        for row in tx.interpretations_at([s for s in tx.keyed(batch) if s not in rows]):
            if row["body"] is None:
                continue                                  # withdrawn by a redaction
            if touches.WHOLE in row["keys"]:
                return None
            rows[row["seq"]] = row
            wanted |= touches.lookups(row["keys"])
    return asked, filing.stored(tx, [rows[s] for s in sorted(rows)])


def checked_at(ctx: LedgerContext, tx: EvidenceTx, now: str) -> tuple[str, set[str]]:
    """(the time an interpretation is checked and recorded at, the key of the first record of
    the project observed after it), from one read of the records observed since `now`'s second.

    The time is `now`, or the time the ledger recorded a record it reads, when that is later:
    one clock policy for every server writing to the ledger, under which no write is timed
    before a write it reads. Another server (or thread) may commit a record stamped by its clock
    after this one's was read, or its clock may run a little ahead; the record's ledger-given
    time (observed when it was recorded, or earlier) then moves the time on, instead of making
    the fold refuse the project as holding a record observed after now (OBSERVED_AFTER_NOW). A
    record whose given observed_at is later than when it was recorded is still refused, so its
    key is returned: the fold must read it, whatever the call touches."""
    at = parse(now)
    if at is None:
        return now, set()
    rows = [(row, parse(row["body"]["observed_at"])) for row in tx.observed_from(math.floor(at.timestamp()))]
    for row, observed in rows:
        recorded = parse(row["recorded_at"])
        if observed is not None and recorded is not None and at < observed <= recorded:
            at, now = recorded, row["recorded_at"]
    later = next((row for row, observed in rows if observed is not None and observed > at), None)
    return now, set() if later is None else {key_of(ctx, later)[0]}


def records_touched(ctx: LedgerContext, tx: EvidenceTx, wanted: set[str]) -> list[dict]:
    """The records behind `src:` and `rec:` keys, in ledger order: each source with the locks
    inside it, each other record with the records it derives from (and theirs)."""
    sources = {k[4:] for k in wanted if k.startswith("src:")}
    others = {k[4:] for k in wanted if k.startswith("rec:")}
    found: dict[int, dict] = {}
    while sources or others:
        owners = [o for o in (tx.owner(s) for s in sorted(sources)) if o is not None]
        rows = tx.rows_named(sorted(set(owners) | others)) + tx.locks_inside(sorted(sources))
        sources, others = set(), set()
        for row in rows:
            if row["seq"] in found:
                continue
            found[row["seq"]] = row
            for ref in rec.derived_from(row["body"]):
                owner = tx.owner(ref) if isinstance(ref, str) else None
                if owner is not None:
                    key = key_of(ctx, row_of(tx, owner))[0]
                    (sources if key.startswith("src:") else others).add(key[4:])
    return filing.records(ctx, tx, [found[s] for s in sorted(found)])


def about(ctx: LedgerContext, tx: EvidenceTx, subject: str, stored: bool) -> tuple[list[dict], list[dict] | None]:
    """The records about `subject` and the locks inside them, in ledger order; with `stored`,
    also the stored interpretations that touch them or the subject's scope (and theirs), or all
    of them when one of those depends on the whole project (touches.WHOLE)."""
    rows = {row["seq"]: row for row in tx.rows_about(subject)}
    inside = set()
    wanted = {"+open:" + subject}
    for row in rows.values():
        key = key_of(ctx, row)[0]
        wanted.add(key)
        if key.startswith("src:") and rec.inside(row["body"]) is None:    # a source about it: its locks too
            inside.add(key[4:])
    rows.update((row["seq"], row) for row in tx.locks_inside(sorted(inside)))
    found = filing.records(ctx, tx, [rows[s] for s in sorted(rows)])
    if not stored:
        return found, None
    reached = touched(tx, wanted)
    return found, filing.stored(tx) if reached is None else reached[1]
