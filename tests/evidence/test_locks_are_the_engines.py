"""Seed 003 §三: the mechanical layer locks what appeared, so that nothing after it can drop or rewrite
it. Every lock is the engine's: recomputed from the raw records under the rulebook on every path
(fold, the ledger's append, the tools, the CLI), a lock a caller supplies is only accepted when it is
one of them, and every raw source (message, tool receipt, injected field) is locked."""
from __future__ import annotations

import copy
import json

import pytest

from groundrules import Caller, EvidenceLedger, GroundrulesError, Service, fold, lock
from groundrules.cli.main import main
from groundrules.locks import lock_text

from fold_support import GROUPS, group, outcome

NOW = "2024-05-01T12:00:00+08:00"
TEXT = "我的手机是 138 0013-8000"
MESSAGE = {"id": "E44", "type": "message", "role": "user", "state": "sent", "message_id": "m_44", "content": TEXT}
AGENT = Caller("agent-7", "agent", ("alpha",))


def engine_lock(rulebook) -> dict:
    (found,) = lock({"id": "m_44", "role": "user", "content": TEXT}, rulebook)
    return found


def forged(rulebook, **changes) -> dict:
    return {"id": "L1", "type": "lock", "lock": dict(engine_lock(rulebook), id="L1", **changes)}


def counter(prefix: str):
    n = iter(range(1, 10**6))
    return lambda: f"{prefix}{next(n)}"


def ledger(rulebook) -> EvidenceLedger:
    return EvidenceLedger(None, ids=counter("R"), clock=lambda: "2024-05-01T10:00:00+08:00", rulebook=rulebook)


def code(fn) -> str:
    with pytest.raises(GroundrulesError) as info:
        fn()
    return info.value.code


def cli(capsys, tmp_path, *argv: str, payload=None) -> dict:
    if payload is not None:
        path = tmp_path / "in.json"
        path.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
        argv = tuple(str(path) if a == "@" else a for a in argv)
    main(list(argv))
    return json.loads(capsys.readouterr()[0])


# -- 1. recomputed, never trusted: one answer on every path -----------------------------------------
FORGERIES = {
    "the seed's 138 0013-8000 read as 13900000000": {"normalized_value": "13900000000"},
    "an invalid candidate flipped to valid": None,                 # built below, on 12800138000
    "a quote the message does not hold there": {"locator": {"message_id": "m_44", "start": 0, "end": 5},
                                                "quote": "我的手机是"},
    "another kind": {"kind": "wechat"},
}


def forgeries(rulebook) -> list[tuple[str, list]]:
    """(why, records): a message and a lock record the engine does not find in it."""
    out = []
    for why, changes in FORGERIES.items():
        if changes is None:
            invalid = dict(MESSAGE, content="手机 12800138000")
            (candidate,) = lock({"id": "m_44", "role": "user", "content": invalid["content"]}, rulebook)
            assert candidate["valid"] is False
            out.append((why, [invalid, {"id": "L1", "type": "lock",
                                        "lock": dict(candidate, id="L1", valid=True, invalid_reason=None)}]))
        else:
            out.append((why, [MESSAGE, forged(rulebook, **changes)]))
    return out


def test_a_forged_lock_is_refused_with_one_code_on_every_path(rulebook, tmp_path, capsys):
    service = Service(rulebook, evidence=ledger(rulebook))
    for why, records in forgeries(rulebook):
        payload = {"now": NOW, "records": records, "interpretations": []}
        answers = {
            "fold": outcome(payload, rulebook).get("error", {}).get("code"),
            "EvidenceLedger.append_all": code(lambda: ledger(rulebook).append_all(records)),
            "EvidenceLedger.append_message": code(lambda: ledger(rulebook).append_message(
                records[0], [records[1]["lock"]])),
            "EvidenceLedger.append": code(lambda: _append_one_by_one(ledger(rulebook), records)),
            "fold_evidence": service.call("fold_evidence", payload, AGENT)["error"]["code"],
            "append_evidence": _tool_appends(rulebook, records),
            "groundrules fold": cli(capsys, tmp_path, "fold", "@", payload=payload)["error"]["code"],
        }
        assert set(answers.values()) == {"LOCK_MISMATCH"}, (why, answers)


