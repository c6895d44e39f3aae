"""Inputs a host or a model can produce that are not plain, shallow JSON: a candidate that is
not a JSON value or is nested absurdly deep is repairable model output (never an exception, and
never a report that cannot be serialised); a schema whose $ref never terminates is refused."""
from __future__ import annotations

import copy

import pytest

from groundrules import GroundrulesError
from groundrules.core import canonical
from groundrules.verification import verify
from verify_support import tool
from verify_seed_examples import CANDIDATE, REQUEST, SCHEMA

ANY_FIELD = {"type": "object", "properties": {"v": {}}}
INPUT = "查询会议时间：开始时间09:00，结束时间10:00。"


def nested(depth: int) -> object:
    value: object = "x"
    for i in range(depth):
        value = {"a": value} if i % 2 else [value]
    return value


def any_value_candidate(value) -> dict:
    """A correct candidate whose one field (schema {}) holds `value`."""
    cand = copy.deepcopy(CANDIDATE)
    cand["extraction"] = {
        "data": {"v": value},
        "evidence": [{"path": "/data/v", "mode": "normalized", "sources": [{"sourceId": "input", "quote": "10:00"}]}],
        "descriptionChecks": [],
        "fieldResults": [{"path": "/data/v", "status": "extracted", "explanation": "明确。"}],
        "issues": []}
    return cand


def shape_codes(report: dict) -> list[str]:
    assert report["ok"] is False and report["repairable"] is True
    assert report["error"]["code"] == "MODEL_OUTPUT_INVALID"
    return [i["code"] for i in report["error"]["issues"]]


def placements(value):
    """`value` put where the contract allows anything: a statement, an intent's conditions, data."""
    req = copy.deepcopy(CANDIDATE)
    req["intent"]["requirements"] = [{"text": value}]
    cond = copy.deepcopy(CANDIDATE)
    cond["intent"]["intents"][0]["conditions"] = [value]
    return {"requirement": (REQUEST, SCHEMA, req), "conditions": (REQUEST, SCHEMA, cond),
            "data": ({"input": INPUT}, ANY_FIELD, any_value_candidate(value))}


NOT_JSON = {"nan": float("nan"), "inf": float("-inf"), "set": {1, 2}, "tuple": ("a", "b"), "bytes": b"x",
            "object": object(), "int key": {1: "x"}, "huge int": 10 ** 5000}


@pytest.mark.parametrize("where", ["requirement", "conditions", "data"])
def test_a_deeply_nested_candidate_is_model_output_not_a_crash(vbook, where):
    request, schema, cand = placements(nested(3000))[where]
    assert shape_codes(verify(request, schema, cand, vbook)) == ["CANDIDATE_SHAPE_INVALID"]
    envelope = tool({"request": request, "schema": schema, "candidate": cand}, vbook)
    # as a tool call, arguments that deep are refused before verification reads them
    assert (envelope["error"]["code"], envelope["error"]["field"][:9]) == ("INVALID_ARGUMENT", "candidate")
    canonical.dumps(envelope)


def test_a_reasonably_nested_value_still_verifies(vbook):
    report = verify({"input": INPUT}, ANY_FIELD, any_value_candidate(nested(30)), vbook)
    assert report["ok"] is True and report["data"]["data"]["v"] == nested(30)


@pytest.mark.parametrize("where", ["requirement", "conditions", "data"])
@pytest.mark.parametrize("name", sorted(NOT_JSON))
def test_a_value_json_cannot_carry_is_model_output(vbook, where, name):
    request, schema, cand = placements(NOT_JSON[name])[where]
    report = verify(request, schema, cand, vbook)
    assert shape_codes(report) == ["CANDIDATE_SHAPE_INVALID"]
    envelope = tool({"request": request, "schema": schema, "candidate": cand}, vbook)
    canonical.dumps(envelope)          # the envelope crosses a process boundary: it must serialise


@pytest.mark.parametrize("schema", [
    {"type": "object", "$defs": {"a": {"$ref": "#/$defs/a"}}, "properties": {"v": {"$ref": "#/$defs/a"}}},
    {"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
     "properties": {"v": {"$ref": "#/$defs/a"}}},
])
def test_a_schema_whose_ref_never_terminates_is_refused(vbook, schema):
    with pytest.raises(GroundrulesError) as info:
        verify({"input": INPUT}, schema, any_value_candidate("x"), vbook)
    assert info.value.code == "INVALID_ARGUMENT" and info.value.field == "schema"


def test_a_recursive_schema_that_consumes_its_value_is_fine(vbook):
    tree = {"type": "object", "$defs": {"node": {"type": "object", "properties": {"kids": {
        "type": "array", "items": {"$ref": "#/$defs/node"}}}}}, "properties": {"v": {"$ref": "#/$defs/node"}}}
    value = {"kids": [{"kids": [{"kids": []}]}]}
    assert verify({"input": INPUT}, tree, any_value_candidate(value), vbook)["ok"] is True
    bad = verify({"input": INPUT}, tree, any_value_candidate({"kids": [{"kids": 1}]}), vbook)
    assert [i["code"] for i in bad["error"]["issues"]] == ["DATA_VALUE_INVALID"]


def test_messages_quoting_the_candidate_stay_short(vbook):
    cand = copy.deepcopy(CANDIDATE)
    cand["extraction"]["evidence"][0]["sources"][0]["quote"] = "不在原文里的引用" * 20000
    cand["extraction"]["data"]["endTime"] = "很长的值" * 20000
    report = verify(REQUEST, SCHEMA, cand, vbook)
    issues = report["error"]["issues"]
    assert {i["code"] for i in issues} == {"QUOTE_NOT_FOUND", "EXACT_VALUE_MISMATCH"}
    assert all(len(i["message"]) < 400 for i in issues)
    # the grounding entry still carries the quote as cited: it is data, not a message
    assert report["grounding"][0]["quote"] == cand["extraction"]["evidence"][0]["sources"][0]["quote"]
