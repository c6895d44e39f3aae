"""Spark: any stateless tool over a DataFrame, through `mapInArrow` (docs/batch.md).

    from groundrules.batch.plan import Plan, parse_map, parse_set
    from groundrules.batch.spark import answers
    plan = Plan("lock_message", key="id", maps=(parse_map("message.id=id"), parse_map("message.content=content")),
                sets=(parse_set("message.role=user"),))
    answered = answers(df, plan)          # key, ok, data, warnings, error, rulebook

Each Arrow batch an executor's Python worker receives is answered by `answer.answer_batch`: the
rulebook is compiled once per worker process and kept for every later batch (Spark reuses its
Python workers); tables given by folder are shipped once, as a broadcast tar (`shipped`). The
answers are the bytes `groundrules batch` writes for the same rows (the Parquet columns). A key
column is required: Spark's batches have no place in the input a row could be keyed by.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from ..api import Caller
from .answer import BATCH_CALLER, answer_batch
from .plan import Plan

if TYPE_CHECKING:
    import pyarrow

SCHEMA = "key string, ok boolean, data string, warnings string, error string, rulebook string"


def answers(df: Any, plan: Plan, *, rules: str | Path | None = None, caller: Caller = BATCH_CALLER) -> Any:
    """A DataFrame of the answers (SCHEMA) to `plan` over `df`'s rows, one per row."""
    if not plan.key:
        raise ValueError("a Spark batch needs a key column (Plan(key=...)): its rows have no other place")
    missing = [c for c in plan.columns() if c not in df.columns]
    if missing:
        raise ValueError(f"the DataFrame has no column {', '.join(missing)}")
    shipped = df.sparkSession.sparkContext.broadcast(_pack(rules)) if rules is not None else None
    columns = plan.columns() if (plan.mapped or plan.text) else df.columns

    def answer(batches: Iterator["pyarrow.RecordBatch"]) -> Iterator["pyarrow.RecordBatch"]:
        from .shipped import unpack
        root = unpack(shipped.value) if shipped is not None else None
        for batch in batches:
            yield answer_batch(batch, plan, rules=root, caller=caller)

    return df.select(*columns).mapInArrow(answer, SCHEMA)


def _pack(rules: str | Path) -> bytes:
    from .shipped import pack
    return pack(rules)
