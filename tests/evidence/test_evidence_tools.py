"""The evidence ledger as registry tools (append_evidence, get_evidence, redact_evidence, fold_ledger):
stored per project in the finding ledger's file, reached the way every host reaches it."""
from __future__ import annotations

import pytest

from groundrules import Caller, EvidenceLedger, FindingLedger, Service, lock

KEY = b"a redaction key kept outside the database"
NOW = "2024-05-02T00:00:00+08:00"
TEXT = "不方便接电话，微信 wx_wang01"


@pytest.fixture
def service(rulebook, tmp_path):
    n = iter(range(1, 10**6))
    db = tmp_path / "ledger.db"
    svc = Service(rulebook, findings=FindingLedger(db, rulebook=rulebook),
                  evidence=EvidenceLedger(db, ids=lambda: f"R-{next(n)}", clock=lambda: "2024-05-01T10:00:00+08:00",
                                          rulebook=rulebook, redaction_key=KEY))
    yield svc
    svc.findings.close()
    svc.evidence.close()


AGENT = Caller("agent-7", "agent", ("alpha",))
OTHER = Caller("agent-9", "agent", ("beta",))
REVIEWER = Caller("user:alice", "reviewer", ("alpha",))
HOST = Caller("app", "host", ("alpha",))         # relays the users' messages into the ledger


def ok(envelope: dict):
    assert envelope["ok"], envelope["error"]
    return envelope["data"]


def code(envelope: dict) -> str:
    assert not envelope["ok"] and envelope["data"] is None
    return envelope["error"]["code"]


def message(mid: str = "m_41", subject: str = "demand_1", content: str = TEXT) -> dict:
    return {"id": mid, "type": "message", "role": "user", "state": "sent", "subject": subject, "content": content}


def interpretation(lock_ids: list, value: str = "wx_wang01", mid: str = "m_41") -> list:
    return [{"id": "I1", "events": [{"id": "e1", "type": "decline", "slot": "phone", "evidence": [mid]},
                                    {"id": "e2", "type": "set", "slot": "wechat", "value": value,
                                     "evidence": lock_ids}],
             "dispositions": [{"lock": lid, "slot": "wechat"} for lid in lock_ids]}]


def append(service, caller=HOST, **kw) -> list:
    return ok(service.call("append_evidence", {"record": message(**kw)}, caller))["records"]


def test_a_message_is_locked_on_append(service, rulebook):
    stored = append(service)
    expected = lock({"id": "m_41", "role": "user", "state": "sent", "content": TEXT}, rulebook)
    assert [r["type"] for r in stored] == ["message"] + ["lock"] * len(expected)
    assert [r["lock"] for r in stored[1:]] == expected
    everything = ok(service.call("get_evidence", {}, AGENT))["records"]
    assert [r["id"] for r in everything] == [r["id"] for r in stored]
    assert ok(service.call("get_evidence", {"record_id": "m_41"}, AGENT))["records"] == stored[:1]


def test_receipts_and_injected_fields_are_appended_as_given(service):
    receipt = {"type": "tool_receipt", "tool": "crm", "request_id": "q1", "body": "{}"}
    stored = ok(service.call("append_evidence", {"record": receipt}, AGENT))["records"]
    assert len(stored) == 1 and {k: stored[0][k] for k in receipt} == receipt
    assert code(service.call("append_evidence", {"record": dict(receipt, id=stored[0]["id"])}, AGENT)) == "DUPLICATE_ID"
    # a record of no listed shape is the registry's refusal (issue 32: the listing is the record's shape)
    assert code(service.call("append_evidence", {"record": {"type": "lock"}}, AGENT)) == "INVALID_ARGUMENT"
    assert len(ok(service.call("get_evidence", {}, AGENT))["records"]) == 1


def test_each_project_keeps_its_own_ledger(service):
    stored = append(service)
    assert code(service.call("get_evidence", {"record_id": "m_41"}, OTHER)) == "UNKNOWN_EVIDENCE"
    assert ok(service.call("get_evidence", {}, OTHER))["records"] == []
    assert code(service.call("get_evidence", {"project": "alpha"}, OTHER)) == "PROJECT_SCOPE_MISMATCH"
    assert append(service, OTHER)[0]["id"] == "m_41"           # the same id is free in another project
    lock_ids = [r["id"] for r in stored[1:]]
    folded = ok(service.call("fold_ledger", {"now": NOW, "interpretations": interpretation(lock_ids)}, AGENT))
    assert [e["id"] for e in folded["evidence"]] == [r["id"] for r in stored]


