"""Provenance on the evidence ledger: every record names its authenticated writer, and only what the
provenance table (rules/provenance.yaml) lets a writer's role decide reaches a slot.

An agent tries the forgeries of seed 003 §二 (its inference filed as the user's words, a human
confirmation of another number, a summary marked sent, a tool's receipt or message): each is
refused or kept as a relay that decides nothing, on every backend. The expected outcome of each
attempt is read from the table (its verdict for the agent's role), never written here, so an
analyst's edit of the table moves these tests with it; the table's own examples pin the defaults.
"""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from joserfc.jwk import OKPKey

from groundrules import Caller, EvidenceLedger, GroundrulesError, Service
from groundrules.core.yamlparse import parse
from groundrules.provenance import table as provenance
from groundrules.provenance.signatures import sign
from groundrules.provenance.trust import _store, load_trust
from said import said, worded_in

NOW = "2024-05-01T12:00:00+08:00"
PHONE = "13812345678"


def callers(project: str = "p1") -> dict[str, Caller]:
    return {role: Caller(f"{role}-1", role, (project,)) for role in ("agent", "host", "reviewer", "runner")}


def ticking():
    n = itertools.count()
    return lambda: f"2024-05-01T10:{next(n) % 60:02d}:00+08:00"


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def service(request, rulebook, tmp_path):
    ids = itertools.count(1)
    options = {"ids": lambda: f"R{next(ids)}", "clock": ticking(), "rulebook": rulebook}
    if request.param == "memory":
        ledger = EvidenceLedger(None, **options)
    elif request.param == "sqlite":
        ledger = EvidenceLedger(str(tmp_path / "e.sqlite"), **options)
    else:
        ledger = EvidenceLedger(request.getfixturevalue("pg_db"), keys=tmp_path / "keys", **options)
    yield Service(rulebook, evidence=ledger)
    ledger.close()


def ok(envelope: dict):
    assert envelope["ok"], envelope["error"]
    return envelope["data"]


def lock_of(records: list, kind: str) -> str:
    return next(r["id"] for r in records if r["type"] == "lock" and r["lock"]["kind"] == kind and r["lock"]["valid"])


def phone_event(lock_id: str, event_id: str, value: str = PHONE, kind: str = "set") -> dict:
    return {"id": event_id, "type": kind, "slot": "phone", "value": value, "evidence": [lock_id]}


# The agent's attempts: (what it tries, the record it appends, the slot its event would decide, the value)
FORGERIES = [
    ("its inference filed as the user's words",
     {"type": "message", "role": "user", "state": "sent", "content": "用户看起来是想用 139 9999 9999 联系"},
     "phone", "13999999999"),
    ("a human confirmation of another number",
     {"type": "injected_field", "field": "phone", "value": "13999999999", "origin": "human.review"},
     "phone", "13999999999"),
    ("a CRM field with another number",
     {"type": "injected_field", "field": "phone", "value": "13999999999", "origin": "crm.account"},
     "phone", "13999999999"),
    ("a tool receipt it wrote itself",
     {"type": "tool_receipt", "tool": "crm", "request_id": "q9", "body": "{\"phone\": \"13999999999\"}"},
     "phone", "13999999999"),
    ("a summary marked sent",
     {"type": "message", "role": "assistant", "state": "sent", "content": "「需求摘要」电话 139 9999 9999"},
     "summary_sent", True),
    ("a tool's message it wrote itself",
     {"type": "message", "role": "tool", "state": "sent", "content": "查询结果：电话 139 9999 9999"},
     "phone", "13999999999"),
]


