"""A call's lifecycle is passed explicitly (store/lifecycle.py): Service.call(..., lifecycle=) hands it
to the ledger the call writes to and on to its store, which counts the call's attempts and rolls
back, writing nothing, once the server abandoned it. A library call has none and is unaffected."""
from __future__ import annotations

import itertools

from groundrules import Caller, EvidenceLedger, FindingLedger, Service, default_rulebook
from groundrules.store.lifecycle import Lifecycle

from findings_support import finding

AGENT = Caller("agent-1", "agent", ("p1",))      # files findings
HOST = Caller("host-1", "host", ("p1",))         # relays tool receipts
RECEIPT = {"type": "tool_receipt", "tool": "crm", "request_id": "q1", "body": "{}"}


def served(book, db, tmp_path) -> Service:
    n = itertools.count()
    evidence = EvidenceLedger(db, ids=lambda: f"R{next(n)}", clock=lambda: "2030-01-01T00:00:00Z", rulebook=book,
                              keys=tmp_path / "keys", project="p1")
    return Service(book, findings=FindingLedger(db, rulebook=book), evidence=evidence)


def test_a_calls_writes_are_counted_under_its_lifecycle(db, tmp_path):
    service = served(default_rulebook(), db, tmp_path)
    try:
        lifecycle = Lifecycle()
        assert service.call("log_finding", finding(), AGENT, lifecycle=lifecycle)["ok"]
        assert lifecycle.attempts == 1
        assert service.call("append_evidence", {"record": RECEIPT}, HOST, lifecycle=lifecycle)["ok"]
        assert lifecycle.attempts == 2
        assert service.call("query_findings", {}, AGENT, lifecycle=lifecycle)["ok"]
        assert lifecycle.attempts == 2                     # a read is no write attempt
        assert service.findings.lifecycle is None and service.evidence.lifecycle is None
    finally:
        service.findings.close()
        service.evidence.close()


def test_an_abandoned_call_writes_nothing_and_says_so(db, tmp_path):
    service = served(default_rulebook(), db, tmp_path)
    try:
        lifecycle = Lifecycle()
        lifecycle.abandon()
        answers = [service.call("log_finding", finding(), AGENT, lifecycle=lifecycle),
                   service.call("append_evidence", {"record": RECEIPT}, HOST, lifecycle=lifecycle)]
        assert [a["error"]["code"] for a in answers] == ["SHUTTING_DOWN"] * 2
        assert service.call("query_findings", {}, AGENT)["data"]["findings"] == []
        assert service.evidence.records() == []
        assert service.call("log_finding", finding(), AGENT)["ok"]      # a call of its own is not abandoned
    finally:
        service.findings.close()
        service.evidence.close()
