"""Every scenario of seed 003, asserted on what a host relies on (the snapshots pin the rest)."""
from __future__ import annotations

import copy

import pytest

from fold_support import group, outcome


def slots(result: dict, scope: str = "demand_1") -> dict:
    return result["data"]["state"]["scopes"][scope]["slots"]


def test_a_then_b_read_as_correction(rulebook):
    result = outcome(group("seed_region")["read_as_correct"], rulebook)
    region = slots(result)["region"]
    assert (region["status"], region["value"], region["events"]) == ("filled", "B 地", ["e2"])
    assert [h["outcome"] for h in region["history"]] == ["accept", "replace"]
    assert result["data"]["evidence"][0]["record"]["content"] == "我们公司登记地在 A 地"   # E07 stays


def test_a_then_b_read_as_two_fields(rulebook):
    s = slots(outcome(group("seed_region")["read_as_two_fields"], rulebook))
    assert (s["company_region"]["value"], s["delivery_region"]["value"]) == ("A 地", "B 地分部")
    assert {s["company_region"]["status"], s["delivery_region"]["status"]} == {"filled"}


def test_a_then_b_read_as_new_scope(rulebook):
    result = outcome(group("seed_region")["read_as_new_scope"], rulebook)
    assert result["data"]["state"]["current_scope"] == "demand_2"
    assert "delivery_region" not in slots(result)
    new = slots(result, "demand_2")
    assert new["delivery_region"]["value"] == "B 地分部"
    assert new["company_region"]["inherited_from"] == "demand_1"


def test_unresolved_scope_asks_instead_of_defaulting(rulebook):
    result = outcome(group("seed_region")["unresolved_asks_the_seed_question"], rulebook)
    s = slots(result)
    assert s["company_region"]["status"] == s["delivery_region"]["status"] == "needs_clarification"
    assert s["company_region"]["value"] == "A 地" and s["delivery_region"]["value"] is None
    (clar,) = result["data"]["state"]["clarifications"]
    assert [r["id"] for r in clar["readings"]] == ["delivery", "correction"]
    assert clar["question"] == "这批产品是交付到 B 地分部吗？公司登记地仍按 A 地记录可以吗？"   # seed §七, verbatim


def test_an_answer_resolves_the_clarification(rulebook):
    result = outcome(group("seed_region")["unresolved_then_answered"], rulebook)
    s = slots(result)
    assert (s["delivery_region"]["status"], s["company_region"]["status"]) == ("filled", "confirmed")
    (clar,) = result["data"]["state"]["clarifications"]
    assert (clar["status"], clar["resolved_by"]) == ("resolved", "e3")


def test_service_number_is_locked_but_never_becomes_the_phone(rulebook):
    cases = group("seed_contact")
    result = outcome(cases["service_number_is_locked_but_never_the_phone"], rulebook)
    assert "phone" not in slots(result)
    (lock,) = result["data"]["state"]["locks"]
    assert lock["kind"] == "phone" and "dismissed" in lock["disposition"] and lock["used_by"] == []
    assert outcome(cases["service_number_as_phone_is_refused"], rulebook)["error"]["code"] == "INSUFFICIENT_EVIDENCE"
    assert outcome(cases["service_number_lock_cited_against_its_dismissal"],
                   rulebook)["error"]["code"] == "DISPOSITION_CONFLICT"
    assert outcome(cases["service_number_lock_dropped"], rulebook)["error"]["code"] == "LOCK_DROPPED"


def test_one_piece_of_evidence_declines_phone_and_sets_wechat(rulebook):
    result = outcome(group("seed_contact")["one_message_declines_phone_and_sets_wechat"], rulebook)
    s = slots(result)
    assert (s["phone"]["status"], s["wechat"]["status"], s["wechat"]["value"]) == ("declined", "filled", "wx_wang01")
    assert s["phone"]["evidence"] == s["wechat"]["evidence"] == ["E41"]
    assert result["data"]["evidence"][0]["cited_by"] == ["e1", "e2"]


def test_add_me_on_wechat_is_evidence_but_no_wechat_value(rulebook):
    cases = group("seed_contact")
    assert outcome(cases["add_me_on_wechat_gives_no_wechat_value"], rulebook)["error"]["code"] == "INSUFFICIENT_EVIDENCE"
    assert slots(outcome(cases["add_me_on_wechat_supports_a_preference"], rulebook))["preferred_channel"]["value"] == "wechat"


