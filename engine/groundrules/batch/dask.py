"""Dask: any stateless tool over a dask DataFrame, through `map_partitions` (docs/batch.md).

Each partition (a pandas DataFrame) becomes one Arrow batch answered by `answer.answer_batch`, on a
rulebook compiled once per worker process; tables given by folder travel with the task as a tar
(`shipped`) and are unpacked once per worker. The answers are the bytes `groundrules batch`
writes for the same rows. A key column is required, as on Spark.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..api import Caller
from .answer import BATCH_CALLER, COLUMNS, answer_batch
from .plan import Plan


def answers(ddf: Any, plan: Plan, *, rules: str | Path | None = None, caller: Caller = BATCH_CALLER) -> Any:
    """A dask DataFrame of the answers (answer.COLUMNS) to `plan` over `ddf`'s rows."""
    import pandas as pd
    if not plan.key:
        raise ValueError("a Dask batch needs a key column (Plan(key=...)): its rows have no other place")
    packed = None
    if rules is not None:
        from .shipped import pack
        packed = pack(rules)
    columns = plan.columns() if (plan.mapped or plan.text) else list(ddf.columns)
    meta = pd.DataFrame({c: pd.Series(dtype="bool" if c == "ok" else "object") for c in COLUMNS})
    return ddf[columns].map_partitions(_partition, plan, packed, caller, meta=meta)


def _partition(frame: Any, plan: Plan, packed: bytes | None, caller: Caller) -> Any:
    import pyarrow as pa
    root = None
    if packed is not None:
        from .shipped import unpack
        root = unpack(packed)
    batch = pa.RecordBatch.from_pandas(frame, preserve_index=False)
    return answer_batch(batch, plan, rules=root, caller=caller).to_pandas()
