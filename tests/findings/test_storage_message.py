"""Issue 19, item 3: one message catalogue for every ledger's storage failures. Whichever ledger's
store fails, the caller reads the role table's `storage_error` sentence, rendered with the failure's
kind, in the one language of the server's tables; no ledger words it itself."""
from __future__ import annotations

import itertools

from groundrules import Caller, EvidenceLedger, FindingLedger, Service, default_rulebook

from findings_support import finding


def test_both_ledgers_word_a_storage_failure_from_the_one_table(tmp_path):
    book = default_rulebook()
    db = tmp_path / "ledgers.db"
    n = itertools.count()
    findings = FindingLedger(db, rulebook=book)
    evidence = EvidenceLedger(db, ids=lambda: f"R{next(n)}", clock=lambda: "2030-01-01T00:00:00Z", rulebook=book)
    service = Service(book, findings=findings, evidence=evidence)
    caller = Caller("tester", "agent", ("p1",))
    findings.store.conn.close()                # every statement now fails in the driver
    evidence.store.conn.close()
    answers = [service.call("log_finding", finding(), caller),
               service.call("query_findings", {}, caller),
               service.call("append_evidence", {"record": {"type": "tool_receipt", "tool": "crm", "request_id": "q1",
                                                           "body": "{}"}}, caller),
               service.call("get_evidence", {}, caller)]
    wanted = book.table("roles").message("storage_error", kind="ProgrammingError")
    assert [a["error"] for a in answers] == [{"code": "STORAGE_ERROR", "message": wanted}] * len(answers)
    vocabulary = book.table("findings_vocabulary")
    assert "storage_error" not in vocabulary.messages       # the finding ledger no longer words it