def test_an_agents_forgeries_decide_no_slot(service, rulebook):
    """The host relays the user's number; the agent tries each forgery and an interpretation that
    rests on it. Whatever the table refuses writes nothing; whatever it keeps decides nothing: the
    phone stays the user's and no summary is marked sent."""
    table = provenance.of(rulebook)
    who = callers()
    user = ok(service.call("append_evidence", {"record": {
        "id": "m1", "type": "message", "role": "user", "state": "sent", "content": "我的手机是 138 1234 5678"}},
        who["host"]))["records"]
    ok(service.call("append_interpretation", {"interpretation": {
        "id": "I0", "events": [phone_event(lock_of(user, "phone"), "e0")],
        "dispositions": [{"lock": lock_of(user, "phone"), "slot": "phone"}]}}, who["agent"]))
    attempts = refused = kept = 0
    for n, (what, record, slot, value) in enumerate(FORGERIES, 1):
        verdict = table.judge(record, who["agent"].writer())
        assert not verdict.decides, f"the table lets an agent decide with {what}"
        attempts += 1
        answer = service.call("append_evidence", {"record": dict(record, id=f"f{n}")}, who["agent"])
        if verdict.effect == provenance.REFUSED:
            assert answer["error"]["code"] == "PROVENANCE_REFUSED", what
            assert answer["error"]["class"] == verdict.cls and answer["error"]["role"] == "agent"
            assert ok(service.call("get_evidence", {}, who["host"]))["records"][-1]["id"] != f"f{n}"
            refused += 1
            continue
        stored = ok(answer)["records"]
        assert all(r["writer"]["principal"] == "agent-1" for r in stored)
        kind = "flow_marker" if slot == "summary_sent" else "phone"
        lock = lock_of(stored, kind)
        event = {"id": f"e{n}", "type": "set" if value is True else "correct", "slot": slot, "value": value,
                 "evidence": [lock]}
        dispositions = [{"lock": r["id"], "slot": slot} if r["id"] == lock else {"lock": r["id"], "irrelevant": True}
                        for r in stored if r["type"] == "lock"]
        ok(service.call("append_interpretation", {"interpretation": {
            "id": f"I{n}", "events": [event], "dispositions": dispositions}}, who["agent"]))
        fold = ok(service.call("fold_ledger", {"now": NOW}, who["agent"]))
        slots = fold["state"]["scopes"]["demand_1"]["slots"]
        assert slots["phone"]["value"] == PHONE and slots["phone"]["source"] == "user", what
        assert slots.get("summary_sent", {}).get("status", "empty") == "empty", what
        aside = {entry["record"]: entry for entry in fold["state"]["provenance"]["set_aside"]}
        assert lock in aside and f"e{n}" in aside[lock]["events"], what
        assert aside[lock]["writer"]["role"] == "agent" and aside[lock]["verdict"] == verdict.verdict
        kept += 1
    assert attempts == len(FORGERIES) == refused + kept
    print(f"\nforgeries: {attempts} attempted, {refused} refused, {kept} kept as relays; 0 decided a slot")


def test_the_host_and_a_reviewer_write_what_decides(service, rulebook):
    """The host relays the user's number, a reviewer confirms another one: the confirmation wins,
    as merge.yaml's source precedence says, because the reviewer may write it."""
    who = callers()
    user = ok(service.call("append_evidence", {"record": {
        "id": "m1", "type": "message", "role": "user", "state": "sent", "content": "我的手机是 138 1234 5678"}},
        who["host"]))["records"]
    review = ok(service.call("append_evidence", {"record": {
        "id": "h1", "type": "injected_field", "field": "phone", "value": "13999999999", "origin": "human.review"}},
        who["reviewer"]))["records"]
    table = provenance.of(rulebook)
    assert table.judge(review[0], review[0]["writer"]).decides
    locks = [lock_of(user, "phone"), lock_of(review, "phone")]
    ok(service.call("append_interpretation", {"interpretation": {
        "id": "I1", "events": [phone_event(locks[0], "e1"), phone_event(locks[1], "e2", "13999999999")],
        "dispositions": [{"lock": lid, "slot": "phone"} for lid in locks]}}, who["agent"]))
    fold = ok(service.call("fold_ledger", {"now": NOW}, who["agent"]))
    phone = fold["state"]["scopes"]["demand_1"]["slots"]["phone"]
    assert (phone["value"], phone["source"]) == ("13999999999", "human_confirmed")
    assert fold["state"]["provenance"]["set_aside"] == []
    assert {e["interpreted_by"]["principal"] for e in fold["events"]} == {"agent-1"}


