"""Appending records to the evidence ledger: each checked, stamped with its writer, and every raw
source locked as it is appended (its engine locks claimed by the lock records that name them, the
rest appended after it), all in one transaction."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ..core import codes
from ..core.errors import GroundrulesError
from . import filing, integrity, locking, records as rec, writers
from .contract import record_problem
from .sealed_tx import row_of
if TYPE_CHECKING:
    from ..provenance.trust import TrustStore
    from ..store.protocols import EvidenceTx
    from .context import LedgerContext


def shaped(ctx: LedgerContext, record: Any, position: int = 0) -> Any:
    """`record` in the internal shape: one written in the seed shapes (source, timestamp, scope,
    quote, locator) is mapped by the rulebook's shape_map tables (rules/seed_shapes.yaml),
    the same mapping fold() applies; any other record is returned as it came."""
    for shapes in ctx.book.of_kind("shape_map"):
        record = shapes.record(record, position)
    return record


def append_records(ctx: LedgerContext, tx: EvidenceTx, records: list, project: str, stamp: dict,
                   trust: TrustStore | None) -> list[dict]:
    """The records appended in `tx`, each with the engine's locks of a source no record names
    right after it; every record as stored, in order."""
    now = ctx.clock()
    prepared = [prepare(ctx, raw, now, f"records[{n}]", stamp, trust) for n, raw in enumerate(records)]
    sources: dict = {}                # source id -> (record, engine locks, {engine lock id: record id})
    ordered: list = []                # (record, at, its acceptance as a lock, or None)
    for n, record in enumerate(prepared):
        at = f"records[{n}]"
        sid = locking.source_id(record, ctx.catalogue)
        if sid is not None:
            sources[sid] = (record, locking.engine_locks(record, ctx.catalogue, ctx.book), {})
        elif rec.is_lock(record) and "observed_at" not in record:
            record["observed_at"] = _observed_at(ctx, tx, rec.source_of(record), sources, now)
        ordered.append((record, at, _claim(ctx, tx, record, sources, at) if sid is None and rec.is_lock(record)
                        else None))
    filed: list[dict] = []
    stored: list[dict] = []
    pending: dict[str, dict] = {}
    for record, at, accept in _with_engine_locks(ctx, ordered, sources, now):
        record = integrity.admit(record, _Earlier(ctx, tx, pending), ctx.refusals, at,
                                 lambda key: f"{at}.{key}", accept)
        for name, _ in rec.names(record):
            pending[name] = record
        filed.append(filing.filed(ctx, record, project))
        stored.append(record)
    tx.insert(filed)
    return stored


def _claim(ctx: LedgerContext, tx: EvidenceTx, record: dict, sources: dict, at: str) -> Callable[[dict], dict]:
    """A lock record's acceptance, for integrity.admit: it names one of the engine's locks of
    its source (earlier in this batch, or stored) and is completed from it, refused as the fold
    refuses it. The claim is made now, in batch order, so that an engine lock a record names is
    not appended again; its refusal waits for the record's other checks (the catalogue's
    precedence says which answers)."""
    sid = rec.source_of(record)
    if sid not in sources:
        source = message(ctx, tx, sid, {})
        if source is None:
            return _refused(ctx.refusals.error(codes.UNKNOWN_EVIDENCE, ref=sid, at=f"{at}.lock.locator.message_id"))
        found = locking.engine_locks(source, ctx.catalogue, ctx.book)
        sources[sid] = (source, found, _stored_claims(tx, sid, found))
    source, found, claimed = sources[sid]
    try:
        accepted = locking.accept(record, locking.text_of(source, ctx.catalogue), found, claimed, ctx.key,
                                  ctx.refusals, at)
    except GroundrulesError as refusal:
        return _refused(refusal)
    return lambda _: accepted


def _stored_claims(tx: EvidenceTx, sid: str, found: locking.EngineLocks | None) -> dict:
    """{engine lock id: record id} of the locks already stored for a stored source (a lock
    appended after its source), read by the store's index of the locks inside a source."""
    spans = {(c["locator"]["start"], c["locator"]["end"], c["pattern"]): c["id"] for c in found or []}
    claimed = {}
    for row in tx.locks_inside([sid]):
        lock = row["body"]["lock"]
        loc = lock["locator"]
        claimed[spans.get((loc["start"], loc["end"], lock["pattern"]), lock["id"])] = row["id"]
    return claimed