def test_phone_declined_and_then_volunteered(rulebook):
    cases = group("seed_contact")
    assert slots(outcome(cases["phone_declined"], rulebook))["phone"]["status"] == "declined"
    phone = slots(outcome(cases["decline_then_volunteered_number"], rulebook))["phone"]
    assert (phone["status"], phone["value"]) == ("filled", "13912345678")
    assert slots(outcome(cases["phone_then_decline_withdraws_it"], rulebook))["phone"]["status"] == "declined"


def test_summary_marker_counts_only_when_sent(rulebook):
    cases = group("seed_summary")
    sent = slots(outcome(cases["marker_in_sent_assistant_message"], rulebook))["summary_sent"]
    assert (sent["status"], sent["value"]) == ("filled", True)
    assert outcome(cases["draft_is_not_evidence"], rulebook)["error"]["code"] == "NOT_RAW_EVIDENCE"
    # no lock table counts a draft, so a lock record in one is not the engine's: refused before any event reads it
    assert outcome(cases["draft_lock_is_not_evidence_either"], rulebook)["error"]["code"] == "LOCK_MISMATCH"
    both = slots(outcome(cases["draft_then_sent_counts_only_the_sent"], rulebook))["summary_sent"]
    assert both["evidence"] == ["L-m50-summary"]
    assert outcome(cases["user_need_colon_is_no_marker"], rulebook)["error"]["code"] == "INSUFFICIENT_EVIDENCE"


def test_normalization_keeps_the_raw_quote(rulebook):
    cases = group("normalization")
    result = outcome(cases["normalized_value_fills_raw_quote_kept"], rulebook)
    assert slots(result)["phone"]["value"] == "13812345678"
    assert result["data"]["evidence"][1]["record"]["lock"]["quote"] == "138 1234-5678"
    assert outcome(cases["raw_quote_as_value_conflicts_with_lock"], rulebook)["error"]["code"] == "LOCK_CONFLICT"
    assert outcome(cases["rewritten_number_conflicts_with_lock"], rulebook)["error"]["code"] == "LOCK_CONFLICT"
    assert outcome(cases["invalid_candidate_cannot_fill_phone"], rulebook)["error"]["code"] == "INSUFFICIENT_EVIDENCE"
    kept = outcome(cases["invalid_candidate_dismissed_is_still_recorded"], rulebook)["data"]["state"]["locks"]
    assert [(lock["valid"], "dismissed" in lock["disposition"]) for lock in kept] == [(False, True)]
    assert slots(outcome(cases["repeated_zeros_are_a_valid_number"], rulebook))["phone"]["value"] == "13800000000"


def test_tool_receipt_against_user_statement(rulebook):
    cases = group("precedence")
    region = slots(outcome(cases["tool_receipt_against_user_statement"], rulebook))["company_region"]
    assert (region["status"], region["value"]) == ("conflicting", None)
    assert [(c["value"], c["source"]) for c in region["candidates"]] == [("上海", "tool"), ("北京", "user")]
    assert slots(outcome(cases["user_correct_cannot_override_tool"], rulebook))["company_region"]["status"] == "conflicting"
    held = slots(outcome(cases["human_confirmation_holds_against_casual_mention"], rulebook))["company_region"]
    assert (held["value"], held["source"], held["history"][-1]["outcome"]) == ("上海", "human_confirmed", "keep")
    same = slots(outcome(cases["same_value_from_tool_corroborates"], rulebook))["company_region"]
    assert (same["source"], same["evidence"]) == ("tool", ["E31", "T1"])
    equal = slots(outcome(cases["same_value_at_equal_rank_keeps_the_first_source"], rulebook))["company_region"]
    assert (equal["source"], equal["evidence"]) == ("user", ["E32", "F1"])      # system ranks as user: no upgrade