def _append_one_by_one(book_ledger: EvidenceLedger, records: list) -> None:
    """A message appended alone stores its own locks; a lock appended later must be one of them
    and not one already stored: it is refused either way."""
    for record in records:
        book_ledger.append(record)


def _tool_appends(rulebook, records: list) -> str:
    service = Service(rulebook, evidence=ledger(rulebook))
    service.call("append_evidence", {"record": records[0]}, AGENT)
    return service.call("append_evidence", {"record": records[1]}, AGENT)["error"]["code"]


def test_the_refusal_names_what_differs(rulebook):
    error = outcome({"now": NOW, "records": [MESSAGE, forged(rulebook, normalized_value="13900000000", valid=False)],
                     "interpretations": []}, rulebook)["error"]
    assert (error["code"], error["retry"], error["differs"]) == ("LOCK_MISMATCH", "fix_input", ["normalized_value", "valid"])
    assert (error["message_id"], error["start"], error["end"]) == ("m_44", 6, 19)
    assert "13900000000" not in error["message"]                      # a refusal never echoes personal data


def test_a_lock_that_equals_the_engines_is_accepted_under_its_own_name(rulebook):
    result = fold({"now": NOW, "records": [MESSAGE, forged(rulebook)], "interpretations": [
        {"id": "I1", "events": [{"id": "e1", "type": "set", "slot": "phone", "value": "13800138000", "evidence": ["L1"]}],
         "dispositions": [{"lock": "L1", "slot": "phone"}]}]}, rulebook)
    assert [e["id"] for e in result["evidence"]] == ["E44", "L1"]       # no second record of the same lock
    assert result["state"]["scopes"]["demand_1"]["slots"]["phone"]["value"] == "13800138000"


def corpus_locks() -> list[tuple[str, str, dict]]:
    return [(name, case, payload) for name in GROUPS for case, payload in group(name).items()
            if isinstance(payload, dict) and any(r.get("type") == "lock" or "normalized_value" in r
                                                 for r in payload.get("records", []) if isinstance(r, dict))]


def test_no_forged_value_reaches_a_slot(rulebook):
    """Every lock record of the corpus, rewritten to carry another value (valid, and a phone
    number's shape), with every event that cites it setting that value: refused, every time."""
    tried = 0
    for name, case, payload in corpus_locks():
        for n, record in enumerate(payload["records"]):
            box = record.get("lock", record)
            if "normalized_value" not in box or not isinstance(box["normalized_value"], str):
                continue
            for change in ({"normalized_value": "13900000000"}, {"normalized_value": "13900000000", "valid": True,
                                                                  "invalid_reason": None}):
                mutated = copy.deepcopy(payload)
                target = mutated["records"][n].get("lock", mutated["records"][n])
                target.update(change)
                names = {record["id"], box.get("id")}
                for interp in mutated.get("interpretations", []):
                    for event in interp["events"]:
                        if names & {c for c in event["evidence"] if isinstance(c, str)} and "value" in event:
                            event["value"] = "13900000000"
                result = outcome(mutated, rulebook)
                tried += 1
                assert "error" in result, (name, case, change)       # refused whole: no slot is set at all
    assert tried >= 20


# -- 2. every raw source is locked ------------------------------------------------------------------
def test_a_tool_receipt_and_an_injected_field_are_locked_like_a_message(rulebook):
    """set(phone, 13900000000) citing a source whose raw text holds 13800000000 is refused from an
    injected field and a receipt exactly as from a user message."""
    sources = {"message": {"id": "S", "type": "message", "role": "user", "state": "sent", "content": "13800000000"},
               "tool_receipt": {"id": "S", "type": "tool_receipt", "tool": "crm", "request_id": "q",
                                "body": '{"phone": "13800000000"}'},
               "injected_field": {"id": "S", "type": "injected_field", "field": "phone", "value": "13800000000",
                                  "origin": "crm.account"}}
    for kind, record in sources.items():
        (found,) = lock_text("S", "user" if kind == "message" else "tool", "sent",
                             record.get("content", record.get("body", record.get("value"))), rulebook, json_strings=True)
        for value, want in (("13900000000", "LOCK_CONFLICT"), ("13800000000", None)):
            payload = {"now": NOW, "records": [record], "interpretations": [{"id": "I1", "events": [
                {"id": "e1", "type": "set", "slot": "phone", "value": value, "evidence": ["S"]}],
                "dispositions": [{"lock": found["id"], "slot": "phone"}]}]}
            result = outcome(payload, rulebook)
            got = result["error"]["code"] if "error" in result else None
            assert got == want, (kind, value)
            if want is None:
                assert result["data"]["state"]["scopes"]["demand_1"]["slots"]["phone"]["value"] == value


