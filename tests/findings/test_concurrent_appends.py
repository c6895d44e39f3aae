"""Hosts appending at once (issue 10). A call that only adds rows (findings.tools.APPENDS) runs
without being serialized against other writes (PostgreSQL: REPEATABLE READ); what SERIALIZABLE
gave it, unique keys give it: one evidence record per source and content, one first record per
source (so a second content for a new source is warned about as a changed source), one answer per
idempotency key. Every test runs on SQLite and on PostgreSQL (the `db` fixture): callers on
separate ledgers, released together by a barrier."""
from __future__ import annotations

import threading

from findings_support import EXPERIMENT, finding, ok, sql
from groundrules.findings import FindingLedger, tools

HOSTS = 6


def race(clients, arguments) -> list[dict]:
    """Every client calls log_finding(arguments(n)) at the same moment; the envelopes, in client order."""
    barrier, answers = threading.Barrier(len(clients)), [None] * len(clients)

    def run(n: int) -> None:
        barrier.wait()
        answers[n] = clients[n].call("log_finding", arguments(n))
    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return answers


def test_hosts_citing_one_new_source_at_once_share_one_evidence_record(make_ledger):
    clients = [make_ledger("p1") for _ in range(HOSTS)]
    answers = race(clients, lambda n: finding(statement=f"同一来源的主张 {n}", evidence=[EXPERIMENT]))
    found = [ok(a) for a in answers]
    assert len({f["finding_id"] for f in found}) == HOSTS                 # no call lost
    assert len({f["evidence_ids"][0] for f in found}) == 1                # none duplicated the record
    assert sql(clients[0].store, "SELECT COUNT(*) FROM evidence") == [(1,)]
    assert sql(clients[0].store, "SELECT COUNT(*) FROM finding_evidence") == [(HOSTS,)]
    assert not any(w["code"] == "evidence_source_changed" for a in answers for w in a["warnings"])


def test_hosts_citing_one_new_source_with_different_content_are_told_the_source_changed(make_ledger):
    clients = [make_ledger("p1") for _ in range(HOSTS)]
    answers = race(clients, lambda n: finding(statement=f"主张 {n}", evidence=[dict(EXPERIMENT, excerpt=f"第 {n} 版")]))
    found = [ok(a) for a in answers]
    assert len({f["evidence_ids"][0] for f in found}) == HOSTS
    assert sql(clients[0].store, "SELECT COUNT(*) FROM evidence WHERE first_of_source") == [(1,)]
    warned = [any(w["code"] == "evidence_source_changed" for w in a["warnings"]) for a in answers]
    assert warned.count(False) == 1                                       # as if one after the other


def test_hosts_retrying_one_idempotency_key_at_once_get_one_finding_and_one_answer(make_ledger):
    clients = [make_ledger("p1") for _ in range(HOSTS)]
    answers = race(clients, lambda n: finding(statement="只记一次", idempotency_key="once", evidence=[EXPERIMENT]))
    assert len({repr(ok(a)) for a in answers}) == 1
    assert sql(clients[0].store, "SELECT COUNT(*) FROM findings") == [(1,)]
    assert sql(clients[0].store, "SELECT COUNT(*) FROM idempotency_keys") == [(1,)]


def test_one_call_citing_a_new_source_twice_with_two_contents_writes_two_records_one_first(ledger):
    envelope = ledger.call("log_finding", finding(evidence=[dict(EXPERIMENT, excerpt="第一版"),
                                                            dict(EXPERIMENT, excerpt="第二版"), EXPERIMENT,
                                                            dict(EXPERIMENT, excerpt="第一版")]))
    data = ok(envelope)
    assert data["evidence_count"] == 3                                    # the repeated item reuses the first
    assert sql(ledger.store, "SELECT first_of_source FROM evidence ORDER BY seq") == [(True,), (False,), (False,)]


def test_the_ledger_asks_the_store_to_append_only_for_the_appending_tools(book, db):
    class Recording:
        def __init__(self, store):
            self.store, self.asked = store, []

        def run_write(self, body, *, appends_only=False):
            self.asked.append(appends_only)
            return self.store.run_write(body, appends_only=appends_only)

        def close(self):
            self.store.close()
    inner = FindingLedger(db, rulebook=book)
    store = Recording(inner.store)
    ledger = FindingLedger(store, rulebook=book)
    fid = ledger.run("log_finding", finding(evidence=[EXPERIMENT]), project="p1", principal="t")[0]["finding_id"]
    ledger.run("add_evidence", {"finding_id": fid, "evidence": dict(EXPERIMENT, source_ref="run:2")},
               project="p1", principal="t")
    assert store.asked == [True, False]
    assert tools.APPENDS <= set(tools.WRITES)
    ledger.close()
