"""Seed 001's remaining rules (issue 11 items 1-4), one test per rule, named after it."""
from __future__ import annotations

import hashlib

import pytest

from findings_support import EXPERIMENT, counts, finding, ok, refused
from groundrules.core.errors import GroundrulesError
from groundrules.findings import arguments as argument_checks
from groundrules.findings.call import Call
from groundrules.findings.clock import SequentialIds

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


# ------------------------------------------------------------------------------ item 2

def _digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_seed001_evidence_reuse_checks_the_digest_of_what_is_stored(ledger):
    """§3 add_evidence: reuse by source_ref must check kind, revision and the content digest; the
    digest is the server's, computed from the excerpt it stores."""
    fid = _oom(ledger)
    first = ok(ledger.call("get_finding", {"finding_id": fid}))["evidence"][0]
    assert first["content_hash"] == _digest(EXPERIMENT["excerpt"])

    # the same source with the first excerpt's hash but a different excerpt: refused, nothing written
    other = dict(EXPERIMENT, excerpt="batch=8 时也 OOM", relation="contradicts", content_hash=first["content_hash"])
    before = counts(ledger)
    error = refused(ledger.call("add_evidence", {"finding_id": fid, "evidence": other}), "INVALID_ARGUMENT")
    assert error["field"] == "evidence.content_hash" and "batch=8" not in error["message"]
    assert counts(ledger) == before

    # without the hash, the new text is a new record: nothing is lost, and no record is on both sides
    other.pop("content_hash")
    data = ok(ledger.call("add_evidence", {"finding_id": fid, "evidence": other}))
    assert data["reused"] is False and data["evidence_id"] != first["evidence_id"]
    links = ok(ledger.call("get_finding", {"finding_id": fid, "full_excerpts": True}))["evidence"]
    assert {(e["evidence_id"], e["relation"], e["excerpt"]) for e in links} == {
        (first["evidence_id"], "supports", EXPERIMENT["excerpt"]), (data["evidence_id"], "contradicts", "batch=8 时也 OOM")}

    # a correct hash is accepted and the record reused
    same = dict(EXPERIMENT, content_hash=_digest(EXPERIMENT["excerpt"]))
    again = ok(ledger.call("log_finding", finding(statement="另一个主张", evidence=[same])))
    assert again["evidence_ids"] == [first["evidence_id"]]


# ------------------------------------------------------------------------------ item 3

STATE_CHANGES = [
    ("set_finding_state", {"epistemic_state": "provisional"}),
    ("refute_finding", {"evidence": [dict(EXPERIMENT, relation="contradicts", source_ref="run:9")]}),
    ("supersede_finding", {"new": finding(statement="batch>=16 时 OOM")}),
    ("revalidate_finding", {"result": "insufficient"}),
]


def test_seed001_every_state_change_takes_a_reason(ledger):
    """§1: 状态变更操作需要 reason. Missing, empty or blank: refused at the schema, nothing written."""
    fid = _oom(ledger)
    before = counts(ledger)
    for tool, extra in STATE_CHANGES:
        for reason in (None, "", "  \n\t"):
            arguments = {"finding_id": fid, "expected_version": 1, **extra}
            if reason is not None:
                arguments["reason"] = reason
            error = refused(ledger.call(tool, arguments), "INVALID_ARGUMENT")
            assert "reason" in error["field"] + error["message"], (tool, reason, error)
    assert counts(ledger) == before


def test_seed001_a_blank_reason_is_refused_by_the_domain_too(ledger):
    """The tools check the reason themselves, so a caller that bypasses the registry's schema
    cannot store a state change without one."""
    call = Call(ledger.book, None, "set_finding_state", "p1", "tester", "2025-01-01T00:00:00Z", SequentialIds())
    for given in ({}, {"reason": ""}, {"reason": " \u3000"}):
        with pytest.raises(GroundrulesError) as info:
            argument_checks.reason(call, given)
        assert (info.value.code, info.value.field) == ("INVALID_ARGUMENT", "reason")
    assert argument_checks.reason(call, {"reason": "复查"}) == "复查"


def test_seed001_the_reason_is_kept_with_each_state_change(ledger):
    fid = _oom(ledger)
    ok(ledger.call("revalidate_finding", {"finding_id": fid, "result": "insufficient", "reason": "换了驱动后复查",
                                          "expected_version": 1}))
    events = ok(ledger.call("get_finding", {"finding_id": fid}))["events"]
    assert [e["reason"] for e in events if e["kind"] == "revalidated"] == ["换了驱动后复查"]


# ------------------------------------------------------------------------------ item 4

TASK_SCOPE = {"match": {"runtime.backend": "vLLM", "goal": "排查 OOM"}, "context": {}, "revalidate_on": []}


def _verdicts(ledger, **arguments) -> dict:
    found = ok(ledger.call("query_findings", {"include_history": True, **arguments}))["findings"]
    return {f["finding_id"]: f["applicability"]["verdict"] for f in found}


def test_seed001_query_reads_task_context_beside_scope_context(ledger):
    """§3 query_findings: task_context / scope_context, 当前任务与环境. The task's keys meet the
    finding's match conditions as the environment's do."""
    fid = ok(ledger.call("log_finding", finding(scope=TASK_SCOPE)))["finding_id"]
    env = {"runtime": {"backend": "vLLM"}}
    assert _verdicts(ledger, scope_context=env, task_context={"goal": "排查 OOM"}) == {fid: "applicable"}
    assert _verdicts(ledger, scope_context=env, task_context={"goal": "上线"}) == {fid: "incompatible"}
    assert _verdicts(ledger, scope_context=env) == {fid: "conditional"}
    assert _verdicts(ledger, task_context={"goal": "排查 OOM"}) == {fid: "conditional"}


def test_seed001_a_key_in_both_contexts_is_refused(ledger):
    error = refused(ledger.call("query_findings", {"scope_context": {"goal": "a"}, "task_context": {"goal": "a"}}),
                    "INVALID_ARGUMENT")
    assert error["field"] == "task_context" and "goal" in error["message"]
    error = refused(ledger.call("query_findings", {"task_context": {"a": {"b": 1}, "a.b": 2}}), "INVALID_ARGUMENT")
    assert error["field"] == "task_context"