def test_every_record_shows_its_authenticated_writer_never_one_from_the_arguments(service):
    who = callers()
    caller = Caller("app", "host", ("p1",))
    for record in ({"type": "message", "role": "user", "state": "sent", "content": "微信 wx_wang01"},
                   {"type": "tool_receipt", "tool": "crm", "request_id": "q1", "body": "ok"}):
        ok(service.call("append_evidence", {"record": record}, caller))
    stored = ok(service.call("get_evidence", {}, caller))["records"]
    assert stored and all(r["writer"] == caller.writer() for r in stored)
    forged = {"type": "message", "role": "user", "state": "sent", "content": "hi",
              "writer": {"principal": "app", "role": "host", "auth": {"method": "local"}}}
    answer = service.call("append_evidence", {"record": forged}, who["agent"])
    # the listing has no writer key (issue 32): the registry refuses it, naming it; the ledger
    # itself answers WRITER_GIVEN to a host that calls it directly
    assert answer["error"]["code"] == "INVALID_ARGUMENT" and "writer" in answer["error"]["message"]
    interpretation = {"id": "I1", "events": [], "dispositions": [], "writer": caller.writer()}
    refused = service.call("append_interpretation", {"interpretation": interpretation}, who["agent"])["error"]
    assert refused["code"] == "INVALID_ARGUMENT" and "writer" in refused["message"]
    ledger = service.evidence
    with pytest.raises(GroundrulesError) as caught:
        ledger.append(forged, project="p1", writer=who["agent"].writer())
    assert caught.value.code == "WRITER_GIVEN"
    assert len(ok(service.call("get_evidence", {}, caller))["records"]) == len(stored)


def test_an_auto_lock_is_observed_when_its_source_was_so_a_historical_fold_reads_it(service):
    """The lock of a message observed at 09:00 and appended at 10:00 is observed at 09:00: a fold
    at 09:30 rests on it."""
    host = Caller("app", "host", ("p1",))
    stored = ok(service.call("append_evidence", {"record": {
        "id": "m1", "type": "message", "role": "user", "state": "sent", "content": "我的手机是 138 1234 5678",
        "observed_at": "2024-05-01T09:00:00+08:00"}}, host))["records"]
    assert {r["observed_at"] for r in stored} == {"2024-05-01T09:00:00+08:00"}
    assert all(r["recorded_at"] >= "2024-05-01T10:00:00+08:00" for r in stored)
    lock = lock_of(stored, "phone")
    fold = ok(service.call("fold_ledger", {"now": "2024-05-01T09:30:00+08:00", "interpretations": [{
        "id": "I1", "events": [phone_event(lock, "e1")], "dispositions": [{"lock": lock, "slot": "phone"}]}]}, host))
    assert fold["state"]["scopes"]["demand_1"]["slots"]["phone"]["value"] == PHONE


# -- signed relays ----------------------------------------------------------------------------------
@pytest.fixture
def signer(rulebook, tmp_path):
    """A tool's signing key, and a trust store letting it vouch for the table's class of tool receipts."""
    key = OKPKey.generate_key("Ed25519", parameters={"kid": "crm-2026"})
    cls = provenance.of(rulebook).class_of({"type": "tool_receipt"})
    trust = tmp_path / "trust.yaml"
    trust.write_text(f"signers:\n  crm-tool:\n    keys: [{_flow(key.as_dict(private=False))}]\n    records: [{cls}]\n",
                     encoding="utf-8")
    return key.as_dict(private=True), load_trust(trust)


def _flow(jwk: dict) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in jwk.items()) + "}"


RECEIPT = {"id": "q1", "type": "tool_receipt", "tool": "crm", "request_id": "req-1", "body": "{\"phone\": \"13999999999\"}"}


