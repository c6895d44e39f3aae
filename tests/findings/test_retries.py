"""Retries, races and boundaries (seed 001 §4–§5): idempotency keys, expected versions, project
isolation, and refusals that carry one of the eight codes and leak nothing."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from budget import examples

from findings_support import CODES, COUNTER, SURFACE_CODES, EXPERIMENT, counts, finding, ok, open_client, refused, sql
from groundrules.core import canonical
from groundrules.store.findings_sqlite import SqliteFindingStore

SECRET = "机密摘录：用户密码是 hunter2"


# ------------------------------------------------------------------------------ idempotency

def test_a_retry_returns_the_first_result_and_creates_nothing(ledger):
    args = finding(evidence=[EXPERIMENT], idempotency_key="req-1")
    first = ledger.call("log_finding", args)
    before = counts(ledger)
    again = ledger.call("log_finding", args)
    assert again == first
    assert counts(ledger) == before


def test_the_same_key_with_another_payload_is_refused(ledger):
    ok(ledger.call("log_finding", finding(idempotency_key="req-1")))
    before = counts(ledger)
    error = refused(ledger.call("log_finding", finding(statement="另一个主张", idempotency_key="req-1")),
                    "INVALID_ARGUMENT")
    assert error["field"] == "idempotency_key"
    fid = "F-000001"
    refused(ledger.call("link_finding", {"finding_id": fid, "relation": "documented_in",
                                         "target": {"document": "a.md"}, "idempotency_key": "req-1"}),
            "INVALID_ARGUMENT")
    assert counts(ledger) == before


def test_a_retried_state_change_is_not_a_conflict(ledger):
    fid = ok(ledger.call("log_finding", finding()))["finding_id"]
    args = {"finding_id": fid, "epistemic_state": "provisional", "reason": "初判", "expected_version": 1,
            "idempotency_key": "state-1"}
    first = ledger.call("set_finding_state", args)
    assert ledger.call("set_finding_state", args) == first
    assert ok(ledger.call("get_finding", {"finding_id": fid}))["finding"]["version"] == 2


def test_a_refused_call_does_not_burn_its_key(ledger):
    fid = ok(ledger.call("log_finding", finding()))["finding_id"]
    args = {"finding_id": fid, "epistemic_state": "supported", "reason": "r", "expected_version": 1,
            "idempotency_key": "k"}
    refused(ledger.call("set_finding_state", args), "EVIDENCE_REQUIRED")
    ok(ledger.call("add_evidence", {"finding_id": fid, "evidence": EXPERIMENT}))
    ok(ledger.call("set_finding_state", dict(args, expected_version=2)))


def test_keys_belong_to_one_project(make_ledger):
    a, b = make_ledger("p1"), make_ledger("p2")
    ok(a.call("log_finding", finding(idempotency_key="k")))
    data = ok(b.call("log_finding", finding(statement="别的项目", idempotency_key="k")))
    assert data["finding_id"] == "F-100001"
    assert sql(b.store, "SELECT COUNT(*) FROM findings") == [(2,)]


# ------------------------------------------------------------------------------ expected versions

@pytest.mark.parametrize("tool, extra", [
    ("set_finding_state", {"epistemic_state": "provisional", "reason": "r"}),
    ("refute_finding", {"reason": "r", "evidence": [COUNTER]}),
    ("supersede_finding", {"reason": "r", "new": finding(statement="新主张")}),
    ("revalidate_finding", {"result": "insufficient", "reason": "复查"}),
    ("add_evidence", {"evidence": EXPERIMENT}),
    ("link_finding", {"relation": "documented_in", "target": {"document": "a.md"}}),
])
def test_a_stale_version_is_refused_and_changes_nothing(ledger, tool, extra):
    fid = ok(ledger.call("log_finding", finding()))["finding_id"]
    ok(ledger.call("link_finding", {"finding_id": fid, "relation": "documented_in", "target": {"document": "b.md"}}))
    before = counts(ledger)
    error = refused(ledger.call(tool, {"finding_id": fid, "expected_version": 1, **extra}), "CONCURRENT_MODIFICATION")
    assert error["current_version"] == 2
    assert counts(ledger) == before


def test_two_sessions_with_the_same_version_one_wins(make_ledger, db):
    a, b = make_ledger("p1"), make_ledger("p1")
    fid = ok(a.call("log_finding", finding(evidence=[EXPERIMENT, COUNTER])))["finding_id"]
    ok(a.call("set_finding_state", {"finding_id": fid, "epistemic_state": "supported", "reason": "a",
                                    "expected_version": 1}))
    refused(b.call("set_finding_state", {"finding_id": fid, "epistemic_state": "contested", "reason": "b",
                                         "expected_version": 1}), "CONCURRENT_MODIFICATION")
    assert ok(b.call("get_finding", {"finding_id": fid}))["finding"]["epistemic_state"] == "supported"


# ------------------------------------------------------------------------------ projects

def test_projects_are_isolated(make_ledger):
    a, b = make_ledger("alpha"), make_ledger("beta")
    secret = ok(a.call("log_finding", finding(statement="alpha 的内部结论", evidence=[dict(EXPERIMENT, excerpt=SECRET)],
                                              tags=["alpha-only"])))
    fid, evidence_id = secret["finding_id"], secret["evidence_ids"][0]
    mine = ok(b.call("log_finding", finding(statement="beta 的结论")))["finding_id"]
    attempts = [
        b.call("get_finding", {"finding_id": fid}),
        b.call("add_evidence", {"finding_id": fid, "evidence": EXPERIMENT}),
        b.call("set_finding_state", {"finding_id": fid, "epistemic_state": "provisional", "reason": "r",
                                     "expected_version": 1}),
        b.call("refute_finding", {"finding_id": fid, "reason": "r", "evidence": [COUNTER], "expected_version": 1}),
        b.call("supersede_finding", {"finding_id": fid, "reason": "r", "expected_version": 1, "new": finding()}),
        b.call("revalidate_finding", {"finding_id": fid, "result": "insufficient", "reason": "复查", "expected_version": 1}),
        b.call("link_finding", {"finding_id": mine, "relation": "related_to", "target": {"finding_id": fid}}),
        b.call("add_evidence", {"finding_id": mine, "evidence": {"evidence_id": evidence_id, "relation": "supports",
                                                                 "method": "experiment"}}),
        b.call("propose_rule", {"finding_id": fid, "rule_text": "r", "target_path": "a.md", "rationale": "r"}),
        b.call("query_findings", {"project": "alpha"}),
        b.call("log_finding", finding(project="alpha")),
    ]
    # another project's ids are as unknown as ids that never existed (no probing across projects);
    # naming another project outright is a scope mismatch
    for env in attempts[:9]:
        refused(env, "NOT_FOUND")
    for env in attempts[9:]:
        refused(env, "PROJECT_SCOPE_MISMATCH")
    for env in attempts:
        text = json.dumps(env["error"], ensure_ascii=False)
        assert "alpha 的内部结论" not in text and SECRET not in text and "alpha-only" not in text
    assert "alpha" not in json.dumps([e["error"] for e in attempts[:9]], ensure_ascii=False)
    assert ok(b.call("query_findings", {"tags": ["alpha-only"]}))["findings"] == []
    assert [f["finding_id"] for f in ok(b.call("query_findings", {"keyword": "结论"}))["findings"]] == [mine]
    assert ok(b.call("query_findings", {"project": "current"}))["count"] == 1
    assert ok(a.call("get_finding", {"finding_id": fid}))["finding"]["version"] == 1


# ------------------------------------------------------------------------------ errors leak nothing

def test_refusals_carry_no_path_and_no_excerpt(make_ledger, db):
    ledger = make_ledger("p1")
    where = str(db) if isinstance(db, Path) else db.partition("?host=")[2]    # a file, or the server's socket dir
    fid = ok(ledger.call("log_finding", finding(evidence=[dict(EXPERIMENT, excerpt=SECRET)])))["finding_id"]
    envelopes = [
        ledger.call("log_finding", finding(epistemic_state="supported", evidence=[dict(EXPERIMENT, excerpt=SECRET,
                                                                                        method="user_statement")])),
        ledger.call("add_evidence", {"finding_id": fid, "evidence": dict(EXPERIMENT, excerpt=SECRET, method="x")}),
        ledger.call("add_evidence", {"finding_id": fid, "evidence": dict(EXPERIMENT, excerpt=SECRET * 2000)}),
        ledger.call("refute_finding", {"finding_id": fid, "reason": SECRET, "evidence": [dict(EXPERIMENT, excerpt=SECRET)],
                                       "expected_version": 1}),
        ledger.call("propose_rule", {"finding_id": fid, "rule_text": SECRET, "target_path": where,
                                     "rationale": SECRET}),
        ledger.call("link_finding", {"finding_id": fid, "relation": "documented_in", "target": {"finding_id": str(db)}}),
        ledger.call("get_finding", {"finding_id": str(db)}),
    ]
    for env in envelopes:
        assert env["ok"] is False
        message = env["error"]["message"]
        assert SECRET not in message and str(db) not in message and where not in message
        assert str(db.parent) not in message if isinstance(db, Path) else "postgres" not in message


def test_sqlite_storage_failures_are_storage_error_without_paths(book, tmp_path):
    def failing(conn):
        conn.execute("CREATE TEMP TRIGGER boom BEFORE INSERT ON findings BEGIN SELECT RAISE(ABORT, 'disk on fire'); END")
    path = tmp_path / "secret-dir" / "ledger.db"
    path.parent.mkdir()
    ledger = open_client(SqliteFindingStore(path, on_connect=failing), "p1", rulebook=book)
    env = ledger.call("log_finding", finding())
    error = refused(env, "STORAGE_ERROR")
    assert "secret-dir" not in error["message"] and "disk on fire" not in error["message"]
    assert ledger.store.conn.execute("SELECT COUNT(*) FROM findings").fetchone()[0] == 0
    ledger.close()


TOOLS = ["log_finding", "query_findings", "get_finding", "add_evidence", "set_finding_state", "refute_finding",
         "supersede_finding", "revalidate_finding", "link_finding", "propose_rule", "bogus"]
json_values = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=8),
                           lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=6), kids, max_size=3),
                           max_leaves=8)
keys = st.sampled_from(["finding_id", "statement", "claim_kind", "evidence", "epistemic_state", "expected_version",
                        "reason", "relation", "target", "result", "keyword", "limit", "scope", "tags", "project",
                        "new", "scope_context", "idempotency_key", "rule_text", "target_path", "rationale"])


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tool=st.sampled_from(TOOLS), args=st.one_of(json_values, st.dictionaries(keys, json_values, max_size=6)))
def test_any_input_answers_an_envelope_with_one_of_the_eight_codes_or_the_registrys(ledger, tool, args):
    env = ledger.call(tool, args)
    assert list(env) == ["ok", "data", "warnings", "error", "rulebook"]
    if not env["ok"]:
        assert env["error"]["code"] in CODES | SURFACE_CODES
    canonical.dumps(env)


# ------------------------------------------------------------------------------ determinism

def test_same_calls_same_bytes(book, tmp_path):
    from groundrules.findings import SequentialIds, StepClock

    def run(path):
        ledger = open_client(path, "p1", rulebook=book, clock=StepClock(), ids=SequentialIds())
        outputs = [ledger.call("log_finding", finding(evidence=[EXPERIMENT], idempotency_key="a")),
                   ledger.call("add_evidence", {"finding_id": "F-000001", "evidence": COUNTER}),
                   ledger.call("query_findings", {"keyword": "探针", "scope_context": {"commit": "x"}}),
                   ledger.call("get_finding", {"finding_id": "F-000001"})]
        ledger.close()
        return canonical.dumps(outputs)
    assert run(tmp_path / "one.db") == run(tmp_path / "two.db")


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tool=st.sampled_from(TOOLS[:-1]), args=st.one_of(json_values, st.dictionaries(keys, json_values, max_size=6)))
def test_the_fast_argument_check_agrees_with_jsonschema(book, tool, args):
    from groundrules.core.schema_check import contract
    checker = contract(book.schemas, f"tools/{tool}.schema.json#/$defs/input")
    assert checker.fast is not None
    assert checker.fast(args) == checker.validator.is_valid(args)
