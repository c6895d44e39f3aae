"""The store's transactions as the evidence ledger sees them: interpretations sealed as they are
stored and opened as they are read, and a row that does not read refused as LEDGER_CORRUPT."""
from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator

from ..core import codes
from ..store import sealing
from ..store.evidence_rows import CorruptRow
if TYPE_CHECKING:
    from ..store.lifecycle import Lifecycle
    from ..store.protocols import EvidenceStore, EvidenceTx
    from .context import LedgerContext


class SealedTx:
    """A store transaction whose interpretations are sealed as they are stored and opened as they
    are read (store/sealing.py), each under a data key of its own; everything else is the store's.
    A withdrawn interpretation (or one whose key a redaction destroyed) reads with no body."""

    def __init__(self, tx: Any, sealer: sealing.Sealer, project: str):
        self._tx, self.sealer, self.project = tx, sealer, project
        self._data = sealing.interpretation_data(project)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tx, name)

    def add_interpretation(self, interpretation: dict, recorded_at: str, keys: Any = ()) -> None:
        sealed = self.sealer.seal(interpretation, self._data)
        self._tx.add_interpretation(dict(sealed, id=interpretation["id"]), recorded_at, keys)

    def interpretation_rows(self) -> list[dict]:
        return self.opened(self._tx.interpretation_rows())

    def interpretations_at(self, seqs: list[int]) -> list[dict]:
        return self.opened(self._tx.interpretations_at(seqs))

    def opened(self, rows: list[dict]) -> list[dict]:
        """The rows with their bodies opened (None: withdrawn, or erased), each sealed one's data
        key named in `sealed_key`."""
        materials = self.sealer.materials(_without_id(r["body"]) for r in rows)
        out = []
        for row in rows:
            body = row["body"]
            if sealing.is_sealed(_without_id(body)):
                try:
                    row = dict(row, body=self.sealer.open(_without_id(body), self._data, materials),
                               sealed_key=body["key"])
                except ValueError:
                    raise CorruptRow(row.get("id")) from None
            out.append(row)
        return out


def _without_id(body: Any) -> Any:
    """A stored interpretation body without the id it is filed under."""
    return {k: v for k, v in body.items() if k != "id"} if isinstance(body, dict) else body


@contextmanager
def reading(ctx: LedgerContext, store: EvidenceStore, project: str) -> Iterator[Any]:
    """One read transaction of `project`; a row that does not read is LEDGER_CORRUPT."""
    try:
        with store.read(project) as tx:
            yield SealedTx(tx, ctx.sealer, project)
    except CorruptRow as exc:
        raise ctx.refusals.error(codes.LEDGER_CORRUPT, record=exc.record) from None


def writing(ctx: LedgerContext, store: EvidenceStore, project: str, attempt: Callable[[Any], Any],
            lifecycle: Lifecycle | None = None) -> Any:
    """`attempt` run in a write transaction of `project` (the store may run it again), a call's
    under its `lifecycle`; a row that does not read is LEDGER_CORRUPT."""
    try:
        if lifecycle is None:                 # a library call: no server watches it
            return store.run_write(project, lambda tx: attempt(SealedTx(tx, ctx.sealer, project)))
        return store.run_write(project, lambda tx: attempt(SealedTx(tx, ctx.sealer, project)), lifecycle=lifecycle)
    except CorruptRow as exc:
        raise ctx.refusals.error(codes.LEDGER_CORRUPT, record=exc.record) from None


def row_of(tx: EvidenceTx, record_id: str) -> dict:
    """The row of a record the store has just named in this transaction (tx.owner, a redaction's
    record): it is there, or the ledger is not what its store says (LEDGER_CORRUPT)."""
    row = tx.row(record_id)
    if row is None:
        raise CorruptRow(record_id)
    return row