def test_a_signed_receipt_relayed_by_an_agent_keeps_its_weight(service, signer, rulebook):
    key, trust = signer
    service = service.with_trust(trust)
    agent = callers()["agent"]
    stored = ok(service.call("append_evidence", {"record": sign(RECEIPT, key)}, agent))["records"]
    assert stored[0]["writer"] == dict(agent.writer(), signer="crm-tool")
    lock = lock_of(stored, "phone")
    fold = ok(service.call("fold_ledger", {"now": NOW, "interpretations": [{
        "id": "I1", "events": [phone_event(lock, "e1", "13999999999")],
        "dispositions": [{"lock": lock, "slot": "phone"}]}]}, agent))
    phone = fold["state"]["scopes"]["demand_1"]["slots"]["phone"]
    assert phone["value"] == "13999999999" and fold["state"]["provenance"]["set_aside"] == []
    by = {e["id"]: e["provenance"] for e in fold["evidence"]}
    assert by["q1"]["by"] == "signed" and by[lock]["by"] == "signed"


def test_a_tampered_unknown_or_unentitled_signature_is_refused_and_writes_nothing(service, signer, rulebook):
    key, trust = signer
    service = service.with_trust(trust)
    agent = callers()["agent"]
    signed = sign(RECEIPT, key)
    tampered = dict(signed, body=signed["body"].replace("9999", "9998"))
    stranger = sign(RECEIPT, OKPKey.generate_key("Ed25519", parameters={"kid": "who"}).as_dict(private=True))
    other_class = sign({"id": "u1", "type": "message", "role": "user", "state": "sent", "content": "hi"}, key)
    garbled = dict(RECEIPT, signature="not-a-jws")
    keyless = dict(RECEIPT, signature="e30.e30.c2ln")         # a well-formed JWS whose header names no key
    cases = [(tampered, "SIGNATURE_INVALID"), (stranger, "SIGNER_UNKNOWN"), (other_class, "SIGNER_NOT_ALLOWED"),
             (garbled, "SIGNATURE_INVALID"), (keyless, "SIGNATURE_INVALID")]
    for record, expected in cases:
        assert service.call("append_evidence", {"record": record}, agent)["error"]["code"] == expected
    assert service.call("append_evidence", {"record": signed}, agent)["ok"]       # the untouched record goes in
    assert len([r for r in ok(service.call("get_evidence", {}, agent))["records"] if r["type"] != "lock"]) == 1


def test_without_a_trust_store_no_signature_counts(service, signer):
    key, _ = signer
    answer = service.call("append_evidence", {"record": sign(RECEIPT, key)}, callers()["agent"])
    assert answer["error"]["code"] == "SIGNER_UNKNOWN"


def test_a_trust_store_that_does_not_load_names_its_line(tmp_path):
    key = OKPKey.generate_key("Ed25519", parameters={"kid": "k"})
    bad = tmp_path / "trust.yaml"
    bad.write_text(f"signers:\n  a:\n    keys: [{_flow(key.as_dict(private=True))}]\n", encoding="utf-8")
    with pytest.raises(GroundrulesError) as raised:
        load_trust(bad)
    message = worded_in(raised.value).message
    assert raised.value.code == "TRUST_INVALID" and message.startswith("trust.yaml:3:")
    assert message == said("trust.private", at=message.split("：")[0]) and str(tmp_path) not in message
    twice = parse("signers:\n  a: {keys: [{kty: OKP, crv: Ed25519, x: AAAA, kid: k}]}\n  b: {keys: []}\n", "t.yaml")
    with pytest.raises(GroundrulesError) as raised:
        _store(twice)
    assert raised.value.code == "TRUST_INVALID"


