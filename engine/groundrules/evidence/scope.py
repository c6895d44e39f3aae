"""Which evidence may decide a value for the context a fold is asked about (docs/spec/evidence.md, evidence has a scope).

Scope has four dimensions: who it is about (`subject`, which routes events), when it was observed
(`observed_at`), when it holds (`valid_from` / `valid_until`, and `version`), and what it applies to
(`applicability`: models, regions, policies). Asked for a `scope_context`, the fold compares each
record's applicability and version with it; this module only counts (which keys the context
names, which hold, which differ), and merge.yaml's `scope_fit` table turns the counts into a
verdict, whose `decides` says whether the record may decide the context's values.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.operators import same

if TYPE_CHECKING:
    from .index import LedgerIndex
    from .policy import MergePolicy


def weigh(index: LedgerIndex, policy: MergePolicy, context: dict) -> dict:
    """{record id: its scope_fit verdict} for every record of the ledger, against `context` (dotted)."""
    return {rid: policy.fit(facts(e.record, index.scope_of(rid), context, policy.version_key))
            for rid, e in index.entries.items()}


def flatten(context: Any, prefix: str = "") -> tuple[dict, list[str]]:
    """({'runtime': {'backend': 'vLLM'}} -> {'runtime.backend': 'vLLM'}, the dotted keys given twice
    (nested and dotted), sorted). Lists stay values: an applicability lists the values it allows."""
    out: dict = {}
    twice: set = set()
    todo = [(prefix, context)]
    while todo:
        at, node = todo.pop()
        for key, value in node.items():
            path = f"{at}{key}"
            if type(value) is dict:
                todo.append((path + ".", value))
                continue
            if path in out:
                twice.add(path)
            out[path] = value
    return out, sorted(twice)


def facts(record: dict, scope: dict, context: dict, version_key: str) -> dict:
    """The scope_fit facts of one record: `scope` is its applicability and version (a lock's are its
    source's), `context` the flattened scope_context."""
    declared, _ = flatten(scope.get("applicability", {}))
    compared = [k for k in declared if k in context]
    differ = [k for k in compared if not _applies(declared[k], context[k])]
    missing = [k for k in declared if k not in context]
    version = {"declared": "version" in scope, "asked": version_key in context}
    if version["declared"]:
        version["value"] = scope["version"]
    if version["asked"]:
        version["asked_for"] = context[version_key]
    version["equal"] = version["declared"] and version["asked"] and same(scope["version"], context[version_key])
    return {"record": {"id": record["id"], "type": record["type"]},
            "applicability": {"declared": len(declared), "compared": len(compared),
                              "equal": len(compared) - len(differ), "differ": len(differ), "missing": len(missing),
                              "differ_keys": differ, "missing_keys": missing},
            "version": version}


def _applies(allowed: Any, actual: Any) -> bool:
    if isinstance(allowed, list):
        return any(same(a, actual) for a in allowed)
    return same(allowed, actual)
