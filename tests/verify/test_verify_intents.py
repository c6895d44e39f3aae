"""Intents (seed 002, "多动作与多对象", "撤回与修正"): one intent per action and object, unique
ids, no intent carrying on a withdrawn action, and explicit prohibitions or withdrawals kept as
constraints (each repairable model output by default, severity in the issue catalogue);
restrictions (先只…) a candidate does not reflect are warned about."""
from __future__ import annotations

import shutil

import pytest

from groundrules import load_rulebook
from groundrules.verification import verify
from verify_support import ROOT, VERIFY_TABLES

EMPTY = {"type": "object", "properties": {}}
TWO = "查询订单 A，并分析订单 B 的延迟原因"
WITHDRAW = "取消修改，先只分析原因。"
CONTEXT = [{"role": "user", "content": "修复登录失败。"},
           {"role": "assistant", "content": "尚未修改代码，准备先分析原因。"}]


def intent(inp, intents, requirements=(), prohibitions=()):
    return {"input": inp, "normalizedInput": inp, "primaryIntent": intents[0]["target"] if intents else "",
            "requirements": list(requirements), "intents": intents, "prohibitions": list(prohibitions)}


def item(i, action, target, requirements=()):
    return {"id": i, "action": action, "target": target, "requirements": list(requirements), "status": "ready"}


def run(vbook, inp, intent_part, context=None):
    request = {"input": inp, "fields": []}
    if context is not None:
        request["context"] = context
    extraction = {"data": {}, "evidence": [], "descriptionChecks": [], "fieldResults": [], "issues": []}
    return verify(request, EMPTY, {"intent": intent_part, "extraction": extraction}, vbook)


def codes(issues):
    return [i["code"] for i in issues]


def test_two_objects_as_two_intents_pass_clean(vbook):
    report = run(vbook, TWO, intent(TWO, [item("i1", "query", "订单 A"), item("i2", "analyze", "订单 B 的延迟原因")]))
    assert report["ok"] is True and report["warnings"] == []
    assert [(i["action"], i["target"]) for i in report["data"]["intents"]] == [
        ("query", "订单 A"), ("analyze", "订单 B 的延迟原因")]


def test_seed002_two_objects_in_one_vague_target_are_repairable_model_output(vbook):
    report = run(vbook, TWO, intent(TWO, [item("i1", "query_and_analyze", "订单 A 和订单 B 的延迟原因")]))
    assert report["ok"] is False and report["repairable"] is True
    assert report["error"]["code"] == "MODEL_OUTPUT_INVALID" and report["error"]["stage"] == "intent"
    assert [(i["code"], i["path"]) for i in report["error"]["issues"]] == [
        ("INTENT_TARGET_JOINED", "/intent/intents/0/target"), ("INTENT_ACTIONS_MERGED", "/intent/intents")]


def test_seed002_two_actions_on_one_intent_are_repairable_even_with_a_plain_target(vbook):
    report = run(vbook, TWO, intent(TWO, [item("i1", "query", "订单")]))
    assert codes(report["error"]["issues"]) == ["INTENT_ACTIONS_MERGED"] and report["repairable"] is True


def test_duplicate_intent_ids_are_repairable_model_output(vbook):
    report = run(vbook, TWO, intent(TWO, [item("i1", "query", "订单 A"), item("i1", "analyze", "订单 B 的延迟原因")]))
    assert report["error"]["code"] == "MODEL_OUTPUT_INVALID" and report["error"]["stage"] == "intent"
    assert [(i["code"], i["path"]) for i in report["error"]["issues"]] == [("INTENT_ID_DUPLICATE", "/intent/intents/1/id")]
    assert report["repairable"] is True


def test_intent_input_must_repeat_the_request(vbook):
    report = run(vbook, TWO, intent("查询订单 A", [item("i1", "query", "订单 A"), item("i2", "analyze", "订单 B")]))
    assert codes(report["error"]["issues"]) == ["INTENT_INPUT_MISMATCH"]


def test_withdrawal_reflected_passes_clean(vbook):
    report = run(vbook, WITHDRAW, intent(WITHDRAW, [item("i1", "analyze", "登录失败的原因")],
                                         requirements=["只分析原因"], prohibitions=["不修改代码"]), CONTEXT)
    assert report["ok"] is True and report["warnings"] == []
    assert report["data"]["prohibitions"] == ["不修改代码"]


@pytest.mark.parametrize("requirements,prohibitions", [
    (["先只分析登录失败的原因，不做修改"], []),                      # both in one requirement
    ([], [{"text": "修改", "scope": "代码"}, {"text": "只分析原因"}]),  # statements as objects
])
def test_reflection_wording_may_vary(vbook, requirements, prohibitions):
    report = run(vbook, WITHDRAW, intent(WITHDRAW, [item("i1", "analyze", "原因")], requirements, prohibitions),
                 CONTEXT)
    assert report["warnings"] == []


def test_seed002_a_dropped_withdrawal_is_repairable_model_output(vbook):
    """当前明确禁止修改时，结果应保留相应约束: 取消修改 with prohibitions [] is refused; the restriction
    先只分析原因 nobody reflects stays a warning."""
    report = run(vbook, WITHDRAW, intent(WITHDRAW, [item("i1", "analyze", "登录失败的原因")]), CONTEXT)
    assert report["ok"] is False and report["repairable"] is True
    assert report["error"]["code"] == "MODEL_OUTPUT_INVALID"
    assert [(i["code"], i["path"]) for i in report["error"]["issues"]] == [("PROHIBITION_DROPPED", "/intent/prohibitions")]
    assert "取消修改" in report["error"]["issues"][0]["message"]
    assert codes(report["warnings"]) == ["PROHIBITION_UNREFLECTED"] and "先只分析原因" in report["warnings"][0]["message"]


