"""The decision log exported to Parquet, as it is stored: each row's metadata, the paths the
masking table never kept (`dropped`), and its payload still sealed (AES-256-GCM under the log's
key; an erased row has none). Nothing is opened to export, so the file holds no personal value in
the clear: replaying it, on one machine (`ExportedLog` is a log `replay.replay` reads) or on Spark
(`spark_replay`), needs the key, as replaying the database does.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from . import crypto
from .log import DecisionLog, _table

if TYPE_CHECKING:
    from ..store.keystore import MemoryKeyStore

TEXT = ("project", "id", "at", "principal", "role", "tool", "rulebook", "error_code", "kept", "dropped", "key_id",
        "erased_by")


def schema():
    import pyarrow as pa
    fields = [("seq", pa.int64())] + [(c, pa.string()) for c in TEXT[:7]] + [("ok", pa.bool_())] + \
        [("error_code", pa.string()), ("duration_us", pa.int64())] + [(c, pa.string()) for c in TEXT[8:]] + \
        [("sealed", pa.binary())]
    return pa.schema(fields)


def export(log: DecisionLog, out: Path, **filters: Any) -> int:
    """Write the rows the filters keep (projects, tools, since) to `out`, a page at a time, beside it
    first and renamed into place once whole; the number written."""
    import os
    import pyarrow as pa
    import pyarrow.parquet as pq
    target = schema()
    partial = out.with_name(out.name + ".writing")
    count = 0
    with pq.ParquetWriter(partial, target) as writer:
        for page in log.pages(**filters):
            rows = [{name: (bool(row[name]) if name == "ok" else bytes(row[name]) if name == "sealed" and row[name]
                            is not None else row[name]) for name in target.names} for row in page]
            writer.write_table(pa.Table.from_pylist(rows, schema=target))
            count += len(rows)
    os.replace(partial, out)
    return count


class ExportedLog:
    """An export read as the log replay reads: its pages in append order (filtered as the store
    filters), each payload opened with the key, masked by the masking table of `rulebook`."""

    texts = DecisionLog.texts
    opened = DecisionLog.opened
    mask = DecisionLog.mask
    _plaintext = DecisionLog._plaintext
    _inner = DecisionLog._inner
    _masked = DecisionLog._masked

    def __init__(self, path: str | Path, key: crypto.DecisionKey | crypto.DecisionKeyring, rulebook: Any,
                 data_keys: MemoryKeyStore | None = None):
        self.path, self.key, self.masking = Path(path), crypto.ring(key), _table(rulebook)
        self.data_keys = data_keys        # the key store of the payloads' data keys (docs/erasure.md)

    def pages(self, *, projects: list | None = None, tools: list | None = None, since: str | None = None,
              size: int = 2000) -> Iterator[list[dict]]:
        import pyarrow.parquet as pq
        for batch in pq.ParquetFile(self.path).iter_batches(batch_size=size):
            page = [row for row in batch.to_pylist() if (projects is None or row["project"] in projects)
                    and (tools is None or row["tool"] in tools) and (since is None or row["at"] >= since)]
            if page:
                yield page