def test_expiry(rulebook):
    cases = group("scopes_expiry")
    assert slots(outcome(cases["valid_until_passed_expires"], rulebook))["region"]["status"] == "expired"
    assert slots(outcome(cases["fresh_evidence_keeps_it_filled"], rulebook))["region"]["status"] == "filled"
    assert slots(outcome(cases["not_yet_valid_policy"], rulebook))["preferred_channel"]["status"] == "not_yet_valid"
    assert slots(outcome(cases["lock_expires_with_its_message"], rulebook))["wechat"]["status"] == "expired"
    closed = outcome(cases["closed_scope_expires_its_values"], rulebook)
    assert slots(closed)["delivery_region"]["status"] == "expired"
    assert slots(closed, "demand_2")["delivery_region"]["status"] == "filled"


def test_scope_events_fold_before_field_events(rulebook):
    result = outcome(group("scopes_expiry")["scope_events_fold_first"], rulebook)
    assert slots(result)["delivery_region"]["value"] == "A 地"
    assert slots(result, "demand_2")["delivery_region"]["value"] == "B 地分部"


def test_now_is_the_only_clock(rulebook):
    payload = dict(group("scopes_expiry")["valid_until_passed_expires"], now="2024-03-15T00:00:00+08:00")
    assert slots(outcome(payload, rulebook))["region"]["status"] == "filled"


def test_a_scope_event_can_resolve_a_clarification(rulebook):
    """The answer "yes, a new demand" is a new_scope event; its `resolves` must close the question."""
    payload = group("seed_region")["unresolved_then_answered"]
    answer = payload["interpretations"][1]
    answer["events"] = [{"id": "s1", "type": "new_scope", "scope": "demand_2", "resolves": ["e2"],
                         "evidence": [answer["events"][0]["evidence"][0]]},
                        dict(answer["events"][0], resolves=[], scope="demand_2")]
    result = outcome(payload, rulebook)
    (clar,) = result["data"]["state"]["clarifications"]
    assert (clar["status"], clar["resolved_by"]) == ("resolved", "s1")
    assert slots(result)["delivery_region"]["status"] != "needs_clarification"
    assert slots(result, "demand_2")["delivery_region"]["value"] == "B 地分部"


def test_an_unresolved_event_must_name_its_value(rulebook):
    """The readings are places for a value; a value-less confirm whose scope is unsure has nothing to ask
    about, and is refused with a code (it used to fail internally)."""
    payload = group("seed_region")["unresolved_asks_the_seed_question"]
    event = payload["interpretations"][0]["events"][1]
    del event["value"]
    event.update(type="confirm", slot="company_region",
                 scope={"unresolved": [{"id": "here"}, {"id": "there", "new_scope": "demand_2"}]})
    error = outcome(payload, rulebook)["error"]
    assert (error["code"], error["key"]) == ("EVENT_INCOMPLETE", "value")


def test_seed003_a_corrected_value_no_longer_rests_on_the_evidence_it_corrects(rulebook):
    """§七: 如果是 correct，当前地区更新为 B 地；E07 仍然留在证据账本里，只是不再支撑当前的地区值."""
    payload = group("seed_region")["read_as_correct"]
    correct = next(e for i in payload["interpretations"] for e in i["events"] if e["type"] == "correct")
    assert correct["evidence"] == ["E07", "E19"]           # the seed's own correct(E07, E19)
    result = outcome(payload, rulebook)
    region = slots(result)["region"]
    assert region["evidence"] == ["E19"]
    assert [h["event"] for h in region["history"]] == ["e1", correct["id"]]        # E07's set stays in the history
    ledger = {e["id"]: e for e in result["data"]["evidence"]}
    assert ledger["E07"]["cited_by"] == ["e1", correct["id"]]                     # and E07 in the ledger


TWO_DEMANDS = {
    "now": "2024-05-01T12:00:00+08:00",
    "records": [
        {"id": "E07", "type": "message", "role": "user", "state": "sent", "turn": 3, "subject": "demand_1",
         "content": "第一批送到 A 地"},
        {"id": "E19", "type": "message", "role": "user", "state": "sent", "turn": 7, "subject": "demand_2",
         "content": "第二批送到 B 地"}],
    "interpretations": [{"id": "I1", "dispositions": [], "events": [
        {"id": "s1", "type": "new_scope", "scope": "demand_2", "evidence": ["E19"]},
        {"id": "e1", "type": "set", "slot": "delivery_region", "value": "A 地", "evidence": ["E07"]},
        {"id": "e2", "type": "set", "slot": "delivery_region", "value": "B 地", "evidence": ["E19"]}]}]}


