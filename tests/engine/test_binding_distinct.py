"""Issue 19, item 1: a binding's `distinct: true` keeps the first of equal values in one pass. It
scanned the list kept so far for each value: a context whose `missing` held 30,000 slots (1 MiB)
cost explain_support 1.6 s in `gap_ids` alone. Equal is what it was, Python's ==."""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from groundrules import Caller, Service, default_rulebook
from groundrules.core import bindings

ROOT = Path(__file__).resolve().parents[2]
SCALARS = st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from([1.0, 0.0, 2.5]) | st.sampled_from(
    ["a", "b", "1"])
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(["k", "n"]), inner, max_size=2), max_leaves=6)


def scanned(items: list) -> list:
    """What the generated code did: keep an item unless an equal one was kept."""
    seen: list = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


@settings(max_examples=examples(500), deadline=None)
@given(st.lists(VALUES, max_size=10))
def test_distinct_keeps_what_the_scan_kept(items):
    assert repr(bindings.distinct(items)) == repr(scanned(items))


def test_a_long_missing_list_is_made_distinct_in_one_pass(monkeypatch):
    """explain_support's gap_ids over n missing slots (each twice): one key per value, and the
    slots the detail names are the first of each, in order."""
    keys = [0]
    real = bindings._hashable

    def counted(value):
        keys[0] += 1
        return real(value)
    monkeypatch.setattr(bindings, "_hashable", counted)
    context = json.loads((ROOT / "schemas" / "examples" / "support_reason" / "cq-shenlun-partial.json")
                         .read_text(encoding="utf-8"))
    n = 3000
    slots = [{"slot": f"s{i}", "label": f"槽{i}", "reason": "not_covered"} for i in range(n)]
    context["missing"] = slots + slots
    envelope = Service(default_rulebook()).call("explain_support", {"context": context}, Caller("t", "agent"))
    gaps = next(r for r in envelope["data"]["reasons"] if r["code"] == envelope["data"]["primary"])
    assert gaps["slots"] == [s["slot"] for s in slots]
    assert keys[0] <= 4 * 2 * n            # a few selections of the 2n items, one key each