def test_only_a_reviewer_redacts_and_the_redactor_is_the_caller(service):
    stored = append(service)
    before = ok(service.call("get_evidence", {}, AGENT))
    assert code(service.call("redact_evidence", {"record_id": "m_41", "reason": "用户要求"}, AGENT)) == "PERMISSION_DENIED"
    assert code(service.call("redact_evidence", {"record_id": "m_41", "reason": "r", "by": "user:boss"},
                             REVIEWER)) == "INVALID_ARGUMENT"
    assert ok(service.call("get_evidence", {}, AGENT)) == before
    events = ok(service.call("redact_evidence", {"record_id": "m_41", "reason": "用户要求删除"}, REVIEWER))["redactions"]
    assert {e["by"] for e in events} == {"user:alice"} and [e["record"] for e in events] == [r["id"] for r in stored]
    redacted = ok(service.call("get_evidence", {"record_id": "m_41"}, AGENT))["records"][0]
    assert redacted["content"]["redacted"] is True and redacted["redaction"]["by"] == "user:alice"
    assert code(service.call("redact_evidence", {"record_id": "m_41", "reason": "again"}, REVIEWER)) == "ALREADY_REDACTED"


def test_fold_after_redaction_checks_values_by_the_keyed_digest(service):
    lock_ids = [r["id"] for r in append(service)[1:]]
    ok(service.call("redact_evidence", {"record_id": "m_41", "reason": "erasure"}, REVIEWER))
    slots = ok(service.call("fold_ledger", {"now": NOW, "interpretations": interpretation(lock_ids)}, AGENT))
    assert slots["state"]["scopes"]["demand_1"]["slots"]["wechat"]["value"] == "wx_wang01"
    wrong = interpretation(lock_ids, value="wx_other")
    assert code(service.call("fold_ledger", {"now": NOW, "interpretations": wrong}, AGENT)) == "LOCK_CONFLICT"


def test_fold_for_one_subject_takes_its_records_and_their_locks(service):
    mine = append(service)
    other = append(service, mid="m_99", subject="demand_2", content="好的，明天联系")
    lock_ids = [r["id"] for r in mine[1:]]
    folded = ok(service.call("fold_ledger", {"now": NOW, "interpretations": interpretation(lock_ids),
                                             "subject": "demand_1"}, AGENT))
    assert [e["id"] for e in folded["evidence"]] == [r["id"] for r in mine]
    assert other[0]["id"] not in [e["id"] for e in folded["evidence"]]
    assert code(service.call("fold_ledger", {"now": NOW, "interpretations": interpretation(lock_ids),
                                             "subject": "demand_2"}, AGENT)) == "UNKNOWN_EVIDENCE"


def test_without_an_evidence_ledger_the_tools_say_so(rulebook):
    bare = Service(rulebook)
    assert code(bare.call("get_evidence", {}, AGENT)) == "NOT_CONFIGURED"


SEED_RECORD = {  # §二's evidence record, literally as the seed writes it (its §三 sentence as the quote)
    "id": "E07", "source": "user", "timestamp": "2024-05-01T10:03:00+08:00", "turn": 3, "scope": "demand_1",
    "quote": TEXT, "locator": {"message_id": "m_31"}}