def test_seed003_two_demands_do_not_overwrite_each_other_through_the_records_scope(rulebook):
    """§六: 用户为第一批产品说过地址，为第二批产品又说了另一个——两条证据都真实，各自属于不同的需求.
    The events name no scope; each record's subject alone puts its value in its own demand."""
    result = outcome(TWO_DEMANDS, rulebook)
    assert result["data"]["state"]["current_scope"] == "demand_2"
    first, second = slots(result)["delivery_region"], slots(result, "demand_2")["delivery_region"]
    assert (first["status"], first["value"], first["evidence"]) == ("filled", "A 地", ["E07"])
    assert (second["status"], second["value"], second["evidence"]) == ("filled", "B 地", ["E19"])


def test_seed003_an_event_citing_two_subjects_must_name_its_scope(rulebook):
    payload = copy.deepcopy(TWO_DEMANDS)
    payload["interpretations"][0]["events"][2]["evidence"] = ["E07", "E19"]
    assert outcome(payload, rulebook)["error"]["code"] == "SUBJECTS_DIFFER"
    payload["interpretations"][0]["events"][2]["scope"] = "demand_2"
    assert slots(outcome(payload, rulebook), "demand_2")["delivery_region"]["value"] == "B 地"


SEED_SHAPED = {  # §二's evidence records and §五's events, literally as the seed writes them
    "now": "2024-05-01T12:00:00+08:00",
    "records": [
        {"id": "E07", "source": "user", "timestamp": "2024-05-01T10:03:00+08:00", "turn": 3, "scope": "demand_1",
         "quote": "我们公司登记地在 A 地", "locator": {"message_id": "m_31"}},
        {"id": "E19", "source": "user", "timestamp": "2024-05-01T10:07:00+08:00", "turn": 7,
         "quote": "哦对了，这批产品是要交付到 B 地分部的", "locator": {"message_id": "m_37"}}],
    "interpretations": [{"id": "I1", "dispositions": [], "events": [
        {"type": "set", "slot": "region", "value": "A 地", "evidence_ids": ["E07"], "turn": 3},
        {"type": "correct", "slot": "region", "value": "B 地", "evidence_ids": ["E07", "E19"], "turn": 7}]}]}


def test_seed003_the_seeds_own_record_and_event_shapes_are_accepted(rulebook):
    """§二 / §五: a host may send what the seed shows; rules/seed_shapes.yaml maps it."""
    before = copy.deepcopy(SEED_SHAPED)
    result = outcome(SEED_SHAPED, rulebook)
    assert SEED_SHAPED == before                                    # the caller's payload is not changed
    region = slots(result)["region"]
    assert (region["value"], region["evidence"], region["events"]) == ("B 地", ["E19"], ["e2"])
    assert [(e["id"], e["turn"]) for e in result["data"]["events"]] == [("e1", 3), ("e2", 7)]
    e07 = result["data"]["evidence"][0]["record"]
    assert (e07["type"], e07["role"], e07["subject"], e07["content"], e07["message_id"]) == (
        "message", "user", "demand_1", "我们公司登记地在 A 地", "m_31")


def test_seed003_e07_verbatim_with_its_offsets_is_an_excerpt_checked_against_its_message(rulebook):
    """§二's E07 as the seed writes it, locator {message_id, start, end} and all: accepted on its own
    (the record is the evidence of what was said); with its message in the ledger before it, the
    quote must be that message's text at [start, end)."""
    payload = copy.deepcopy(SEED_SHAPED)
    payload["records"][0]["locator"].update(start=0, end=7)              # the seed's own offsets
    result = outcome(payload, rulebook)
    e07 = result["data"]["evidence"][0]["record"]
    assert (e07["type"], e07["content"], e07["locator"]) == ("message", "我们公司登记地在 A 地",
                                                             {"message_id": "m_31", "start": 0, "end": 7})
    assert slots(result)["region"]["value"] == "B 地"
    m31 = {"id": "m_31", "type": "message", "role": "user", "state": "sent", "content": "我们公司登记地在 A 地，谢谢"}
    payload["records"].insert(0, m31)
    error = outcome(payload, rulebook)["error"]           # [0, 7) of m_31 is 我们公司登记地, not the quote
    assert (error["code"], error["at"], error["message_id"]) == ("QUOTE_MISMATCH", "records[1].locator", "m_31")
    payload["records"][1]["locator"].update(end=len("我们公司登记地在 A 地"))
    assert slots(outcome(payload, rulebook))["region"]["value"] == "B 地"


