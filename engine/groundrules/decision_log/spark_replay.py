"""Replay on Spark: an exported log (decision_log.export) re-run under a candidate rulebook on the
executors, the report made on the driver, the same as `groundrules replay` makes (docs/decision-log.md).

Each Arrow batch of exported rows is opened with the log's key on an executor (the key material is
broadcast: the cluster is trusted with it, as the operator who replays is), and its calls re-run by
`replay._rerun` on rulebooks compiled once per Python worker from tables shipped as a tar
(batch.shipped). Only each row's outcome comes back, and the new answer of a call that changed or
did not reproduce; the driver reads them in the log's order and tallies them exactly as `replay`
does, opening (and masking) only the rows it shows as examples.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from ..api import Service
from ..batch.shipped import pack
from . import crypto, replay
from .export import ExportedLog

if TYPE_CHECKING:
    from ..store.keystore import MemoryKeyStore

SCHEMA = "seq long, tool string, skip string, reproduced boolean, changed boolean, after string, row string"
_SERVICES: dict = {}          # per Python worker: (candidate, logged...) tars -> (services, run)


def replay_on_spark(df: Any, export: ExportedLog, candidate: Any, candidate_root: str | Path,
                    logged: dict | None = None, *, examples: int = 3, reveal: bool = False,
                    key_material: bytes, key_store: str | None = None, tools: tuple = replay.STATELESS) -> dict:
    """The replay result (replay.v1.schema.json) of the exported rows in `df` (as read from the
    export's Parquet, filtered as wanted) under the tables at `candidate_root` (whose rulebook is
    `candidate`); `logged`: {folder: rulebook} of the tables that logged them; `key_store`: the
    path of the key store the payloads' data keys are in, which every executor opens (a file the
    executors reach: a local session's, or a shared file system)."""
    logged = logged or {}
    context = df.sparkSession.sparkContext
    shipped = context.broadcast((pack(candidate_root), tuple(pack(root) for root in logged)))
    secret = context.broadcast(key_material)

    def outcomes(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa
        services, run = _services(shipped.value)
        key = crypto.DecisionKey(secret.value)
        data_keys = _key_store(key_store)
        for batch in batches:
            out: dict = {name: [] for name in ("seq", "tool", "skip", "reproduced", "changed", "after", "row")}
            for row in batch.to_pylist():
                skip, outcome = _outcome(services, run, key, data_keys, row)
                after, reproduced, changed = outcome if outcome else (None, None, False)
                shown = after is not None           # the tally reads this row: its metadata goes back too
                for name, value in (("seq", row["seq"]), ("tool", row["tool"]), ("skip", skip),
                                    ("reproduced", reproduced), ("changed", changed),
                                    ("after", json.dumps(after, ensure_ascii=False) if shown else None),
                                    ("row", json.dumps(dict(row, sealed=row["sealed"].hex() if row["sealed"] else None),
                                                       ensure_ascii=False) if shown else None)):
                    out[name].append(value)
            yield pa.RecordBatch.from_pydict(out)

    decided = df.where(df.tool.isin(list(tools))).mapInArrow(outcomes, SCHEMA).orderBy("seq")
    books = {candidate.version: candidate, **{book.version: book for book in logged.values()}}
    tally = replay._Tally(examples)
    for result in decided.toLocalIterator():
        if result["skip"]:
            tally.skipped[result["skip"]] += 1
            continue
        if not result["changed"] and result["reproduced"] is not False:
            tally.same(result["tool"])
            continue
        row = json.loads(result["row"])
        row["sealed"] = bytes.fromhex(row["sealed"]) if row["sealed"] else None
        doc = export.opened(row)
        assert doc is not None, "a replayed row's payload opened in the worker (replay._not_replayable)"
        after = json.loads(result["after"])
        version = row["rulebook"]
        tally.add(row, doc, after, result["reproduced"], result["changed"],
                  replay._difference(row["tool"], doc["answer"], after) if result["changed"] else None,
                  (books.get(version), candidate), reveal, export)
    return tally.result(candidate.version, sorted(books))


def _services(tars: tuple) -> tuple[dict, Service]:
    found = _SERVICES.get(tars)
    if found is None:
        from ..batch.shipped import unpack
        from ..core import rulebook as rulebooks
        candidate, logged = tars
        run = Service(rulebooks.load(unpack(candidate)))
        services = {run.book.version: run}
        for tar in logged:
            book = rulebooks.load(unpack(tar))
            services.setdefault(book.version, Service(book))
        found = _SERVICES[tars] = (services, run)
    return found


def _key_store(path: str | None) -> MemoryKeyStore | None:
    """The key store at `path`, opened once per Python worker (None: the payloads have no data keys)."""
    if path is None:
        return None
    found = _SERVICES.get(("key_store", path))
    if found is None:
        from ..store.keystore import open_key_store
        found = _SERVICES[("key_store", path)] = open_key_store(path)
    return found


def _outcome(services: dict, run: Service, key: crypto.DecisionKey, data_keys: MemoryKeyStore | None,
             row: dict) -> tuple[str | None, tuple | None]:
    """(why the row cannot be replayed, None) or (None, (after, reproduced, changed))."""
    log = _Opener(key, data_keys)
    texts = log.texts(row)
    doc = None
    if texts is None:
        doc = log.opened(row)
        why = replay._not_replayable(row, doc)
        if why:
            return why, None
    return None, replay._rerun((services, run), [(row, texts, doc)])[0]


class _Opener:
    texts = ExportedLog.texts
    opened = ExportedLog.opened
    _plaintext = ExportedLog._plaintext
    _inner = ExportedLog._inner

    def __init__(self, key: crypto.DecisionKey, data_keys: MemoryKeyStore | None = None):
        self.key, self.data_keys = crypto.ring(key), data_keys