def test_seed003_the_seeds_record_shape_is_mapped_on_append_as_fold_maps_it(service, rulebook):
    """§二: a host appending the seed's record through append_evidence gets the mapping of
    rules/seed_shapes.yaml that fold() applies, and the message's locks point at its message id."""
    given = dict(SEED_RECORD, locator=dict(SEED_RECORD["locator"]))
    stored = ok(service.call("append_evidence", {"record": given}, HOST))["records"]
    assert given == SEED_RECORD                                      # the caller's record is not changed
    [shapes] = rulebook.of_kind("shape_map")
    mapped = shapes.record(SEED_RECORD)
    assert mapped != SEED_RECORD and {k: v for k, v in stored[0].items() if k not in ("recorded_at", "writer")} == mapped
    assert stored[0]["writer"] == HOST.writer()
    expected = lock({"id": mapped["message_id"], "role": mapped["role"], "state": mapped["state"],
                     "content": mapped["content"]}, rulebook)
    assert expected and [r["lock"] for r in stored[1:]] == expected
    events = [{"id": "e1", "type": "set", "slot": "wechat", "value": "wx_wang01", "evidence": [stored[1]["id"]]}]
    interps = [{"id": "I1", "events": events, "dispositions": [{"lock": stored[1]["id"], "slot": "wechat"}]}]
    from_ledger = ok(service.call("fold_ledger", {"now": NOW, "interpretations": interps}, AGENT))
    from_seed = ok(service.call("fold_evidence", {"now": NOW, "records": [SEED_RECORD] + [
        {"id": r["id"], "type": "lock", "lock": r["lock"]} for r in stored[1:]], "interpretations": interps}, AGENT))
    assert from_ledger["state"].pop("provenance") == {"set_aside": []}     # the host's words all decide
    assert from_ledger["state"] == from_seed["state"] and "demand_1" in from_seed["state"]["scopes"]


def test_seed003_a_mapped_record_is_refused_as_its_internal_shape_is_and_nothing_is_written(service):
    no_source = {k: v for k, v in SEED_RECORD.items() if k != "source"}
    no_role = {"type": "message", "state": "sent", "content": TEXT, "message_id": "m_31"}
    assert code(service.call("append_evidence", {"record": no_source}, AGENT)) == \
        code(service.call("append_evidence", {"record": no_role}, AGENT))
    assert code(service.call("append_evidence", {"record": {"content": TEXT}}, AGENT)) == "INVALID_ARGUMENT"
    assert ok(service.call("get_evidence", {}, AGENT))["records"] == []


def test_seed003_fold_ledger_refuses_a_now_before_what_the_ledger_observed(service):
    """The ledger stamps observed_at when the host gives none (its clock: 2024-05-01T10:00); a fold
    at an earlier now would rest on evidence that did not yet exist."""
    lock_ids = [r["id"] for r in append(service)[1:]]
    envelope = service.call("fold_ledger", {"now": "2024-05-01T09:59:59+08:00",
                                            "interpretations": interpretation(lock_ids)}, AGENT)
    assert code(envelope) == "OBSERVED_AFTER_NOW" and envelope["error"]["retry"] == "fix_input"
    assert ok(service.call("fold_ledger", {"now": "2024-05-01T10:00:00+08:00",
                                           "interpretations": interpretation(lock_ids)}, AGENT))["state"]


def test_stored_interpretations_are_what_fold_ledger_folds_when_none_are_given(service):
    lock_ids = [r["id"] for r in append(service)[1:]]
    given = interpretation(lock_ids)
    assert code(service.call("append_interpretation", {"interpretation": interpretation(lock_ids, "wx_other")[0]},
                             AGENT)) == "LOCK_CONFLICT"
    assert ok(service.call("append_interpretation", {"interpretation": given[0]}, AGENT)) == {
        "id": "I1", "recorded_at": "2024-05-01T10:00:00+08:00"}
    stored = ok(service.call("fold_ledger", {"now": NOW}, AGENT))
    assert stored == ok(service.call("fold_ledger", {"now": NOW, "interpretations": given}, AGENT))
    assert stored["state"]["scopes"]["demand_1"]["slots"]["wechat"]["value"] == "wx_wang01"
    assert ok(service.call("fold_ledger", {"now": NOW}, OTHER))["events"] == []     # each project its own
    redacted = ok(service.call("redact_evidence", {"record_id": "m_41", "reason": "erasure"}, REVIEWER))
    assert redacted["redactions"][0]["withdrawn_interpretations"] == ["I1"]
    after = ok(service.call("fold_ledger", {"now": NOW}, AGENT))["state"]     # folds, the lock pending
    assert [p["why"] for p in after["pending"]] == ["redacted"] and after["locks"][0]["disposition"] == {"pending": True}


