"""The append-only evidence ledger (docs/spec/evidence.md, evidence is a record): checking, (de)serialising and redacting records.

A record is appended once and never rewritten. The one exception is the audited redaction path
(`redact`): it appends a redaction event (who, why, when) and replaces the record's personal fields
by tombstones; the record, its locator and every other field stay. A tombstone holds the field's
HMAC-SHA256 under `redaction_key` (a secret the host keeps outside the database), or no digest
when there is no key: an unkeyed digest of a short value (a mobile number) is undone by brute
force. Personal values reach the store only sealed, each record's and each interpretation's
under a data key of its own in the key store (store/keystore.py, docs/erasure.md): a redaction
destroys those keys, so no copy of the database opens them again. The store (groundrules.store:
SQLite, PostgreSQL or memory) enforces append-only itself; this class holds the rules.
Every method works in one store transaction of one project. Ids and the clock are injected;
nothing here reads the time. A call reads what it is about, not the project: a subject's records
by the store's subject index, an interpretation's neighbours by the keys of what it touches
(touches.py, reach.py), so its cost follows the call.

The class is the ledger's public face; the work is done by one module per concern, each a set of
functions over the ledger's context (context.py): appending records (appending.py), appending an
interpretation (interpreting.py), the redaction (erasure.py), what a call reads (reach.py), what
the store files and gives back (filing.py) and its transactions as the ledger sees them
(sealed_tx.py).
"""
from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..core import codes, rulebook as rulebooks
if TYPE_CHECKING:                      # rulebook imports this part's compilers
    from ..core.rulebook import Rulebook
    from ..provenance.trust import TrustStore
    from ..results import Fold
    from ..store.lifecycle import Lifecycle
    from ..store.protocols import EvidenceStore
from . import appending, erasure, filing, interpreting, reach, records as rec, writers
from .context import LedgerContext
from ..core.errors import GroundrulesError
from ..core.messages import refused
from .fold import fold, tables
from .sealed_tx import SealedTx, reading, row_of, writing
from ..store import sealing
from ..store.keystore import MemoryKeyStore


