"""The condition grammar's semantics, driven by the data files in tests/cases/conditions/."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from groundrules import default_rulebook
from groundrules.core.conditions import compile_condition, explain_failure
from groundrules.core.dates import now_of

BUDGET_S = default_rulebook().table("limits").table_budget_ms / 1000   # the tables' own patterns' budget

CASES = Path(__file__).resolve().parent.parent / "cases" / "conditions"


def _groups():
    for path in sorted(CASES.glob("*.yaml")):
        if path.name == "broken.yaml":
            continue
        for n, group in enumerate(yaml.safe_load(path.read_text(encoding="utf-8"))):
            for m, case in enumerate(group["tests"]):
                yield pytest.param(group["condition"], case["data"], case["valid"], group.get("now"),
                                   id=f"{path.stem}:{n}:{m}:{group['description'][:40]}")


@pytest.mark.parametrize("condition, data, valid, now", list(_groups()))
def test_semantics(condition, data, valid, now):
    faults = []
    compiled = compile_condition(condition, ("when",), faults, budget_s=BUDGET_S)
    assert faults == []
    moment = None if now is None else now_of(now)
    assert compiled.test(data, moment) is valid
    # the trace agrees with the fast path: a failure is explained exactly when the test is false
    assert (explain_failure(compiled, data, moment) is None) is valid


BROKEN = yaml.safe_load((CASES / "broken.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", BROKEN, ids=[f"broken:{i}:{c['code']}" for i, c in enumerate(BROKEN)])
def test_broken_conditions_report_code_and_place(case):
    faults = []
    assert compile_condition(case["condition"], ("when",), faults, budget_s=BUDGET_S) is None
    assert [f.code for f in faults][:1] == [case["code"]]
    assert faults[0].path == ("when", *case["at"])


def test_misspelt_operator_gets_did_you_mean():
    faults = []
    compile_condition({"field": "a", "gte": 1}, (), faults, budget_s=BUDGET_S)
    assert faults[0].hint == "did you mean 'ge'?"


def test_failure_names_the_field_and_the_value_read():
    faults = []
    cond = compile_condition({"all": [{"field": "a", "eq": 1}, {"field": "m.n", "gt": 2}]}, ("when",), faults, budget_s=BUDGET_S)
    failure = explain_failure(cond, {"a": 1, "m": {"n": 2}})
    assert failure == {"at": "when.all[1]", "field": "m.n", "op": "gt", "read": 2, "expected": 2}
    missing = explain_failure(cond, {"a": 1})
    assert missing["read"] == "<missing>"


def test_fields_lists_item_paths():
    faults = []
    cond = compile_condition({"field": "missing", "any": {"field": "reason", "eq": "x"}}, (), faults, budget_s=BUDGET_S)
    assert [f for f, _ in cond.fields()] == ["missing", "missing[].reason"]
