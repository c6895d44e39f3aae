"""Literals are checked against the contract's field types and enums at load: a test that can
never hold is a load error at its key, with a did-you-mean where the enum has a close value."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundrules import RulesError, load_rulebook
from groundrules.core.fieldtypes import OPEN, Shape, field_shapes

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = "knowledge-gateway.v1.schema.json"


def _load(tmp_path: Path, when: dict, bind: dict | None = None):
    table = {"kind": "decision_table", "id": "t", "input": CONTRACT, "hit_policy": "first",
             "outputs": {"a": {}}, "rows": [{"id": "a", "when": when}]}
    if bind:
        table["bind"] = bind
        table["rows"][0]["output"] = {"x": {"bind": next(iter(bind))}}
    path = tmp_path / "t.yaml"
    path.write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")
    return load_rulebook(ROOT, files=[path])


def _problems(tmp_path, when, bind=None) -> list:
    with pytest.raises(RulesError) as exc:
        _load(tmp_path, when, bind)
    return [(p.code, p.key, p.hint) for p in exc.value.problems]


@pytest.mark.parametrize("when, code, key", [
    ({"field": "support_status", "eq": "partail"}, "literal-not-in-enum", "rows[0].when.eq"),
    ({"field": "support_status", "ne": "partail"}, "literal-not-in-enum", "rows[0].when.ne"),
    ({"field": "support_status", "in": ["partial", "partail"]}, "literal-not-in-enum", "rows[0].when.in[1]"),
    ({"field": "support_status", "gt": 3}, "literal-type-mismatch", "rows[0].when.gt"),
    ({"field": "metrics.candidate_count", "eq": "0"}, "literal-type-mismatch", "rows[0].when.eq"),
    ({"field": "metrics.candidate_count", "ge": "1"}, "literal-type-mismatch", "rows[0].when.ge"),
    ({"field": "metrics.candidate_count", "eq": True}, "literal-type-mismatch", "rows[0].when.eq"),
    ({"field": "query", "eq": None}, "literal-type-mismatch", "rows[0].when.eq"),
    ({"field": "missing", "any": {"field": "reason", "eq": "recorded_unresolvd"}},
     "literal-not-in-enum", "rows[0].when.any.eq"),
    ({"field": "engines", "count": {"where": {"field": "status", "not_in": ["eror"]}, "ge": 1}},
     "literal-not-in-enum", "rows[0].when.count.where.not_in[0]"),
    ({"all": [{"field": "evidence", "any": {"field": "supports", "all": {"field": "quote_support", "eq": 1}}}]},
     "literal-not-in-enum", "rows[0].when.all[0].any.all.eq"),
])
def test_a_literal_the_field_can_never_hold_fails_the_load(tmp_path, when, code, key):
    problems = _problems(tmp_path, when)
    assert [(c, k) for c, k, _ in problems] == [(code, key)]


def test_the_hint_names_the_closest_enum_value(tmp_path):
    [(_, _, hint)] = _problems(tmp_path, {"field": "support_status", "eq": "partail"})
    assert hint == "did you mean 'partial'?"


def test_a_binding_filter_is_checked_with_its_item_prefix(tmp_path):
    bind = {"gaps": {"from": "missing", "where": {"field": "reason", "eq": "not_coverd"}, "pluck": "slot"}}
    assert [c for c, _, _ in _problems(tmp_path, {"field": "query", "exists": True}, bind)] == ["literal-not-in-enum"]


@pytest.mark.parametrize("when", [
    {"field": "support_status", "eq": "partial"},
    {"field": "support_status", "ge": "a"},                  # strings order with strings
    {"field": "metrics.candidate_count", "eq": 0.0},          # 0.0 is an integer to JSON Schema
    {"field": "metrics.candidate_count", "lt": 2.5},
    {"field": "stage", "eq": "no_candidates"},                # a string without an enum: any string
    {"field": "metrics.readable_count", "lt": {"field": "metrics.candidate_count"}},
])
def test_literals_that_fit_load(tmp_path, when):
    assert _load(tmp_path, when).table("t")


def test_shapes_follow_refs_and_unite_alternatives():
    schema = {"$defs": {"code": {"enum": ["a", "b"]}},
              "properties": {"c": {"$ref": "#/$defs/code"},
                             "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                             "m": {"oneOf": [{"type": "integer"}, {}]},
                             "k": {"const": "x"},
                             "l": {"type": "array", "items": {"type": "string"}}}}
    shapes = field_shapes(schema)
    assert shapes["c"] == Shape(None, ("a", "b"))
    assert shapes["n"] == Shape(frozenset({"integer", "null"}), None)
    assert shapes["m"] == OPEN
    assert shapes["k"] == Shape(None, ("x",))
    assert shapes["l[]"] == Shape(frozenset({"string"}), None)


def _hint(tmp_path, when) -> str:
    [(code, _, hint)] = _problems(tmp_path, when)
    assert code == "unknown-field"
    return hint


def test_an_unknown_field_hint_never_suggests_a_field_elsewhere_and_says_where_to_declare(tmp_path):
    """A near miss of a top-level field, written inside `evidence any`, is never suggested there;
    what `evidence[]` has is listed instead. The fields are read from the contract, so a field an
    analyst declares changes the probe, not the test."""
    contract = json.loads((ROOT / "schemas" / CONTRACT).read_text("utf-8"))
    inside = set(contract["properties"]["evidence"]["items"]["properties"])
    elsewhere = sorted(f for f in contract["properties"] if f not in inside and len(f) > 6)
    near_miss = elsewhere[0][:-1]                       # one letter short of a top-level field
    hint = _hint(tmp_path, {"field": "evidence", "any": {"field": near_miss, "exists": True}})
    assert f"'{elsewhere[0]}'" not in hint and f".{elsewhere[0]}'" not in hint
    if "did you mean" in hint:
        suggested = hint.split("did you mean '", 1)[1].split("'", 1)[0]
        assert suggested.removeprefix("evidence[].") in inside, hint
    else:
        assert hint.startswith("'evidence[]' has: ")           # what is there instead
    assert f"schemas/{CONTRACT} under #/properties/evidence/items/properties" in hint


def test_an_input_field_read_inside_a_list_is_pointed_to_the_outer_reference(tmp_path):
    """Issue 36, item 2: inside `evidence any`, a field of the input is named with `$.` in the hint,
    and written so it loads and reads the input."""
    contract = json.loads((ROOT / "schemas" / CONTRACT).read_text("utf-8"))
    inside = set(contract["properties"]["evidence"]["items"]["properties"])
    outer = sorted(f for f in contract["properties"] if f not in inside and
                   contract["properties"][f].get("type") == "string")[0]
    hint = _hint(tmp_path, {"field": "evidence", "any": {"field": "quote", "eq": {"field": outer}}})
    assert f"{{field: $.{outer}}}" in hint
    assert _load(tmp_path, {"field": "evidence", "any": {"field": "quote", "eq": {"field": f"$.{outer}"}}}).table("t")


def test_an_unknown_field_hint_names_the_def_to_extend(tmp_path):
    hint = _hint(tmp_path, {"field": "required_slots", "any": {"field": "lable", "eq": "x"}})
    assert hint.startswith("did you mean 'required_slots[].label'?")
    assert f"schemas/{CONTRACT} under #/$defs/slot/properties" in hint


def test_contract_fields_are_the_paths_contracts_reads():
    """The loader's field list and contracts.field_paths (used by the other table kinds) agree."""
    from groundrules.core.contracts import field_paths
    from groundrules.core.tables import load_schemas
    schemas = load_schemas(ROOT)
    for name, schema in schemas.by_name.items():
        if not name.startswith("kinds/"):
            assert set(field_shapes(schema)) == field_paths(schema), name