def test_seed002_continuing_a_withdrawn_action_is_repairable_model_output(vbook):
    """撤回与修正: 需要核对的是当前"只分析"的有效请求，而不是继续执行已经撤回的"修复"."""
    report = run(vbook, WITHDRAW, intent(WITHDRAW, [item("i1", "fix", "登录失败")]), CONTEXT)
    assert report["ok"] is False and report["repairable"] is True
    assert [(i["code"], i["path"]) for i in report["error"]["issues"]] == [
        ("INTENT_WITHDRAWN_CONTINUED", "/intent/intents/0/action"), ("PROHIBITION_DROPPED", "/intent/prohibitions")]
    assert "取消修改" in report["error"]["issues"][0]["message"]
    assert codes(report["warnings"]) == ["PROHIBITION_UNREFLECTED"]


@pytest.mark.parametrize("text, action", [("取消刚才的部署，先看日志。", "deploy"), ("不用再修复了，先看日志。", "修复"),
                                          ("无需通知客户，只查询订单。", "notify")])
def test_seed002_each_withdrawn_family_is_caught(vbook, text, action):
    report = run(vbook, text, intent(text, [item("i1", action, "x")]))
    assert "INTENT_WITHDRAWN_CONTINUED" in codes(report["error"]["issues"])


def test_seed002_the_current_request_after_a_withdrawal_is_not_refused(vbook):
    report = run(vbook, WITHDRAW, intent(WITHDRAW, [item("i1", "analyze", "修改登录后失败的原因")],
                                         requirements=["只分析原因"], prohibitions=["不修改代码"]), CONTEXT)
    assert report["ok"] is True and report["warnings"] == []


def test_per_intent_requirements_count_as_reflection(vbook):
    report = run(vbook, WITHDRAW, intent(WITHDRAW, [item("i1", "analyze", "原因", ["只分析，不修改"])]), CONTEXT)
    assert report["warnings"] == []


@pytest.mark.parametrize("text", ["别的订单也查一下。", "不要紧，慢慢来。", "分别查询订单 A 和订单 B。",
                                  "帮我取消订单 A。", "原因暂不清楚。"])
def test_negative_phrases_never_warn(vbook, text):
    targets = {"分别查询订单 A 和订单 B。": [item("i1", "query", "订单 A"), item("i2", "query", "订单 B")]}
    report = run(vbook, text, intent(text, targets.get(text, [item("i1", "query", "订单")])))
    assert "PROHIBITION_UNREFLECTED" not in codes(report["warnings"])


@pytest.mark.parametrize("text,phrase", [("不要修改代码。", "不要修改代码"), ("别重启服务。", "别重启服务"),
                                         ("禁止删除生产数据。", "禁止删除生产数据"), ("取消刚才的部署。", "取消刚才的部署")])
def test_each_negation_kind_must_be_kept(vbook, text, phrase):
    report = run(vbook, text, intent(text, [item("i1", "query", "日志")]))
    assert codes(report["error"]["issues"]) == ["PROHIBITION_DROPPED"] and report["warnings"] == []
    assert phrase in report["error"]["issues"][0]["message"]


def test_a_restriction_nobody_reflects_is_a_warning(vbook):
    text = "先只看日志。"
    report = run(vbook, text, intent(text, [item("i1", "query", "日志")]))
    assert report["ok"] is True and codes(report["warnings"]) == ["PROHIBITION_UNREFLECTED"]
    assert "先只看日志" in report["warnings"][0]["message"]


def test_a_negation_found_by_two_cues_is_reported_once(vbook):
    text = "暂不需要通知客户。"      # 暂不… and 不需要… overlap
    report = run(vbook, text, intent(text, [item("i1", "check", "客户")]))
    assert codes(report["error"]["issues"]) == ["PROHIBITION_DROPPED"]
    assert "暂不需要通知客户" in report["error"]["issues"][0]["message"]


def test_seed002_a_host_relaxes_an_intent_issue_to_a_warning_in_its_tables(tmp_path):
    """The severity of each intent issue is the catalogue's: error: null makes it a warning."""
    for folder in ("rules", "schemas", "locks"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    catalogue = tmp_path / "rules" / "verify_issues.yaml"
    text = catalogue.read_text(encoding="utf-8")
    for code in ("INTENT_WITHDRAWN_CONTINUED", "PROHIBITION_DROPPED", "INTENT_TARGET_JOINED", "INTENT_ACTIONS_MERGED"):
        head, tail = text.split(f"  {code}:\n", 1)
        tail = tail.replace("error: MODEL_OUTPUT_INVALID\n    repairable: true", "error: null\n    repairable: false", 1)
        text = f"{head}  {code}:\n{tail}"
    catalogue.write_text(text, encoding="utf-8")
    relaxed = load_rulebook(tmp_path, files=[tmp_path / f for f in VERIFY_TABLES])
    report = run(relaxed, WITHDRAW, intent(WITHDRAW, [item("i1", "fix", "登录失败")]), CONTEXT)
    assert report["ok"] is True
    assert {"INTENT_WITHDRAWN_CONTINUED", "PROHIBITION_DROPPED"} <= set(codes(report["warnings"]))
    report = run(relaxed, TWO, intent(TWO, [item("i1", "query_and_analyze", "订单 A 和订单 B 的延迟原因")]))
    assert report["ok"] is True
    assert codes(report["warnings"]) == ["INTENT_TARGET_JOINED", "INTENT_ACTIONS_MERGED"]