ACTIVITY = {
    "now": "2024-05-01T12:00:00+08:00",
    "records": [
        {"id": "M12", "type": "message", "role": "assistant", "state": "sent", "content": "方便留个手机号吗？"},
        {"id": "M13", "type": "message", "role": "assistant", "state": "sent", "content": "手机号方便的话也可以留一个。"},
        {"id": "R3", "type": "tool_receipt", "tool": "crm.lookup", "request_id": "q-1", "body": "{\"found\": false}"},
        {"id": "R4", "type": "tool_receipt", "tool": "summary.send", "request_id": "q-2", "body": "{\"ok\": true}"}],
    "interpretations": [{"id": "I1", "dispositions": [], "events": [
        {"id": "a1", "type": "asked", "slot": "phone", "evidence": ["M12"]},
        {"id": "a2", "type": "tool_returned", "tool": "crm.lookup", "evidence": ["R3"]},
        {"id": "a3", "type": "asked", "slot": "phone", "evidence": ["M13"]},
        {"id": "a4", "type": "action_outcome", "action": "send_summary", "outcome": "failed", "evidence": ["R4"]},
        {"id": "a5", "type": "action_outcome", "action": "send_summary", "outcome": "succeeded", "evidence": ["R4"]}]}]}


def test_seed003_receipts_outcomes_and_asks_have_a_traceable_write_path(rulebook):
    """§五: 工具回执、动作成败、询问次数的变化，同样需要有可追踪的写入路径. Each is an event type of
    rules/events.yaml; the fold tallies it with the events and evidence behind it, and no slot changes."""
    result = outcome(ACTIVITY, rulebook)["data"]
    layers = {e["id"]: e["layer"] for e in result["events"]}
    assert set(layers.values()) == {"activity"}
    activity = result["state"]["activity"]
    assert activity["asked"]["phone"] == {"count": 2, "last": None, "events": ["a1", "a3"], "evidence": ["M12", "M13"]}
    assert activity["tool_returned"]["crm.lookup"]["evidence"] == ["R3"]
    assert activity["action_outcome"]["send_summary"] == {"count": 2, "last": "succeeded", "events": ["a4", "a5"],
                                                          "evidence": ["R4"]}
    assert result["state"]["scopes"]["demand_1"]["slots"] == {}
    cited = {e["id"]: e["cited_by"] for e in result["evidence"]}
    assert cited["M12"] == ["a1"] and cited["R4"] == ["a4", "a5"]


def test_seed003_an_activity_event_cites_raw_evidence_like_any_other(rulebook):
    payload = copy.deepcopy(ACTIVITY)
    payload["records"][0]["state"] = "draft"          # a draft question was never asked
    assert outcome(payload, rulebook)["error"]["code"] == "NOT_RAW_EVIDENCE"


def test_seed003_the_state_at_now_rests_only_on_what_was_observed_by_now(rulebook):
    """§六: 什么时候被观察到 is one of evidence's scopes. A fold gives the state at `now`; a record
    observed later did not yet exist, so the payload is refused (OBSERVED_AFTER_NOW, fix_input)
    rather than the record being used, or silently dropped. Observed exactly at now is in time."""
    later = copy.deepcopy(SEED_SHAPED)
    later["records"][1]["timestamp"] = "2024-05-01T12:00:01+08:00"       # one second after now
    error = outcome(later, rulebook)["error"]
    assert (error["code"], error["retry"], error["at"]) == ("OBSERVED_AFTER_NOW", "fix_input", "records[1].observed_at")
    at_now = copy.deepcopy(SEED_SHAPED)
    at_now["records"][1]["timestamp"] = at_now["now"]
    assert slots(outcome(at_now, rulebook))["region"]["value"] == "B 地"
