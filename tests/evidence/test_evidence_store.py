"""The append-only ledger: every store behaves the same (memory, SQLite, PostgreSQL); the databases
refuse rewrites in SQL itself."""
from __future__ import annotations

import hashlib
import hmac
import sqlite3

import pytest

import groundrules
from groundrules import EvidenceLedger, GroundrulesError
from groundrules.evidence.writers import LOCAL_HOST
from groundrules.store.evidence_memory import MemoryEvidenceStore
from groundrules.store.evidence_sqlite import SqliteEvidenceStore


def MemoryLedger(**kwargs) -> EvidenceLedger:
    return EvidenceLedger(MemoryEvidenceStore(), **kwargs)


def SqliteLedger(path: str = ":memory:", **kwargs) -> EvidenceLedger:
    return EvidenceLedger(SqliteEvidenceStore(path), **kwargs)


def counter(prefix: str):
    n = iter(range(1, 10**6))
    return lambda: f"{prefix}{next(n)}"


def ticking():
    n = iter(range(0, 60))
    return lambda: f"2024-05-01T10:{next(n):02d}:00+08:00"


KEY = b"a redaction key kept outside the database"


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def ledger(request, rulebook, tmp_path):
    kwargs = {"ids": counter("R"), "clock": ticking(), "rulebook": rulebook, "redaction_key": KEY}
    if request.param == "memory":
        return MemoryLedger(**kwargs)
    if request.param == "postgres":
        opened = EvidenceLedger(request.getfixturevalue("pg_db"), keys=tmp_path / "keys", **kwargs)
        request.addfinalizer(opened.close)
        return opened
    return SqliteLedger(str(tmp_path / "ledger.sqlite"), **kwargs)


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path):
    """(a database the evidence ledger can open, a raw connection maker, the driver's refusal error)."""
    if request.param == "sqlite":
        path = str(tmp_path / "l.sqlite")
        return path, lambda: sqlite3.connect(path), sqlite3.DatabaseError
    import psycopg
    uri = request.getfixturevalue("pg_db")
    return uri, lambda: psycopg.connect(uri), psycopg.DatabaseError


MESSAGE = {"id": "E41", "type": "message", "role": "user", "state": "sent", "message_id": "m_41",
           "content": "不方便接电话，微信 wx_wang01"}
LOCK = {"id": "L1", "type": "lock", "lock": {
    "id": "L1", "pattern": "wechat.account", "kind": "wechat", "quote": "微信 wx_wang01",
    "locator": {"message_id": "m_41", "start": 7, "end": 19}, "normalized_value": "wx_wang01",
    "valid": True, "invalid_reason": None}}
INTERP = [{"id": "I1", "events": [
    {"id": "e1", "type": "decline", "slot": "phone", "evidence": ["E41"]},
    {"id": "e2", "type": "set", "slot": "wechat", "value": "wx_wang01", "evidence": ["L1"]}],
    "dispositions": [{"lock": "L1", "slot": "wechat"}]}]


def code(fn) -> str:
    with pytest.raises(GroundrulesError) as info:
        fn()
    return info.value.code


def test_append_assigns_id_and_times_from_the_injected_generators(ledger):
    stored = ledger.append({"type": "tool_receipt", "tool": "crm", "request_id": "q1", "body": "{}"})
    assert (stored["id"], stored["observed_at"], stored["recorded_at"]) == (
        "R1", "2024-05-01T10:00:00+08:00", "2024-05-01T10:00:00+08:00")
    assert ledger.records() == [stored]


def test_records_read_back_exactly_in_append_order(ledger):
    ledger.append_all([MESSAGE, LOCK])
    assert [r["id"] for r in ledger.records()] == ["E41", "L1"]
    assert ledger.get("E41")["content"] == MESSAGE["content"]
    assert ledger.get("L1")["lock"] == LOCK["lock"]


def test_integrity_refusals_on_append(ledger):
    ledger.append(MESSAGE)
    assert code(lambda: ledger.append(MESSAGE)) == "DUPLICATE_ID"
    assert code(lambda: ledger.append(dict(MESSAGE, id="E42"))) == "DUPLICATE_ID"   # same message_id
    bad_quote = {**LOCK, "lock": {**LOCK["lock"], "quote": "微信 wx_wang02"}}
    assert code(lambda: ledger.append(bad_quote)) == "QUOTE_MISMATCH"
    stray = {**LOCK, "lock": {**LOCK["lock"], "locator": {"message_id": "m_99", "start": 0, "end": 1}}}
    assert code(lambda: ledger.append(stray)) == "UNKNOWN_EVIDENCE"
    assert code(lambda: ledger.append({"type": "derived", "claim": "?", "derived_from": ["E99"]})) == "UNKNOWN_EVIDENCE"
    assert code(lambda: ledger.append({"type": "derived", "claim": "?"})) == "PAYLOAD_INVALID"
    assert code(lambda: ledger.append(LOCK)) == "LOCK_DUPLICATE"       # append(MESSAGE) stored it already
    (engine,) = groundrules.lock({"id": "m_41", "role": "user", "content": MESSAGE["content"]}, ledger._book)
    assert [r["id"] for r in ledger.records()] == ["E41", engine["id"]]


