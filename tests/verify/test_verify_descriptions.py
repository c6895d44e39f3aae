"""Which descriptions need a check (seed 002, "部分字段与跨字段约束"): the root description whenever
any field is selected, a field's description when that field is, also when the field's schema
reaches its description through `$ref`; descriptions nested inside a field's value are part of
that field's schema and are not checked one by one."""
from __future__ import annotations

import copy

from groundrules.verification import verify
from verify_seed_examples import CANDIDATE, REQUEST, WITHDRAW_REQUEST

LATER = "结束时间不得早于原材料中的开始时间。"
INPUT = REQUEST["input"]


def end_time_schema(end_time: dict, root_description: str | None = None) -> dict:
    schema = {"type": "object", "$defs": {"later": {"type": "string", "description": LATER}},
              "properties": {"endTime": end_time}}
    if root_description:
        schema["description"] = root_description
    return schema


def with_checks(checks: list) -> dict:
    cand = copy.deepcopy(CANDIDATE)
    cand["extraction"]["descriptionChecks"] = checks
    return cand


FIELD_CHECK = {"path": "/data/endTime", "verdict": "satisfied", "explanation": "10:00晚于09:00。",
               "sources": [{"sourceId": "input", "quote": "开始时间09:00，结束时间10:00"}]}


def codes(report: dict) -> list[tuple[str, str]]:
    return [(i["code"], i["path"]) for i in (report["error"] or {}).get("issues", [])]


def test_a_field_description_reached_through_ref_needs_its_check(vbook):
    schema = end_time_schema({"$ref": "#/$defs/later"})
    missing = verify({"input": INPUT}, schema, with_checks([]), vbook)
    assert codes(missing) == [("DESCRIPTION_CHECK_MISSING", "/data/endTime")]
    assert LATER in missing["error"]["issues"][0]["message"]
    assert verify({"input": INPUT}, schema, with_checks([FIELD_CHECK]), vbook)["ok"] is True


def test_the_field_own_description_wins_over_the_referenced_one(vbook):
    schema = end_time_schema({"$ref": "#/$defs/later", "description": "会议的结束时间。"})
    missing = verify({"input": INPUT}, schema, with_checks([]), vbook)
    assert "会议的结束时间。" in missing["error"]["issues"][0]["message"]


def test_descriptions_nested_inside_a_value_are_not_checked_one_by_one(vbook):
    schema = end_time_schema({"anyOf": [{"$ref": "#/$defs/later"}, {"type": "null"}]})
    assert verify({"input": INPUT}, schema, with_checks([]), vbook)["ok"] is True
    unexpected = verify({"input": INPUT}, schema, with_checks([FIELD_CHECK]), vbook)
    assert codes(unexpected) == [("DESCRIPTION_CHECK_UNEXPECTED", "/extraction/descriptionChecks/0/path")]


def test_the_seed_withdrawal_selects_no_field_so_no_root_check_applies(vbook):
    """The seed's withdrawal request, literally: fields [] under the meeting_time schema (whose
    root description applies only when some field is selected)."""
    cand = {"intent": {"input": WITHDRAW_REQUEST["input"], "normalizedInput": "不修改代码，只分析登录失败的原因。",
                       "primaryIntent": "分析登录失败的原因", "requirements": ["只分析原因"],
                       "intents": [{"id": "i1", "action": "analyze", "target": "登录失败的原因",
                                    "requirements": [], "status": "ready"}],
                       "prohibitions": ["不修改代码"]},
            "extraction": {"data": {}, "evidence": [], "descriptionChecks": [], "fieldResults": [], "issues": []}}
    report = verify(WITHDRAW_REQUEST, "meeting_time", cand, vbook)
    assert report["ok"] is True and report["warnings"] == []
    assert report["data"]["data"] == {} and report["data"]["prohibitions"] == ["不修改代码"]
    root = {"path": "/data", "verdict": "satisfied", "explanation": "-", "sources": []}
    cand["extraction"]["descriptionChecks"] = [root]
    assert codes(verify(WITHDRAW_REQUEST, "meeting_time", cand, vbook)) == [
        ("DESCRIPTION_CHECK_UNEXPECTED", "/extraction/descriptionChecks/0/path")]