def test_a_json_body_is_read_decoded_and_locked_where_its_raw_text_is(rulebook):
    body = json.dumps({"联系": "微信 wx_wang01", "备用": "138 0013 8000"})       # ensure_ascii: escapes
    found = lock_text("R1", "tool", "sent", body, rulebook, json_strings=True)
    assert [(c["kind"], c["normalized_value"]) for c in found] == [("wechat", "wx_wang01"), ("phone", "13800138000")]
    for c in found:
        loc = c["locator"]
        assert body[loc["start"]:loc["end"]] == c["quote"]               # the quote is the raw body's text
    assert found[0]["quote"].startswith("\\u5fae\\u4fe1")
    assert lock_text("R1", "tool", "sent", body, rulebook) == found[1:]  # undecoded, the label is unreadable


def test_flow_markers_count_only_where_the_flow_marker_table_says(rulebook):
    """「需求摘要」 in a diagnostic receipt or an injected field is no evidence the summary was sent
    (seed: 诊断输出、槽位值…均不得作为摘要完成的证据); in a sent assistant message it is."""
    cases = group("seed_sources")
    for name in ("diagnostic_receipt_is_no_summary_marker", "injected_marker_is_no_summary_marker"):
        assert outcome(cases[name], rulebook)["error"]["code"] == "INSUFFICIENT_EVIDENCE", name
    flow = rulebook.table("flow_markers").patterns[0]
    assert (sorted(flow.roles), sorted(flow.states)) == (["assistant"], ["sent"])
    sent = outcome(group("seed_summary")["marker_in_sent_assistant_message"], rulebook)
    assert sent["data"]["state"]["scopes"]["demand_1"]["slots"]["summary_sent"]["value"] is True


def test_which_role_each_source_is_read_as_is_the_event_catalogues(rulebook):
    records = rulebook.table("events").records
    locked = {name: rt.locked for name, rt in records.items() if rt.locked is not None}
    assert set(locked) == {"message", "tool_receipt", "injected_field"}
    for name, spec in locked.items():
        assert spec.text in records[name].personal       # a redaction removes what the locks copy


def test_redacting_a_receipt_redacts_the_locks_inside_it(rulebook):
    book_ledger = ledger(rulebook)
    stored = book_ledger.append({"id": "R1", "type": "tool_receipt", "tool": "crm", "request_id": "q",
                                 "body": '{"phone": "13800000000"}'})
    assert stored["id"] == "R1"
    (lock_record,) = [r for r in book_ledger.records() if r["type"] == "lock"]
    events = book_ledger.redact("R1", by="dpo", reason="erasure")
    assert [e["record"] for e in events] == ["R1", lock_record["id"]]
    assert all(r.get("redaction") for r in book_ledger.records())


# -- 4. the ledger never stores a source without its locks ----------------------------------------
def test_append_stores_a_message_with_its_locks_which_wait_in_its_fold_and_are_lost_by_a_payload(rulebook):
    book_ledger = ledger(rulebook)
    assert book_ledger.append(MESSAGE)["id"] == "E44"
    stored = book_ledger.records()
    assert [r["lock"] for r in stored[1:]] == [engine_lock(rulebook)]
    pending = book_ledger.fold([{"id": "I1", "events": [], "dispositions": []}], NOW)["state"]["pending"]
    assert [p["lock"] for p in pending] == [engine_lock(rulebook)["id"]]     # the ledger's fold: it waits
    bare = {"now": NOW, "records": [MESSAGE], "interpretations": [{"id": "I1", "events": [], "dispositions": []}]}
    error = outcome(bare, rulebook)["error"]            # a payload that forgets it: the interpretation lost it
    assert (error["code"], error["locks"]) == ("LOCK_DROPPED", [engine_lock(rulebook)["id"]])


# -- 5. the seed's shapes, by the ledger and the fold alike ----------------------------------------
E14 = {"id": "E14", "quote": "138 0013-8000", "locator": {"message_id": "m_44", "start": 6, "end": 19},
       "normalized_value": "13800138000"}