def test_append_all_is_atomic(ledger):
    bad = {**LOCK, "lock": {**LOCK["lock"], "quote": "nope"}}
    assert code(lambda: ledger.append_all([MESSAGE, bad])) == "QUOTE_MISMATCH"
    assert ledger.records() == []


def test_derived_records_name_what_they_rest_on(ledger):
    ledger.append(MESSAGE)
    derived = ledger.append({"type": "derived", "claim": "用户偏好微信联系", "derived_from": ["E41"]})
    assert derived["derived_from"] == ["E41"]


def test_fold_of_the_stored_ledger(ledger):
    ledger.append_all([MESSAGE, LOCK])
    state = ledger.fold(INTERP, "2024-05-02T00:00:00+08:00")["state"]["scopes"]["demand_1"]["slots"]
    assert (state["phone"]["status"], state["wechat"]["value"]) == ("declined", "wx_wang01")


def test_redaction_leaves_record_locator_and_who_why(ledger):
    ledger.append_all([MESSAGE, LOCK])
    events = ledger.redact("E41", by="dpo@example", reason="用户要求删除个人信息")
    assert [(e["record"], e.get("cascade_of")) for e in events] == [("E41", None), ("L1", events[0]["id"])]
    message, lock = ledger.records()
    keyed = hmac.new(KEY, MESSAGE["content"].encode("utf-8"), hashlib.sha256).hexdigest()
    assert message["content"] == {"redacted": True, "hmac_sha256": keyed, "redaction": events[0]["id"]}
    assert message["redaction"]["by"] == "dpo@example" and message["redaction"]["reason"] == "用户要求删除个人信息"
    assert message["role"] == "user" and message["message_id"] == "m_41"
    assert lock["lock"]["locator"] == LOCK["lock"]["locator"] and lock["lock"]["quote"]["redacted"] is True
    assert ledger.redactions() == events
    assert code(lambda: ledger.redact("E41", by="x", reason="y")) == "ALREADY_REDACTED"
    assert code(lambda: ledger.redact("E99", by="x", reason="y")) == "UNKNOWN_EVIDENCE"


def test_fold_after_redaction_still_checks_the_lock_value(ledger):
    ledger.append_all([MESSAGE, LOCK])
    ledger.redact("E41", by="dpo@example", reason="erasure request")
    slots = ledger.fold(INTERP, "2024-05-02T00:00:00+08:00")["state"]["scopes"]["demand_1"]["slots"]
    assert slots["wechat"]["value"] == "wx_wang01"
    wrong = [dict(INTERP[0], events=[dict(INTERP[0]["events"][1], value="wx_other")])]
    assert code(lambda: ledger.fold(wrong, "2024-05-02T00:00:00+08:00")) == "LOCK_CONFLICT"
    span = [dict(INTERP[0], events=[{"id": "e1", "type": "decline", "slot": "phone",
                                     "evidence": [{"message_id": "m_41", "start": 0, "end": 3, "quote": "不方便"}]},
                                    INTERP[0]["events"][1]])]
    assert code(lambda: ledger.fold(span, "2024-05-02T00:00:00+08:00")) == "EVIDENCE_REDACTED"


NOW = "2024-05-02T00:00:00+08:00"


def test_stored_interpretations_fold_as_the_same_ones_given(ledger):
    ledger.append_all([MESSAGE, LOCK])
    stored = ledger.append_interpretation(INTERP[0])
    assert stored["id"] == "I1" and stored["recorded_at"].startswith("2024-05-01T10:")
    assert ledger.interpretations() == [dict(INTERP[0], writer=LOCAL_HOST)]     # every record names its writer
    assert ledger.fold(None, NOW) == ledger.fold(INTERP, NOW)


