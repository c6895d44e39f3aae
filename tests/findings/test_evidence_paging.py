"""Issue 13, item 8: get_finding caps and pages evidence links as it does events; the default and
the cap are the vocabulary table's."""
from __future__ import annotations

from findings_support import EXPERIMENT, finding, ok, refused


def item(i: int) -> dict:
    return dict(EXPERIMENT, source_ref=f"run:{i}", excerpt=f"第 {i} 次运行" + "很长的摘录" * 50)


def test_get_finding_pages_evidence_links(ledger, book):
    limits = book.table("findings_vocabulary").limits
    links = limits["evidence_default"] + 7
    fid = ok(ledger.call("log_finding", finding(evidence=[item(0)])))["finding_id"]
    for i in range(1, links):
        ok(ledger.call("add_evidence", {"finding_id": fid, "evidence": item(i)}))
    first = ok(ledger.call("get_finding", {"finding_id": fid}))
    assert len(first["evidence"]) == limits["evidence_default"] and first["evidence_total"] == links
    rest = ok(ledger.call("get_finding", {"finding_id": fid, "evidence_offset": limits["evidence_default"],
                                          "full_excerpts": True}))
    assert len(rest["evidence"]) == links - limits["evidence_default"]
    seen = [e["evidence_id"] for e in first["evidence"] + rest["evidence"]]
    assert len(set(seen)) == links
    error = refused(ledger.call("get_finding", {"finding_id": fid, "evidence_limit": limits["evidence_max"] + 1}),
                    "INVALID_ARGUMENT")
    assert error["field"] == "evidence_limit"