DERIVED = {"type": "derived", "claim": "用户留了手机号", "derived_from": ["E44"]}


def test_the_seeds_e14_and_derived_record_are_stored_as_the_fold_reads_them(rulebook):
    book_ledger = ledger(rulebook)
    stored = book_ledger.append_all([MESSAGE, E14, DERIVED])
    folded = fold({"now": NOW, "records": [MESSAGE, E14, DERIVED], "interpretations": [
        {"id": "I1", "events": [], "dispositions": [{"lock": "E14", "dismissed": "不是本需求的联系方式"}]}]}, rulebook)
    assert [r["id"] for r in stored] == [e["id"] for e in folded["evidence"]] == ["E44", "E14", stored[2]["id"]]
    assert stored[1]["lock"] == {**engine_lock(rulebook)}               # completed from the engine's lock
    assert stored[2]["id"].startswith("D-") and stored[2]["id"] == folded["evidence"][2]["id"]
    assert code(lambda: ledger(rulebook).append_all([MESSAGE, dict(E14, normalized_value="13900000000")])) \
        == "LOCK_MISMATCH"
    assert code(lambda: book_ledger.append(DERIVED)) == "DUPLICATE_ID"   # the same claim is the same record


def test_the_seeds_e07_is_checked_against_its_message_in_the_ledger_too(rulebook):
    e07 = {"id": "E07", "source": "user", "timestamp": "2024-05-01T10:03:00+08:00", "turn": 3, "scope": "demand_1",
           "quote": "我们公司登记地在 A 地", "locator": {"message_id": "m_31", "start": 0, "end": 7}}
    m31 = {"id": "M31", "type": "message", "role": "user", "state": "sent", "message_id": "m_31",
           "content": "我们公司登记地在 A 地"}
    assert ledger(rulebook).append(e07)["locator"] == e07["locator"]      # alone, the record stands
    book_ledger = ledger(rulebook)
    book_ledger.append(m31)
    assert code(lambda: book_ledger.append(e07)) == "QUOTE_MISMATCH"
    fixed = dict(e07, locator={"message_id": "m_31", "start": 0, "end": 12})
    assert book_ledger.append(fixed)["content"] == m31["content"]


# -- the CLI: the stored ledger --------------------------------------------------------------------
def test_the_cli_appends_a_receipt_with_its_locks_and_folds_for_a_context(tmp_path, capsys):
    db = str(tmp_path / "ledger.db")
    clock = ("--step-clock", "2024-05-01T02:00:00Z")
    receipt = {"id": "P1", "type": "tool_receipt", "tool": "policy", "request_id": "q1",
               "body": '{"channel": "微信"}', "version": "2023"}
    appended = cli(capsys, tmp_path, "evidence", "append", "@", "--db", db, *clock, payload=receipt)
    assert appended["ok"] and [r["type"] for r in appended["data"]["records"]] == ["tool_receipt"]
    given = tmp_path / "given.json"
    given.write_text(json.dumps([{"id": "I1", "dispositions": [], "events": [
        {"id": "e1", "type": "set", "slot": "preferred_channel", "value": "wechat", "evidence": ["P1"]}]}]),
        encoding="utf-8")
    context = tmp_path / "context.json"
    context.write_text(json.dumps({"version": "2024"}), encoding="utf-8")
    base = ("evidence", "fold", "--now", "2024-05-02T00:00:00+08:00", "--interpretations", str(given), "--db", db)
    plain = cli(capsys, tmp_path, *base)
    assert plain["data"]["state"]["scopes"]["demand_1"]["slots"]["preferred_channel"]["value"] == "wechat"
    asked = cli(capsys, tmp_path, *base, "--scope-context", str(context))
    assert asked["data"]["state"]["scope_context"]["set_aside"][0]["record"] == "P1"
    assert asked["data"]["state"]["scopes"]["demand_1"]["slots"]["preferred_channel"]["value"] is None
    forged_lock = {"id": "L9", "type": "lock", "lock": {"quote": "微信", "locator": {"message_id": "P1", "start": 13,
                                                                                  "end": 15}}}
    refused = cli(capsys, tmp_path, "evidence", "append", "@", "--db", db, *clock, payload=forged_lock)
    assert refused["error"]["code"] == "LOCK_MISMATCH"