def test_an_interpretation_the_fold_would_refuse_is_not_stored(ledger):
    ledger.append_all([MESSAGE, LOCK])
    wrong_value = dict(INTERP[0], events=[dict(INTERP[0]["events"][1], value="wx_other")])
    unknown = dict(INTERP[0], events=[dict(INTERP[0]["events"][0], evidence=["E404"])])
    assert code(lambda: ledger.append_interpretation(wrong_value)) == "LOCK_CONFLICT"
    assert code(lambda: ledger.append_interpretation(unknown)) == "UNKNOWN_EVIDENCE"
    assert code(lambda: ledger.append_interpretation("I1")) == "PAYLOAD_INVALID"
    assert ledger.interpretations() == []
    ledger.append_interpretation(INTERP[0])
    assert code(lambda: ledger.append_interpretation(INTERP[0])) == "DUPLICATE_ID"   # an id is never reused
    assert ledger.interpretations() == [dict(INTERP[0], writer=LOCAL_HOST)]


def test_a_lock_may_wait_for_a_later_interpretation(ledger):
    """Interpretations are appended as the model reads: one may leave a lock to the next, and the
    fold of the stored ones says which locks still wait."""
    ledger.append_all([MESSAGE, LOCK])
    decline, wechat = INTERP[0]["events"]
    ledger.append_interpretation({"id": "I1", "events": [decline], "dispositions": []})
    waiting = ledger.fold(None, NOW)["state"]      # the lock waits, listed; the decline folds (issue 32, item 3)
    assert [(p["record"], p["why"]) for p in waiting["pending"]] == [(LOCK["id"], "no_disposition")]
    assert waiting["scopes"]["demand_1"]["slots"]["phone"]["status"] == "declined"
    ledger.append_interpretation({"id": "I2", "events": [wechat], "dispositions": INTERP[0]["dispositions"]})
    slots = ledger.fold(None, NOW)["state"]["scopes"]["demand_1"]["slots"]
    assert (slots["phone"]["status"], slots["wechat"]["value"]) == ("declined", "wx_wang01")


def test_a_redaction_withdraws_the_interpretations_citing_the_record(ledger, tmp_path):
    other = {"id": "E50", "type": "message", "role": "user", "state": "sent", "message_id": "m_50", "content": "好的"}
    ledger.append_all([MESSAGE, LOCK, other])
    ledger.append_interpretation(INTERP[0])
    unrelated = {"id": "I2", "events": [{"id": "e3", "type": "decline", "slot": "phone", "evidence": ["E50"]}],
                 "dispositions": []}
    ledger.append_interpretation(unrelated)
    events = ledger.redact("E41", by="dpo@example", reason="erasure request")
    assert events[0]["withdrawn_interpretations"] == ["I1"]
    assert ledger.redactions()[0]["withdrawn_interpretations"] == ["I1"]
    assert ledger.interpretations() == [dict(unrelated, writer=LOCAL_HOST)]
    pending = ledger.fold(None, NOW)["state"]["pending"]           # the host reads the lock again
    assert [(p["record"], p["why"]) for p in pending] == [(LOCK["id"], "redacted")]
    if isinstance(ledger.store, SqliteEvidenceStore):                  # no copy of the value stays on disk
        files = [f for f in tmp_path.iterdir() if f.name.startswith("ledger.sqlite")]
        assert files and not any(b"wx_wang01" in f.read_bytes() for f in files)


def test_without_a_key_a_tombstone_holds_no_digest_and_matches_no_value(rulebook):
    ledger = MemoryLedger(ids=counter("R"), clock=ticking(), rulebook=rulebook)
    ledger.append_all([MESSAGE, LOCK])
    events = ledger.redact("E41", by="dpo@example", reason="erasure request")
    message, lock = ledger.records()
    assert message["content"] == {"redacted": True, "redaction": events[0]["id"]}
    assert lock["lock"]["normalized_value"] == {"redacted": True, "redaction": events[1]["id"]}
    assert code(lambda: ledger.fold(INTERP, "2024-05-02T00:00:00+08:00")) == "LOCK_CONFLICT"


def test_records_cannot_arrive_redacted(ledger):
    forged = dict(MESSAGE, content={"redacted": True, "sha256": "0" * 64, "redaction": "R0"})
    assert code(lambda: ledger.append(forged)) == "PAYLOAD_INVALID"


def test_append_message_locks_it_with_the_lock_tables(ledger):
    stored = ledger.append_message({"id": "E41", "type": "message", "role": "user", "state": "sent",
                                    "content": "不方便接电话，微信 wx_wang01"})
    locks = [r["lock"] for r in stored if r["type"] == "lock"]
    assert locks == groundrules.lock({"id": "E41", "role": "user", "content": MESSAGE["content"]}, ledger._book)
    assert all(r["type"] == "lock" for r in ledger.records()[1:])


