"""Field selection (seed 002, "字段范围"): omitted -> all, a list -> those, [] -> none; an unknown
field is refused; the selection limits `data` only, never the intent part."""
from __future__ import annotations

import copy

import pytest

from groundrules import GroundrulesError
from groundrules.verification import verify

INPUT = "查询订单 A-1024 的备注，备注：周五前发货。"
INTENT = {"input": INPUT, "normalizedInput": INPUT, "primaryIntent": "查询订单备注",
          "requirements": ["只查询，不修改订单"],
          "intents": [{"id": "i1", "action": "query", "target": "订单 A-1024 的备注",
                       "conditions": ["订单存在"], "requirements": [], "status": "ready"}],
          "prohibitions": ["不修改订单"]}
VALUES = {"orderId": "A-1024", "note": "周五前发货"}


def candidate(fields: list[str]) -> dict:
    """A correct candidate extracting exactly `fields` (orderId carries a field description)."""
    checks = [{"path": "/data/orderId", "verdict": "satisfied", "explanation": "原样出现。",
               "sources": [{"sourceId": "input", "quote": "订单 A-1024"}]}] if "orderId" in fields else []
    return {"intent": copy.deepcopy(INTENT), "extraction": {
        "data": {f: VALUES[f] for f in fields},
        "evidence": [{"path": f"/data/{f}", "mode": "exact",
                      "sources": [{"sourceId": "input", "quote": VALUES[f]}]} for f in fields],
        "descriptionChecks": checks,
        "fieldResults": [{"path": f"/data/{f}", "status": "extracted", "explanation": "明确。"} for f in fields],
        "issues": []}}


# the seed's table: fields -> selected extension
TABLE = [
    (None, ["orderId", "note"]),
    (["orderId"], ["orderId"]),
    (["note"], ["note"]),
    ([], []),
]


@pytest.mark.parametrize("fields,selected", TABLE, ids=["omitted", "orderId", "note", "none"])
def test_selection_table(vbook, fields, selected):
    request = {"input": INPUT} if fields is None else {"input": INPUT, "fields": fields}
    report = verify(request, "order_note", candidate(selected), vbook)
    assert report["ok"] is True, report["error"]
    assert list(report["data"]["data"]) == selected
    # the intent part is kept whole whatever the selection
    assert {k: v for k, v in report["data"].items() if k != "data"} == INTENT


@pytest.mark.parametrize("fields,selected", TABLE, ids=["omitted", "orderId", "note", "none"])
def test_every_unselected_key_in_data_is_model_output(vbook, fields, selected):
    request = {"input": INPUT} if fields is None else {"input": INPUT, "fields": fields}
    extra = [f for f in VALUES if f not in selected]
    cand = candidate(selected)
    cand["extraction"]["data"].update({f: VALUES[f] for f in extra})
    report = verify(request, "order_note", cand, vbook)
    if not extra:
        assert report["ok"] is True
        return
    assert report["error"]["code"] == "MODEL_OUTPUT_INVALID"
    unselected = [i["path"] for i in report["error"]["issues"] if i["code"] == "DATA_FIELD_UNSELECTED"]
    assert unselected == [f"/data/{f}" for f in extra]


def test_unknown_key_in_data_is_model_output(vbook):
    cand = candidate(["note"])
    cand["extraction"]["data"]["customer"] = "王先生"
    report = verify({"input": INPUT}, "order_note", cand, vbook)
    assert [(i["code"], i["path"]) for i in report["error"]["issues"]][:1] == [("DATA_FIELD_UNKNOWN", "/data/customer")]


@pytest.mark.parametrize("fields,named", [(["orderID"], "orderID"), (["note", "memo"], "memo"),
                                          (["note", "note"], "note")])
def test_unknown_or_repeated_field_refuses_the_request(vbook, fields, named):
    with pytest.raises(GroundrulesError) as info:
        verify({"input": INPUT, "fields": fields}, "order_note", candidate([]), vbook)
    assert info.value.code == "INVALID_ARGUMENT"
    assert (info.value.field, info.value.details["name"]) == ("request.fields", named)
    assert named in info.value.message


def test_required_applies_only_to_selected_fields(vbook):
    """meeting_time requires startTime and endTime; selecting endTime asks for endTime only."""
    inp = "查询会议时间：开始时间09:00，结束时间10:00。"
    cand = {"intent": {"input": inp, "normalizedInput": inp, "primaryIntent": "查询会议时间", "requirements": [],
                       "intents": [{"id": "i1", "action": "query", "target": "会议时间", "requirements": [],
                                    "status": "ready"}], "prohibitions": []},
            "extraction": {"data": {"endTime": "10:00"},
                           "evidence": [{"path": "/data/endTime", "mode": "exact",
                                         "sources": [{"sourceId": "input", "quote": "10:00"}]}],
                           "descriptionChecks": [{"path": "/data", "verdict": "satisfied", "explanation": "晚于开始。",
                                                  "sources": [{"sourceId": "input", "quote": "开始时间09:00"}]}],
                           "fieldResults": [{"path": "/data/endTime", "status": "extracted", "explanation": "明确。"}],
                           "issues": []}}
    assert verify({"input": inp, "fields": ["endTime"]}, "meeting_time", cand, vbook)["ok"] is True
    both = verify({"input": inp}, "meeting_time", cand, vbook)
    assert [i["code"] for i in both["error"]["issues"]] == ["FIELD_RESULT_MISSING"]
    assert both["error"]["issues"][0]["path"] == "/data/startTime"


def test_required_selected_field_missing_from_material_fails_the_data_stage(vbook):
    inp = "查询会议时间：结束时间10:00。"
    cand = {"intent": {"input": inp, "normalizedInput": inp, "primaryIntent": "查询会议时间", "requirements": [],
                       "intents": [{"id": "i1", "action": "query", "target": "会议时间", "requirements": [],
                                    "status": "ready"}], "prohibitions": []},
            "extraction": {"data": {}, "evidence": [],
                           "descriptionChecks": [{"path": "/data", "verdict": "undetermined",
                                                  "explanation": "没有开始时间。", "sources": []}],
                           "fieldResults": [{"path": "/data/startTime", "status": "missing",
                                             "explanation": "输入没有开始时间。"}],
                           "issues": []}}
    report = verify({"input": inp, "fields": ["startTime"]}, "meeting_time", cand, vbook)
    assert report["error"]["code"] == "DATA_EXTRACTION_FAILED" and report["error"]["stage"] == "data"
    assert [i["code"] for i in report["error"]["issues"]] == ["DATA_DESCRIPTION_UNDETERMINED",
                                                              "DATA_REQUIRED_FIELD_MISSING"]
    assert report["error"]["partialResult"]["data"] == {}