class EvidenceLedger:
    """The evidence ledger over one store (`store`: a store object, a SQLite path, or None for
    memory); `project` is the project a caller means when it names none; `keys`, the key store its
    personal values are sealed under (store/keystore.py: a store, its file, or a Sealer over one;
    None: the file beside a SQLite ledger, in memory for a ledger in memory, required on PostgreSQL)."""

    def __init__(self, store: EvidenceStore | str | Path | None = None, *, ids: Callable[[], str] | None = None,
                 clock: Callable[[], str] | None = None, rulebook: Rulebook | None = None, project: str = "default",
                 redaction_key: bytes | None = None,
                 keys: MemoryKeyStore | sealing.Sealer | str | Path | None = None, writer: dict | None = None):
        self._book = rulebook or rulebooks.default()
        self._catalogue, policy, refusals = tables(self._book)   # before opening: a bad rulebook opens nothing
        if keys is None or isinstance(keys, (str, Path)):
            from ..store.keystore import open_key_store
            keys = open_key_store(keys if keys is not None else _key_store_beside(store, self._book))
        self.sealer = keys if isinstance(keys, sealing.Sealer) else sealing.Sealer(keys)
        if store is None or isinstance(store, (str, Path)):
            from ..store import open_evidence_store
            self.store: EvidenceStore = open_evidence_store(store)
        else:
            self.store = store
        self.project = project
        if ids is None or clock is None:                 # constructed as FindingLedger is: random ids, UTC wall time
            from ..findings.clock import RandomIds, SystemClock
            random_ids = RandomIds()
            ids = ids or (lambda: random_ids.new("R"))
            clock = clock or SystemClock()
        self._ctx = LedgerContext(self._book, self._catalogue, policy, refusals, self.sealer, redaction_key or None,
                                  ids, clock)
        # who a library call without a writer writes as: the host process itself (the registry
        # always names the authenticated caller)
        self.writer = writer or writers.LOCAL_HOST
        self._copies: list[Callable[[str, list], Any]] = []
        self.lifecycle: Lifecycle | None = None       # the call's, in a ledger made by within()
        self._key_stored()

    def _key_stored(self) -> None:
        """Give the interpretations stored before keys were kept (an older ledger) their keys, once."""
        pending = self.store.unkeyed()
        for row in pending:
            if row["body"] is not None:
                with self.store.write(row["project"]) as raw:
                    tx = SealedTx(raw, self.sealer, row["project"])
                    row = tx.opened([row])[0]
                    tx.add_keys(row["seq"], sorted(self._keys(tx, row["body"])))
        if pending:
            self.store.keyed_all()

    def _filed(self, record: dict, project: str) -> dict:
        """A record as the store files it (filing.filed; tests and the scale benchmark file rows so)."""
        return filing.filed(self._ctx, record, project)

    def _keys(self, tx: Any, interpretation: Any) -> set[str]:
        """The keys an interpretation is stored under (reach.keys)."""
        return reach.keys(self._ctx, tx, interpretation)

    def ping(self) -> None:
        """Open and end one read transaction (a readiness check); raises when the store cannot."""
        with self.store.read(self.project):
            pass

    def with_rulebook(self, rulebook: Rulebook) -> "EvidenceLedger":
        """This ledger over the same store, deciding by `rulebook` (a rule reload)."""
        return EvidenceLedger(self.store, ids=self._ctx.ids, clock=self._ctx.clock, rulebook=rulebook,
                              project=self.project, redaction_key=self._ctx.key, keys=self.sealer, writer=self.writer)

    def within(self, lifecycle: Lifecycle) -> "EvidenceLedger":
        """This ledger for one call whose writes run under `lifecycle` (store/lifecycle.py: counted,
        and rolled back once its server abandons it); it shares everything else, redaction copies too."""
        bound = copy.copy(self)
        bound.lifecycle = lifecycle
        return bound

    def close(self) -> None:
        self.store.close()
        self.sealer.keys.close()

    def on_redaction(self, copies: Callable[[str, list], Any]) -> None:
        """Whoever keeps copies of personal values elsewhere (the decision log) takes part in every
        redaction: `copies(project, removed)`, `removed` being the personal values a redaction is
        about to clear (one {field: value} per record), answers an erasure plan (an object with
        `keys`, the data keys to destroy with the redaction's own, and `finish()`, run once they
        are destroyed). A plan that cannot be made (an unreadable copy) refuses the redaction before
        anything changed."""
        self._copies.append(copies)

    # -- appending (appending.py) ---------------------------------------------------------------
    def shaped(self, record: Any, position: int = 0) -> Any:
        """`record` in the internal shape: one written in the seed shapes (source, timestamp, scope,
        quote, locator) is mapped by the rulebook's shape_map tables (rules/seed_shapes.yaml),
        the same mapping fold() applies; any other record is returned as it came."""
        return appending.shaped(self._ctx, record, position)

    def append(self, record: dict, *, project: str | None = None, writer: dict | None = None,
               trust: TrustStore | None = None) -> dict:
        """Check one record and append it (a raw source with the locks the engine finds in it);
        returns it as stored (with id, observed_at, recorded_at, writer)."""
        return self.append_all([record], project=project, writer=writer, trust=trust)[0]

    def append_message(self, message: dict, locks: list | None = None, *, project: str | None = None,
                       writer: dict | None = None, trust: TrustStore | None = None) -> list[dict]:
        """Append a message and its lock records in one step. The locks are the engine's
        (`groundrules.lock` under this rulebook); `locks` given (lock candidates) are checked
        against them and name them, and every lock they leave out is appended all the same."""
        message = self.shaped(message)
        if isinstance(message, dict) and "id" not in message:
            message = dict(message, id=self._ctx.ids())           # the locks point at the id it will have
        named = [rec.lock_record(c, c["id"] if isinstance(c, dict) and "id" in c else None) for c in locks or []]
        return self.append_all([message] + named, project=project, writer=writer, trust=trust)

    def append_all(self, records: list, *, project: str | None = None, writer: dict | None = None,
                   trust: TrustStore | None = None) -> list[dict]:
        """Append several records atomically: all of them, or none when one is refused. Every raw
        source (message, tool receipt, injected field) is locked as it is appended: a lock record
        in `records` must be one of the engine's locks of its source (and is completed from it);
        the engine's locks no record names are appended right after their source. Returns every
        record as stored, in order. Each is stamped with `writer` (the authenticated caller; None:
        this ledger's writer) and judged by rules/provenance.yaml: a role that may not append its
        class is refused; a signature is verified against `trust` (the operator's trust store)."""
        stamp = writer or self.writer
        project = project or self.project
        try:
            return writing(self._ctx, self.store, project,
                           lambda tx: appending.append_records(self._ctx, tx, records, project, stamp, trust),
                           self.lifecycle)
        except GroundrulesError as exc:
            refusals = self._ctx.refusals
            if exc.code == codes.LOCK_TIMEOUT and exc.code in refusals.codes:
                raise refusals.error(codes.LOCK_TIMEOUT, **exc.details) from None
            raise

    # -- reading --------------------------------------------------------------------------------
    def records(self, *, project: str | None = None) -> list[dict]:
        """Every record in append order; redacted personal fields read as tombstones."""
        with reading(self._ctx, self.store, project or self.project) as tx:
            return filing.records(self._ctx, tx, tx.rows())

    def get(self, record_id: str, *, project: str | None = None) -> dict:
        with reading(self._ctx, self.store, project or self.project) as tx:
            owner = tx.owner(record_id)
            if owner is None:
                raise self._ctx.refusals.error(codes.UNKNOWN_EVIDENCE, ref=record_id, at="get")
            return filing.from_row(self._ctx, tx, row_of(tx, owner))

    def redactions(self, *, project: str | None = None) -> list[dict]:
        with reading(self._ctx, self.store, project or self.project) as tx:
            return [row["event"] for row in tx.redaction_rows()]

    # -- interpretations (interpreting.py; the event layer: docs/spec/evidence.md, events) --------
    def append_interpretation(self, interpretation: Any, *, project: str | None = None,
                              writer: dict | None = None) -> dict:
        """Check an interpretation as the fold does, against the stored records and the
        interpretations stored before it, and append it; returns its id and when it was recorded.
        Only a refusal the refusal table marks `later_interpretation_may_cure` (a lock not yet
        disposed of) is let through; whatever else the fold refuses would make every later fold of
        the stored ones fail."""
        if not isinstance(interpretation, dict) or not isinstance(interpretation.get("id"), str):
            raise self._ctx.refusals.error(codes.PAYLOAD_INVALID, problem="an interpretation is an object with an 'id'")
        interpretation = interpreting.stamped(self._ctx, [interpretation], writer or self.writer, refuse=True)[0]
        return writing(self._ctx, self.store, project or self.project,
                       lambda tx: interpreting.append_checked(self._ctx, tx, interpretation), self.lifecycle)

    def draft_interpretation(self, message_id: str | None = None, *, project: str | None = None) -> dict:
        """An interpretation to edit and append: the locks of `message_id` (a record id or a message
        id), or every lock no stored interpretation disposes of, each with the default disposition
        (drafts.py); beside it, each lock's kind, quote and the slots that take its kind."""
        from .drafts import interpretation_draft
        with reading(self._ctx, self.store, project or self.project) as tx:
            records = [filing.from_row(self._ctx, tx, row) for row in tx.rows()]
            stored = filing.stored(tx)
        return interpretation_draft(records, stored, self._catalogue, self._ctx.policy, self._ctx.ids(), message_id)

    def interpretations(self, *, project: str | None = None) -> list[dict]:
        """The stored interpretations in append order, but those a redaction withdrew."""
        with reading(self._ctx, self.store, project or self.project) as tx:
            return filing.stored(tx)

    # -- the fold (fold.py, over what reach.py reads) -------------------------------------------
    def fold(self, interpretations: list | None, now: str, *, project: str | None = None,
             subject: str | None = None, scope_context: dict | None = None, writer: dict | None = None) -> Fold:
        """The fold of this ledger's records with `interpretations` (None: the stored ones; given
        ones are `writer`'s, as if appended) at `now`; with `subject`, of the records about it and
        the locks inside them; with `scope_context`, for that context (fold() sets aside the
        evidence that does not fit it). Records whose writer may not decide are set aside."""
        if interpretations is not None:          # given ones are the caller's, whatever writer they name
            interpretations = interpreting.stamped(self._ctx, interpretations, writer or self.writer, refuse=False)
        with reading(self._ctx, self.store, project or self.project) as tx:
            if subject is None:
                records = filing.records(self._ctx, tx, tx.rows())
                if interpretations is None:
                    interpretations = filing.stored(tx)
            else:
                records, touched = reach.about(self._ctx, tx, subject, interpretations is None)
                if interpretations is None:
                    interpretations = touched
        payload: dict[str, Any] = {"now": now, "records": records, "interpretations": interpretations}
        if scope_context is not None:
            payload["scope_context"] = scope_context
        return fold(payload, self._book, redaction_key=self._ctx.key, weigh_writers=True, pending_locks=True)

    # -- the one audited change (erasure.py) ----------------------------------------------------
    def redact(self, record_id: str, *, by: str, reason: str, project: str | None = None) -> list[dict]:
        """`erase`, answering the redaction events it appended."""
        return self.erase(record_id, by=by, reason=reason, project=project)["redactions"]

    def erase(self, record_id: str, *, by: str, reason: str, project: str | None = None) -> dict:
        """Replace the personal fields of a record (and of the locks inside a source) by tombstones,
        recording who and why, withdraw the interpretations that cite them, and erase every copy:
        the data keys they were sealed under are destroyed (store/keystore.py), with those of the
        copies elsewhere (the decision log's, `on_redaction`), in the ledger's transaction before it
        commits. So a redaction is whole or nothing: a copy that cannot be found or a key store
        that fails refuses it before anything changed, and a commit that fails after the keys went
        leaves values that no longer open, which a retry records. Answers the events and what was
        erased where."""
        return erasure.erase(self._ctx, self.store, self._copies, record_id, by=by, reason=reason,
                             project=project or self.project, lifecycle=self.lifecycle)


def _key_store_beside(store: Any, book: Rulebook) -> str | None:
    """Where a ledger's key store is when none is named: beside a SQLite file (`<file>.keys`), in
    memory for a ledger in memory; a PostgreSQL ledger must be given one."""
    from ..store.backends import locate
    path = getattr(store, "path", store)
    kind, target = locate(path) if path is None or isinstance(path, (str, Path)) else (None, None)
    kind = getattr(store, "kind", kind)          # a store object says which backend it is
    if kind == "memory" or str(target) == ":memory:":
        return None
    if kind != "sqlite":
        raise refused(book, codes.NOT_CONFIGURED, "store.postgres_key_store")
    return f"{target}.keys"