def test_an_evidence_ledger_is_constructed_as_a_finding_ledger_is():
    """Ids and clock default (random ids, UTC wall time), as FindingLedger's do (issue 32, item 6)."""
    from groundrules import EvidenceLedger
    ledger = EvidenceLedger(None)
    stored = ledger.append_all([{"type": "message", "role": "user", "state": "sent", "content": "你好"}],
                               project="p")
    assert stored[0]["id"].startswith("R-") and stored[0]["recorded_at"].endswith("Z")


def _slots_taking(rulebook, kind: str) -> list:
    (policy,) = rulebook.of_kind("merge_policy")
    return [sid for sid, slot in policy.slots.items() if kind in slot.lock_kinds]


def test_fold_ledger_answers_with_what_it_can_when_a_lock_awaits_its_disposition(service, rulebook):
    """A new message's lock that no interpretation has disposed of yet makes the slots it could
    decide pending, listed as such; the rest of the project folds (issue 32, item 3). The stateless
    fold, given the same payload, still refuses: there the caller's interpretation lost the lock."""
    append(service, mid="m_1", content="地区是 A 地")
    (_, phone) = append(service, mid="m_2", content="我的手机 13800138000")
    region = [{"id": "I1", "events": [{"id": "e1", "type": "set", "slot": "region", "value": "A 地",
                                       "evidence": ["m_1"]}], "dispositions": []}]
    state = ok(service.call("fold_ledger", {"now": NOW, "interpretations": region}, AGENT))["state"]
    assert state["scopes"][state["current_scope"]]["slots"]["region"]["value"] == "A 地"
    assert state["pending"] == [{"lock": phone["lock"]["id"], "record": phone["id"], "kind": "phone",
                                 "why": "no_disposition", "slots": _slots_taking(rulebook, "phone")}]
    assert [entry["disposition"] for entry in state["locks"]] == [{"pending": True}]
    records = ok(service.call("get_evidence", {}, AGENT))["records"]
    stateless = service.call("fold_evidence", {"now": NOW, "records": records, "interpretations": region}, AGENT)
    assert code(stateless) == "LOCK_DROPPED"


def test_fold_ledger_after_a_redaction_lists_the_redacted_lock_as_pending(service, rulebook):
    (_, wechat) = append(service)
    ok(service.call("redact_evidence", {"record_id": "m_41", "reason": "erasure request"}, REVIEWER))
    state = ok(service.call("fold_ledger", {"now": NOW, "interpretations": []}, AGENT))["state"]
    assert [(p["lock"], p["why"], p["slots"]) for p in state["pending"]] == [
        (wechat["lock"]["id"], "redacted", _slots_taking(rulebook, wechat["lock"]["kind"]))]


def test_a_drafted_interpretation_disposes_of_every_waiting_lock_and_appends_as_is(service, rulebook):
    """draft_interpretation (issue 32, item 4): the locks of a message, or every lock still without a
    disposition, each disposed of by the event catalogue's default; appended unedited, it leaves
    nothing pending and decides nothing."""
    records = append(service, content="不方便接电话，微信 wx_wang01，手机 13800138000")
    locks = [r for r in records if r["type"] == "lock"]
    draft = ok(service.call("draft_interpretation", {"message_id": "m_41"}, AGENT))
    (catalogue,) = rulebook.of_kind("event_catalogue")
    assert draft["interpretation"]["dispositions"] == [{"lock": r["lock"]["id"], "dismissed": catalogue.draft["dismissed"]}
                                                      for r in locks]
    assert [(d["kind"], d["slots"]) for d in draft["locks"]] == [(r["lock"]["kind"], _slots_taking(rulebook, r["lock"]["kind"]))
                                                                for r in locks]
    assert ok(service.call("draft_interpretation", {}, AGENT))["interpretation"]["dispositions"] == \
        draft["interpretation"]["dispositions"]
    ok(service.call("append_interpretation", {"interpretation": draft["interpretation"]}, AGENT))
    state = ok(service.call("fold_ledger", {"now": NOW}, AGENT))["state"]
    assert "pending" not in state and state["scopes"]["demand_1"]["slots"] == {}
    assert ok(service.call("draft_interpretation", {}, AGENT))["locks"] == []
