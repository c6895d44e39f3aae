"""The fast contract check must agree with jsonschema, which stays the authority."""
from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from groundrules.schema_check import compile_check
from groundrules.tables import load_schemas

ROOT = Path(__file__).resolve().parents[2]
NAME = "knowledge-gateway.v1.schema.json"

VALID = {
    "query": "2024 重庆 申论 题量", "support_status": "partial", "stage": "evidence",
    "required_slots": [{"slot": "numeric", "label": "题量"}],
    "metrics": {"candidate_count": 3, "readable_count": 2, "evidence_count": 2},
    "missing": [{"slot": "numeric", "label": "题量", "reason": "not_covered"}],
    "evidence": [{"id": "ev1", "supports": [{"slot": "duration", "quote_support": "direct"}]}],
    "engines": [{"name": "wiki_recall", "status": "error", "error": "x"}],
    "conflict_status": "none", "conflicts": [], "incomparable": [],
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "partial", "error", "ok", "recorded_unresolved", "conditional", "x"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["slot", "reason", "status", "name", "id", "supports", "quote_support",
                         "candidate_count", "label", "extra"]), inner, max_size=4),
    max_leaves=12)

PATHS = [("support_status",), ("metrics",), ("metrics", "candidate_count"), ("missing",),
         ("missing", 0), ("missing", 0, "reason"), ("evidence", 0, "supports"),
         ("evidence", 0, "supports", 0, "quote_support"), ("engines", 0, "status"), ("conflicts",),
         ("required_slots", 0), ("query",), ("support_reason",)]


def _schema():
    return json.loads((ROOT / "schemas" / NAME).read_text(encoding="utf-8"))


SCHEMAS = load_schemas(ROOT)
CHECK = compile_check(SCHEMAS.get(NAME))


def _jsonschema_valid(value):
    return SCHEMAS.validator(SCHEMAS.get(NAME)).is_valid(value)


def test_the_contract_is_inside_the_fast_subset():
    assert compile_check(_schema()) is not None


@settings(max_examples=400, deadline=None)
@given(path=st.sampled_from(PATHS), value=json_values, drop=st.booleans())
def test_agrees_with_jsonschema_on_mutated_contexts(path, value, drop):
    ctx = copy.deepcopy(VALID)
    target = ctx
    try:
        for part in path[:-1]:
            target = target[part]
        if drop and isinstance(target, dict):
            target.pop(path[-1], None)
        else:
            target[path[-1]] = value
    except (KeyError, IndexError, TypeError):
        pass
    assert CHECK(ctx) is _jsonschema_valid(ctx)


@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_agrees_with_jsonschema_on_arbitrary_values(value):
    assert CHECK(value) is _jsonschema_valid(value)


def test_schemas_outside_the_subset_are_left_to_jsonschema():
    assert compile_check({"type": "object", "patternProperties": {"^a": {}}}) is None
    assert compile_check({"$ref": "other.json#/x"}) is None


def test_every_contract_in_the_subset_agrees_on_its_examples():
    for name, schema in sorted(SCHEMAS.by_name.items()):
        check = compile_check(schema)
        if check is None:
            continue
        for example in schema.get("examples", []):
            assert check(example) is SCHEMAS.validator(schema).is_valid(example), name


def test_integer_accepts_whole_floats_like_jsonschema():
    check = compile_check({"type": "integer"})
    assert check(3) and check(3.0) and not check(3.5) and not check(True)
