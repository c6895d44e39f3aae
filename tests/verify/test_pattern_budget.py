"""Issue 13, item 4: a caller's pattern cannot freeze verification. An inline schema's `pattern`
(and `patternProperties`) runs with the `limits` table's time budget; past it the call is refused
with PATTERN_TIMEOUT. The tables' own phrase scans fail closed: a scan that times out refuses,
it never drops the PROHIBITION_UNREFLECTED it guards."""
from __future__ import annotations

import copy

import pytest

from groundrules.core.bounded_patterns import DEFAULT_BUDGET_MS
from groundrules.verification import patterns
from test_verify_robustness import INPUT, any_value_candidate
from verify_seed_examples import CANDIDATE, WITHDRAW_REQUEST
from verify_support import tool

BACKTRACKS = r"^(a|a)*$"            # exponential for stdlib re and for `regex` alike
VALUE = "a" * 40 + "!"


def schema_with(field: dict) -> dict:
    return {"type": "object", "properties": {"v": field}}


@pytest.mark.parametrize("field, value", [
    ({"type": "string", "pattern": BACKTRACKS}, VALUE),
    ({"type": "object", "patternProperties": {BACKTRACKS: {}}}, {VALUE: 1}),
    ({"type": "object", "patternProperties": {BACKTRACKS: {}}, "additionalProperties": False}, {VALUE: 1}),
    ({"type": "object", "propertyNames": {"pattern": BACKTRACKS}}, {VALUE: 1}),
    ({"type": "array", "items": {"type": "string", "pattern": BACKTRACKS}}, ["ok", VALUE]),
], ids=["pattern", "patternProperties", "additionalProperties", "propertyNames", "items"])
def test_a_backtracking_pattern_is_refused_within_its_budget(vbook, field, value):
    envelope = tool({"request": {"input": INPUT}, "schema": schema_with(field),
                     "candidate": any_value_candidate(value)}, vbook)
    assert envelope["ok"] is False and envelope["error"]["code"] == "PATTERN_TIMEOUT", envelope["error"]
    limits = vbook.tables.get("limits")
    assert envelope["error"]["budget_ms"] == (limits.pattern_budget_ms if limits else DEFAULT_BUDGET_MS)


def test_a_pattern_within_budget_still_decides(vbook):
    field = {"type": "string", "pattern": "^[0-9]{2}:[0-9]{2}$"}
    assert tool({"request": {"input": INPUT}, "schema": schema_with(field),
                 "candidate": any_value_candidate("10:00")}, vbook)["ok"] is True
    refused = tool({"request": {"input": INPUT}, "schema": schema_with(field),
                    "candidate": any_value_candidate("10点")}, vbook)
    assert refused["ok"] is False and refused["error"]["code"] == "MODEL_OUTPUT_INVALID"


def test_a_phrase_scan_that_times_out_fails_closed(vbook, monkeypatch):
    request = copy.deepcopy(WITHDRAW_REQUEST)
    request["input"] = "取消修改，先只分析原因。" * 2000
    candidate = copy.deepcopy(CANDIDATE)
    monkeypatch.setattr(patterns, "REGEX_TIMEOUT_S", 1e-9)
    envelope = tool({"request": request, "instance": "meeting_time", "candidate": candidate}, vbook)
    assert envelope["ok"] is False and envelope["error"]["code"] == "PATTERN_TIMEOUT", envelope
