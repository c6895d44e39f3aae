"""How a condition reads in a grid cell: written without its column's field, every operator once."""
from __future__ import annotations

import pytest

from groundrules import default_rulebook
from groundrules.core.conditions import OPERATORS, compile_condition
from groundrules.analyst.report.condtext import fields_read, text

BUDGET_S = default_rulebook().table("limits").table_budget_ms / 1000   # the tables' own patterns' budget

CASES = [  # (condition, column, how it reads)
    ({"field": "status", "eq": "partial"}, "status", "= partial"),
    ({"field": "status", "ne": "partial"}, None, "status ≠ partial"),
    ({"field": "n", "lt": 3}, "n", "< 3"),
    ({"field": "n", "le": 3}, "n", "≤ 3"),
    ({"field": "n", "gt": 0}, "n", "> 0"),
    ({"field": "n", "ge": {"field": "m"}}, "n", "≥ m"),
    ({"field": "code", "eq": "3"}, "code", '= "3"'),
    ({"field": "flag", "eq": True}, "flag", "= true"),
    ({"field": "name", "eq": "a b"}, "name", '= "a b"'),
    ({"field": "tool", "in": ["log", "add"]}, "tool", "in [log, add]"),
    ({"field": "tool", "not_in": ["log"]}, "tool", "not in [log]"),
    ({"field": "x", "exists": True}, "x", "exists"),
    ({"field": "x", "exists": False}, "x", "absent"),
    ({"field": "xs", "empty": False}, "xs", "not empty"),
    ({"field": "q", "matches": "^human[.:]"}, "q", "matches /^human[.:]/"),
    ({"field": "seen", "before": {"now": "-P1Y"}}, "seen", "before now -P1Y"),
    ({"field": "seen", "after": "2024-05-01"}, "seen", "after 2024-05-01"),
    ({"field": "missing", "any": {"field": "reason", "eq": "r"}}, "missing", "some item (reason = r)"),
    ({"field": "xs", "all": {"field": "ok", "eq": True}}, "xs", "every item (ok = true)"),
    ({"field": "xs", "none": {"field": "ok", "eq": True}}, "xs", "no item (ok = true)"),
    ({"field": "xs", "count": {"where": {"field": "r", "ne": "u"}, "ge": 2}}, "xs", "count where r ≠ u ≥ 2"),
    ({"field": "xs", "count": {"gt": 0}}, "xs", "count > 0"),
    ({"not": {"field": "x", "exists": True}}, "x", "not exists"),
    ({"not": {"field": "x", "eq": 1}}, "x", "not (= 1)"),
    ({"any": [{"field": "a", "gt": 0}, {"field": "b", "empty": False}]}, None, "a > 0 or b not empty"),
    ({"all": [{"field": "a", "eq": 1}, {"any": [{"field": "b", "eq": 2}, {"field": "c", "eq": 3}]}]}, None,
     "a = 1 and (b = 2 or c = 3)"),
]


@pytest.mark.parametrize("cond, column, reads", CASES)
def test_a_condition_reads_as_written(cond, column, reads):
    faults: list = []
    compiled = compile_condition(cond, (), faults, budget_s=BUDGET_S)
    assert faults == [] and text(compiled, column) == reads


def test_every_operator_has_a_reading():
    used = {op for cond, _, _ in CASES for op in _ops(cond)}
    assert set(OPERATORS) <= used


def test_fields_read_are_the_top_level_fields_in_order():
    compiled = compile_condition({"any": [{"field": "b", "eq": 1}, {"field": "a", "any": {"field": "z", "eq": 1}},
                                          {"field": "b", "gt": 0}]}, (), [], budget_s=BUDGET_S)
    assert fields_read(compiled) == ["b", "a"]


def _ops(cond) -> set:
    if isinstance(cond, dict):
        return {k for k in cond if k in OPERATORS} | {o for v in cond.values() for o in _ops(v)}
    if isinstance(cond, list):
        return {o for v in cond for o in _ops(v)}
    return set()
