"""Issue 19, item 5: every lookup an evidence-ledger call makes uses an index on its whole key (a
record's owner, a subject's records, the locks inside a source, the interpretations a new one
touches, a redaction by id). The project already holds thousands of records and interpretations of
other subjects, with fresh planner statistics; append_evidence, append_interpretation,
redact_evidence, get_evidence and fold_ledger for a subject are called, and the plan of every
statement they sent is read on SQLite (EXPLAIN QUERY PLAN) and PostgreSQL (EXPLAIN): none may scan
a table or search an index on the project alone."""
from __future__ import annotations

import itertools

import pytest

from groundrules import Caller, EvidenceLedger, Service, default_rulebook

from plans import analyze, capture, is_postgres, problems

SUBJECTS = 1500                      # other subjects already in the project, two records each
TABLES = {"ledger_records", "ledger_redactions", "ledger_interpretations", "ledger_interpretation_keys"}
NOW = "2030-01-02T00:00:00+08:00"
AGENT, REVIEWER = Caller("tester", "agent", ("p1",)), Caller("tester", "reviewer", ("p1",))


@pytest.fixture(params=["sqlite", "postgres"])
def served(request, tmp_path):
    db = str(tmp_path / "l.sqlite") if request.param == "sqlite" else request.getfixturevalue("pg_db")
    n = itertools.count()
    ledger = EvidenceLedger(db, ids=lambda: f"R{next(n)}", clock=lambda: "2030-01-01T00:00:00+08:00",
                            rulebook=default_rulebook(), project="p1", keys=tmp_path / "keys")
    yield Service(ledger._book, evidence=ledger), ledger
    ledger.close()


def fill(ledger: EvidenceLedger, subjects: int) -> None:
    """Other subjects' messages with their locks, one interpretation each, and some redactions,
    written as the ledger writes them, in one transaction."""
    from groundrules.evidence import locking
    sample = {"id": "o", "type": "message", "role": "user", "state": "sent", "content": "微信 wx_other1"}
    (lock,) = locking.engine_locks(sample, ledger._catalogue, ledger._book)
    rows, interpretations = [], []
    for s in range(subjects):
        at = f"2029-{1 + s % 12:02d}-{1 + s % 28:02d}T{s % 24:02d}:{s % 60:02d}:00+08:00"
        record = dict(sample, id=f"o{s}", subject=f"other_{s}", observed_at=at, recorded_at=at)
        rows.append(ledger._filed(record, "p1"))
        rows.append(ledger._filed(dict(record, id=f"o{s}b", content="明天再说"), "p1"))
        rows.append(ledger._filed({"id": f"L-o{s}", "type": "lock", "observed_at": at, "recorded_at": at,
                                    "lock": dict(lock, id=f"L-o{s}", locator=dict(lock["locator"], message_id=f"o{s}"))},
                                   "p1"))
        interpretations.append({"id": f"I-o{s}", "events": [{"id": f"e-o{s}", "type": "decline", "slot": "phone",
                                                              "evidence": [f"o{s}"]}],
                                "dispositions": [{"lock": f"L-o{s}", "dismissed": "noise"}]})
    with ledger.store.write("p1") as tx:
        tx.insert(rows)
        tx.clear([{"id": f"R-o{s}", "record": f"o{s}b"} for s in range(0, subjects, 3)])
        for i in interpretations:
            tx.add_interpretation(i, "2030-01-01T00:00:00+08:00",
                                  sorted({f"i:{i['id']}", f"e:{i['events'][0]['id']}", f"src:{i['events'][0]['evidence'][0]}"}))


def calls(ledger: EvidenceLedger):
    message = {"id": "m1", "type": "message", "role": "user", "state": "sent", "subject": "demand_1",
               "content": "不方便接电话，微信 wx_wang01"}
    yield "append_evidence", {"record": message}, AGENT
    yield "append_evidence", {"record": {"id": "d1", "type": "derived", "subject": "demand_1",
                                         "claim": "用户偏好微信", "derived_from": ["m1"]}}, AGENT
    (lock,) = [r["id"] for r in ledger.records() if r["type"] == "lock" and r["lock"]["locator"]["message_id"] == "m1"]
    yield "append_interpretation", {"interpretation": {"id": "I1", "events": [
        {"id": "e1", "type": "decline", "slot": "phone", "evidence": ["m1"]},
        {"id": "e2", "type": "set", "slot": "wechat", "value": "wx_wang01", "evidence": [lock]}],
        "dispositions": [{"lock": lock, "slot": "wechat"}]}}, AGENT
    yield "get_evidence", {"record_id": "m1"}, AGENT
    yield "fold_ledger", {"now": NOW, "subject": "demand_1"}, AGENT
    yield "redact_evidence", {"record_id": "m1", "reason": "用户要求删除"}, REVIEWER
    yield "get_evidence", {"record_id": "m1"}, AGENT


def test_every_lookup_of_an_evidence_call_uses_its_whole_key(served, monkeypatch):
    service, ledger = served
    fill(ledger, SUBJECTS)
    analyze(ledger.store)
    found = []
    for tool, arguments, caller in calls(ledger):
        with capture(ledger.store, monkeypatch) as sent:
            envelope = service.call(tool, arguments, caller)
        assert envelope["ok"], (tool, envelope["error"])
        found += [f"{tool}: {p}" for p in problems(ledger.store, sent, TABLES)]
    assert found == [], "\n".join(found)
