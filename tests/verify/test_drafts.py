"""A drafted candidate, and `not_applicable` for an optional field the material does not hold
(issue 32, items 4): what a model fills in, built from the request and the schema."""
from __future__ import annotations

import copy

from groundrules import Caller, Service, verify
from groundrules.verification import draft_candidate

SCHEMA = {"type": "object", "description": "订单号须原文",
          "properties": {"orderId": {"type": "string", "description": "原文中的订单号"},
                         "note": {"type": "string", "description": "备注须原文"}},
          "required": ["orderId"], "additionalProperties": False}
REQUEST = {"input": "查询订单 A123 的状态"}


def filled(note_verdict: str = "not_applicable", data: dict | None = None) -> dict:
    candidate = draft_candidate(REQUEST, SCHEMA)
    candidate["intent"].update(primaryIntent="查询订单状态", intents=[
        {"id": "i1", "action": "query", "target": "订单 A123", "requirements": [], "status": "ready"}])
    extraction = candidate["extraction"]
    extraction["data"] = data if data is not None else {"orderId": "A123"}
    extraction["evidence"] = [{"path": "/data/orderId", "mode": "exact", "sources": [{"sourceId": "input", "quote": "A123"}]}]
    for check in extraction["descriptionChecks"]:
        if check["path"] == "/data/note":
            check["verdict"] = note_verdict
        else:
            check.update(verdict="satisfied", explanation="订单号原文", sources=[{"sourceId": "input", "quote": "A123"}])
    extraction["fieldResults"][0].update(status="extracted", explanation="订单号明确")
    return candidate


def test_a_draft_has_every_part_the_request_and_schema_call_for():
    draft = draft_candidate(dict(REQUEST, fields=["note"]), SCHEMA)
    assert draft["intent"]["input"] == REQUEST["input"]
    assert [r["path"] for r in draft["extraction"]["fieldResults"]] == ["/data/note"]
    checks = {c["path"]: c["verdict"] for c in draft["extraction"]["descriptionChecks"]}
    assert checks == {"/data": "undetermined", "/data/note": "not_applicable"}
    assert not verify(REQUEST, SCHEMA, draft_candidate(REQUEST, SCHEMA))["ok"]     # unfilled, it never passes


def test_an_optional_field_absent_from_data_may_be_not_applicable():
    report = verify(REQUEST, SCHEMA, filled())
    assert report["ok"], report["error"]


def test_not_applicable_anywhere_else_is_a_repairable_model_output_error():
    for candidate in (filled(data={"orderId": "A123", "note": "x"}),):
        report = verify(REQUEST, SCHEMA, candidate)
        assert not report["ok"] and report["repairable"]
        assert "DESCRIPTION_NOT_APPLICABLE_MISUSED" in [i["code"] for i in report["error"]["issues"]]
    required = filled()
    for check in required["extraction"]["descriptionChecks"]:
        if check["path"] == "/data/orderId":
            check["verdict"] = "not_applicable"
    report = verify(REQUEST, SCHEMA, required)
    assert "DESCRIPTION_NOT_APPLICABLE_MISUSED" in [i["code"] for i in report["error"]["issues"]]


def test_draft_candidate_is_a_tool_answering_what_the_library_does():
    caller = Caller("a", "agent", ())
    envelope = Service().call("draft_candidate", {"request": REQUEST, "schema": copy.deepcopy(SCHEMA)}, caller)
    assert envelope["ok"] and envelope["data"] == draft_candidate(REQUEST, SCHEMA)