def test_records_stored_before_writers_were_stamped_count_as_the_table_says(rulebook, tmp_path):
    """A ledger written before this version (no writer on its rows) folds them by `unknown_writer`."""
    table = provenance.of(rulebook)
    ledger = EvidenceLedger(str(tmp_path / "old.sqlite"), ids=iter(f"R{n}" for n in range(99)).__next__,
                            clock=ticking(), rulebook=rulebook)
    stored = ledger.append({"id": "m1", "type": "message", "role": "user", "state": "sent",
                            "content": "我的手机是 138 1234 5678"})
    lock = next(r for r in ledger.records() if r["type"] == "lock")
    import sqlite3
    import json
    with sqlite3.connect(tmp_path / "old.sqlite") as raw:            # what an older version wrote
        raw.execute("DROP TRIGGER ledger_records_only_redaction")
        for seq, body in raw.execute("SELECT seq, body FROM ledger_records").fetchall():
            doc = json.loads(body)
            doc.pop("writer", None)
            raw.execute("UPDATE ledger_records SET body = ? WHERE seq = ?", (json.dumps(doc, ensure_ascii=False), seq))
    assert stored["writer"] and all(r["writer"] == {"principal": "unknown", "role": provenance.UNKNOWN_ROLE,
                                                    "auth": {"method": "unknown"}} for r in ledger.records())
    fold = ledger.fold([{"id": "I1", "events": [phone_event(lock["id"], "e1")],
                         "dispositions": [{"lock": lock["id"], "slot": "phone"}]}], NOW)
    verdict = table.verdicts[table.unknown_writer]
    phone = fold["state"]["scopes"]["demand_1"]["slots"]["phone"]
    assert (phone["value"] == PHONE) is (verdict["effect"] == provenance.DECIDES)
    assert {e["provenance"]["by"] for e in fold["evidence"]} == {"unknown_writer"}
    ledger.close()


def test_the_table_names_only_declared_roles_and_verdicts(rulebook):
    table = provenance.of(rulebook)
    roles = set(rulebook.table("roles").roles)
    assert {role for role, _ in table.roles()} <= roles
    assert {table.unlisted, table.unknown_writer, table.signed} <= set(table.verdicts)
    assert all(r.ok for r in table.check_examples())


def test_cli_sign_makes_a_key_and_a_signature_the_ledger_accepts(tmp_path, capsys, rulebook):
    from groundrules.cli.main import main
    import json
    key = tmp_path / "crm.jwk"
    assert main(["sign", "--generate", "crm-1", "--key", str(key)]) == 0
    public = json.loads(capsys.readouterr().out)
    assert "d" not in public and public["kid"] == "crm-1" and oct(key.stat().st_mode & 0o777) == "0o600"
    assert main(["sign", "--generate", "crm-1", "--key", str(key)]) == 1          # never overwritten
    capsys.readouterr()
    record = tmp_path / "receipt.json"
    record.write_text(json.dumps(RECEIPT), encoding="utf-8")
    assert main(["sign", str(record), "--key", str(key)]) == 0
    signed = json.loads(capsys.readouterr().out)
    cls = provenance.of(rulebook).class_of(RECEIPT)
    trust = tmp_path / "trust.yaml"
    trust.write_text(f"signers:\n  crm:\n    keys: [{_flow(public)}]\n    records: [{cls}]\n", encoding="utf-8")
    db = tmp_path / "l.db"
    record.write_text(json.dumps(signed), encoding="utf-8")
    assert main(["evidence", "append", str(record), "--db", str(db), "--role", "agent", "--trust", str(trust)]) == 0
    appended = json.loads(capsys.readouterr().out)
    assert appended["ok"] and appended["data"]["records"][0]["writer"]["signer"] == "crm"


def test_a_signer_may_use_another_algorithm_than_ed25519(service, rulebook, tmp_path):
    """ES256 (a P-256 key) goes through joserfc's general path, Ed25519 through the key's own check:
    both verify what is untouched and refuse a changed byte."""
    from joserfc.jwk import ECKey
    key = ECKey.generate_key("P-256", parameters={"kid": "ec-1"})
    cls = provenance.of(rulebook).class_of({"type": "tool_receipt"})
    trust = tmp_path / "trust.yaml"
    trust.write_text(f"signers:\n  ec-tool:\n    keys: [{_flow(key.as_dict(private=False))}]\n    records: [{cls}]\n",
                     encoding="utf-8")
    service = service.with_trust(load_trust(trust))
    agent = callers()["agent"]
    signed = sign(RECEIPT, key.as_dict(private=True))
    changed = dict(signed, request_id="req-2")
    assert service.call("append_evidence", {"record": changed}, agent)["error"]["code"] == "SIGNATURE_INVALID"
    assert ok(service.call("append_evidence", {"record": signed}, agent))["records"][0]["writer"]["signer"] == "ec-tool"
