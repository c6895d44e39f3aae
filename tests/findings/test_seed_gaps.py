"""Seed 001's remaining rules (issue 11 items 1-4), one test per rule, named after it."""
from __future__ import annotations

from findings_support import EXPERIMENT, counts, finding, ok, refused

OOM = {"match": {"runtime.backend": "vLLM"}, "context": {"commit": "0862527"}, "revalidate_on": ["code_change"]}
HERE = {"runtime": {"backend": "vLLM"}, "commit": "0862527"}


def _oom(ledger) -> str:
    return ok(ledger.call("log_finding", finding(statement="batch=32 时 OOM", scope=OOM,
                                                 epistemic_state="provisional", evidence=[EXPERIMENT])))["finding_id"]


def _current(ledger, **arguments) -> dict:
    found = ok(ledger.call("query_findings", {"scope_context": HERE, **arguments}))["findings"]
    return {f["finding_id"]: f for f in found}


# ------------------------------------------------------------------------------ item 1

def test_seed001_a_replaced_claim_is_never_current(ledger, book):
    """§3 revalidate_finding + §6: a material change creates a new finding, and the one it replaces
    leaves the current set in the same call (its lifecycle move is the table's)."""
    old = _oom(ledger)
    data = ok(ledger.call("revalidate_finding", {"finding_id": old, "result": "insufficient", "expected_version": 1,
                                                 "statement": "batch>=16 时 OOM", "reason": "更小的 batch 也复现了"}))
    new = data["finding_id"]
    assert data["created_new"] is True
    replaced = book.table("findings_vocabulary").acts_on["revalidation_replaced_state"]
    assert not book.table("finding_states").machine("lifecycle").is_current(replaced)

    assert list(_current(ledger)) == [new]
    assert list(_current(ledger, keyword="OOM")) == [new]
    history = _current(ledger, include_history=True)
    assert set(history) == {old, new}
    assert history[new]["applicability"]["current"] is True
    assert (history[old]["lifecycle_state"], history[old]["applicability"]["current"]) == (replaced, False)

    events = ok(ledger.call("get_finding", {"finding_id": old}))["events"]
    move = [e for e in events if e["kind"] == "revalidated"][-1]
    assert (move["from_state"], move["to_state"], move["payload"]["new_finding_id"]) == ("active", replaced, new)


def test_seed001_a_refused_revalidation_leaves_the_old_claim_current(ledger):
    """The new finding and the predecessor's move are one transaction: a refusal writes neither."""
    old = _oom(ledger)
    before = counts(ledger)
    refused(ledger.call("revalidate_finding", {"finding_id": old, "result": "still_supports", "expected_version": 1,
                                               "statement": "batch>=16 时 OOM", "reason": "r",
                                               "evidence": [dict(EXPERIMENT, method="bogus")]}), "INVALID_ARGUMENT")
    assert counts(ledger) == before
    assert list(_current(ledger)) == [old]