def test_the_database_refuses_update_delete_and_replace_in_sql(rulebook, database, tmp_path):
    path, connect, refusal = database
    ledger = EvidenceLedger(path, ids=counter("R"), clock=ticking(), rulebook=rulebook, keys=tmp_path / "keys")
    ledger.append_all([MESSAGE, LOCK])
    db = connect()
    attempts = [
        "UPDATE ledger_records SET body = '{}' WHERE id = 'E41'",
        "UPDATE ledger_records SET personal = NULL WHERE id = 'E41'",                       # no redaction event
        "UPDATE ledger_records SET personal = NULL, redaction_id = 'R404' WHERE id = 'E41'",  # event missing
        "DELETE FROM ledger_records WHERE id = 'L1'",
        "DELETE FROM ledger_records",
        "TRUNCATE ledger_records" if refusal is not sqlite3.DatabaseError else  # SQLite has no TRUNCATE
        "INSERT OR REPLACE INTO ledger_records (project, id, type, recorded_at, body, personal, digests) "
        "VALUES ('default', 'E41', 'message', 'x', '{}', '{}', '{}')",
        "INSERT INTO ledger_records (project, id, type, recorded_at, body, personal, digests) "
        "VALUES ('default', 'E41', 'message', 'x', '{}', '{}', '{}') ON CONFLICT(project, id) DO UPDATE SET body = '{}'",
    ]
    for sql in attempts:
        with pytest.raises(refusal):
            db.execute(sql)
        db.rollback()
    ledger.append_interpretation(INTERP[0])
    for sql in ("UPDATE ledger_interpretations SET body = '{}'",
                "UPDATE ledger_interpretations SET body = NULL",                  # no redaction event
                "UPDATE ledger_interpretations SET body = NULL, redaction_id = 'R404'",
                "DELETE FROM ledger_interpretations",
                "INSERT INTO ledger_interpretations (project, id, recorded_at, body) VALUES ('default', 'I1', 'x', '{}')"):
        with pytest.raises(refusal):
            db.execute(sql)
        db.rollback()
    ledger.redact("E41", by="dpo", reason="erasure")
    for sql in ("UPDATE ledger_redactions SET event = '{}'", "DELETE FROM ledger_redactions",
                "UPDATE ledger_records SET personal = '{}' WHERE id = 'E41'",    # a redaction is never undone
                "UPDATE ledger_interpretations SET body = '{}'"):
        with pytest.raises(refusal):
            db.execute(sql)
        db.rollback()
    db.close()
    ledger.close()
    reopened = EvidenceLedger(path, ids=counter("X"), clock=ticking(), rulebook=rulebook, keys=tmp_path / "keys")
    assert [r["id"] for r in reopened.records()] == ["E41", "L1"]
    assert reopened.records()[1]["lock"]["locator"] == LOCK["lock"]["locator"]
    reopened.close()


def test_every_store_holds_the_same_records(rulebook, database, tmp_path):
    stores = [MemoryLedger(ids=counter("R"), clock=ticking(), rulebook=rulebook),
              EvidenceLedger(database[0], ids=counter("R"), clock=ticking(), rulebook=rulebook, keys=tmp_path / "keys")]
    for store in stores:
        store.append_all([MESSAGE, LOCK])
        store.redact("L1", by="dpo", reason="why")
    assert stores[0].records() == stores[1].records()
    assert stores[0].redactions() == stores[1].redactions()


@pytest.mark.parametrize("record", [
    dict(MESSAGE, content="不方便接电话 \udc00"),
    {"type": "injected_field", "field": "region", "value": float("nan"), "origin": "crm.account"},
    {"type": "injected_field", "field": "region", "value": float("inf"), "origin": "crm.account"},
    {"type": "injected_field", "field": "region", "value": float("-inf"), "origin": "crm.account"},
    {"type": "tool_receipt", "tool": "crm", "request_id": "r1", "body": "{}", "subject": "\ud800"},
])
def test_what_json_cannot_carry_is_refused_by_both_stores(ledger, record):
    """A lone surrogate or a non-finite number could never be written out again as JSON (and SQLite
    cannot even store the surrogate): refused up front, by both stores alike, and nothing is appended."""
    assert code(lambda: ledger.append(record)) == "PAYLOAD_INVALID"
    assert ledger.records() == []


def test_projects_never_see_each_others_records(ledger):
    ledger.append_all([MESSAGE, LOCK], project="north")
    ledger.append_all([MESSAGE], project="south")       # the same ids, another project: its own records
    (engine,) = groundrules.lock({"id": "m_41", "role": "user", "content": MESSAGE["content"]}, ledger._book)
    assert [r["id"] for r in ledger.records(project="north")] == ["E41", "L1"]
    assert [r["id"] for r in ledger.records(project="south")] == ["E41", engine["id"]]   # locked on append
    assert code(lambda: ledger.redact("L1", by="dpo", reason="r", project="south")) == "UNKNOWN_EVIDENCE"
    assert ledger.redactions(project="south") == [] and ledger.records(project="elsewhere") == []
