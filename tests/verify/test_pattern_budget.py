"""Issue 13, item 4: a caller's pattern cannot freeze verification. An inline schema's `pattern`
(and `patternProperties`) runs with the `limits` table's time budget; past it the call is refused
with PATTERN_TIMEOUT. The tables' own phrase scans run with the limits table's budget for the
tables' own patterns (patterns.table_budget_ms) and fail closed: a scan that times out refuses, it
never drops the PROHIBITION_UNREFLECTED it guards."""
from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from groundrules import load_rulebook
from groundrules.core.bounded_patterns import DEFAULT_BUDGET_MS
from table_edits import TableFile
from test_verify_robustness import INPUT, any_value_candidate
from verify_seed_examples import CANDIDATE, WITHDRAW_REQUEST
from verify_support import ROOT, VERIFY_TABLES, tool

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


def budget_book(tmp_path: Path, ms: int):
    """This part's tables and the limits table, copied, with the tables' own pattern budget
    (limits.yaml patterns.table_budget_ms) set to `ms`."""
    root = tmp_path / f"budget_{ms}"
    for folder in ("rules", "schemas", "locks"):
        shutil.copytree(ROOT / folder, root / folder)
    TableFile(root / "rules" / "limits.yaml").write_scalar(("patterns", "table_budget_ms"), ms)
    return load_rulebook(root, files=[root / f for f in [*VERIFY_TABLES, "rules/limits.yaml"]])


def test_a_phrase_scan_runs_within_the_limits_tables_budget_and_fails_closed_past_it(tmp_path):
    request = copy.deepcopy(WITHDRAW_REQUEST)
    request["input"] = "取消修改，先只分析原因。" * 2000       # each phrase scan takes milliseconds
    payload = {"request": request, "instance": "meeting_time", "candidate": copy.deepcopy(CANDIDATE)}
    tight = tool(payload, budget_book(tmp_path, 1))
    assert tight["ok"] is False and tight["error"]["code"] == "PATTERN_TIMEOUT", tight
    assert tight["error"]["budget_ms"] == 1
    roomy = tool(payload, budget_book(tmp_path, 10_000))      # the same scans, given the time, decide
    assert roomy["ok"] is False and roomy["error"]["code"] == "MODEL_OUTPUT_INVALID", roomy["error"]