def _with_engine_locks(ctx: LedgerContext, ordered: list, sources: dict, now: str) -> list:
    """`ordered` with each new source followed by the engine's locks that no record names."""
    out = []
    for record, at, accept in ordered:
        out.append((record, at, accept))
        sid = locking.source_id(record, ctx.catalogue)
        if sid is None or sources.get(sid, (None,))[0] is not record:
            continue
        _, found, claimed = sources[sid]
        for c in found or []:
            if c["id"] not in claimed:           # observed when its source was, written by its writer
                lock = dict(rec.lock_record(c, c["id"]), observed_at=record["observed_at"])
                out.append((dict(prepare(ctx, lock, now, f"{at} (its lock)", None, None), writer=record["writer"]),
                            f"{at} (its lock {c['id']})", None))
    return out


def _observed_at(ctx: LedgerContext, tx: EvidenceTx, sid: str, sources: dict, now: str) -> str:
    """When a lock record's source was observed (a lock is a reading of it), or `now` when the
    source is not there (the lock is refused later, UNKNOWN_EVIDENCE)."""
    source = sources[sid][0] if sid in sources else message(ctx, tx, sid, {})
    return source["observed_at"] if source is not None and "observed_at" in source else now


def prepare(ctx: LedgerContext, raw: Any, now: str, at: str, writer: dict | None, trust: TrustStore | None) -> dict:
    """The record as it will be stored: checked, its id and times set, stamped with its writer
    (None: an engine lock, stamped as its source) once the provenance table admits it."""
    if not isinstance(raw, dict):
        raise ctx.refusals.error(codes.PAYLOAD_INVALID, problem=f"{at}: a record is an object")
    if "writer" in raw:
        raise ctx.refusals.error(codes.WRITER_GIVEN, at=at)
    record = dict(shaped(ctx, raw))
    record.setdefault("id", ctx.ids())
    if record.get("type") != "lock":                 # a lock is observed when its source was
        record.setdefault("observed_at", now)
    record["recorded_at"] = now
    problem = record_problem(ctx.book.schemas, ctx.catalogue.records, record, at)
    if problem:
        raise ctx.refusals.error(codes.PAYLOAD_INVALID, problem=problem)
    if "redaction" in record or any(rec.is_tombstone(v) for v in rec.holder(record).values()):
        raise ctx.refusals.error(codes.PAYLOAD_INVALID, problem=f"{at}: a record is appended unredacted; "
                                 "use redact() to remove personal data")
    if writer is not None:
        record["writer"] = writers.admit(raw, record, writer, trust, ctx.book, ctx.refusals, at)
    return record


def message(ctx: LedgerContext, tx: EvidenceTx, sid: str, pending: dict) -> dict | None:
    """The raw source (message, tool receipt, injected field) that answers to `sid`, or None."""
    record = pending.get(sid)
    if record is None:
        owner = tx.owner(sid)
        record = filing.from_row(ctx, tx, row_of(tx, owner)) if owner is not None else None
    return record if record is not None and locking.source_id(record, ctx.catalogue) == sid else None


def _refused(refusal: GroundrulesError) -> Callable[[dict], dict]:
    """A lock record's acceptance that refuses it, once the record is admitted."""
    def accept(_: dict) -> dict:
        raise refusal
    return accept


class _Earlier:
    """What integrity.check reads of the records before one being appended: the stored ones and
    those before it in its batch (`pending`: name -> row)."""

    def __init__(self, ctx: LedgerContext, tx: EvidenceTx, pending: dict):
        self.ctx, self.tx, self.pending = ctx, tx, pending

    def answers(self, name: str) -> bool:
        return name in self.pending or self.tx.owner(name) is not None

    def source_text(self, sid: str) -> Any:
        source = message(self.ctx, self.tx, sid, self.pending)
        return None if source is None else locking.text_of(source, self.ctx.catalogue)
