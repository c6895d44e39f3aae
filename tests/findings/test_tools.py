"""The ten tools, seed 001 §3 and §6: one test per behaviour an agent relies on."""
from __future__ import annotations

import pytest

from findings_support import COUNTER, EXPERIMENT, USER_SAYS, counts, database_errors, finding, ok, refused, sql


def log(ledger, **overrides) -> dict:
    return ok(ledger.call("log_finding", finding(**overrides)))


def version(ledger, finding_id: str) -> int:
    return ok(ledger.call("get_finding", {"finding_id": finding_id}))["finding"]["version"]


# ------------------------------------------------------------------------------ log_finding

def test_log_defaults_to_unassessed_and_reports_what_is_missing(ledger):
    data = log(ledger, scope={"match": {"runtime.backend": "vLLM"}})
    assert data["epistemic_state"] == "unassessed"
    assert data["lifecycle_state"] == "active"
    assert data["evidence_count"] == 0
    assert data["needs"] == ["scope.context.commit", "evidence"]


def test_log_returns_id_state_and_evidence_count(ledger):
    data = log(ledger, epistemic_state="provisional", evidence=[EXPERIMENT])
    assert data["finding_id"] == "F-000001"
    assert (data["epistemic_state"], data["evidence_count"], data["evidence_ids"]) == ("provisional", 1, ["E-000001"])
    assert data["needs"] == []


def test_statement_and_claim_kind_are_required(ledger):
    assert refused(ledger.call("log_finding", {"claim_kind": "diagnosis"}), "INVALID_ARGUMENT")["field"] == "(arguments)"
    refused(ledger.call("log_finding", {"statement": "x"}), "INVALID_ARGUMENT")
    error = refused(ledger.call("log_finding", finding(claim_kind="diagnosys")), "INVALID_ARGUMENT")
    assert error["field"] == "claim_kind" and "diagnosis" in error["message"]


@pytest.mark.parametrize("evidence", [[], [USER_SAYS], [dict(EXPERIMENT, relation="contradicts")],
                                      [dict(EXPERIMENT, method="model_inference")]])
def test_supported_needs_independent_supporting_evidence(ledger, evidence):
    before = counts(ledger)
    error = refused(ledger.call("log_finding", finding(epistemic_state="supported", evidence=evidence)),
                    "EVIDENCE_REQUIRED")
    assert error["guard"] == "independent-support"
    assert counts(ledger) == before


def test_supported_with_an_experiment(ledger):
    assert log(ledger, epistemic_state="supported", evidence=[EXPERIMENT])["epistemic_state"] == "supported"


def test_audited_manual_exception_is_recorded_under_the_callers_name(make_ledger):
    reviewer = make_ledger(principal="user:alice")
    env = reviewer.call("log_finding", finding(epistemic_state="supported",
                                               manual_exception={"reason": "复盘会议确认"}))
    data = ok(env)
    assert "manual_exception_recorded" in [w["code"] for w in env["warnings"]]
    events = ok(reviewer.call("get_finding", {"finding_id": data["finding_id"]}))["events"]
    assert events[0]["payload"]["manual_exception"] == {"approved_by": "user:alice", "reason": "复盘会议确认"}


@pytest.mark.parametrize("approved_by, role", [("user:boss", "reviewer"), ("user:boss", "agent"), (None, "agent")])
def test_a_manual_exception_is_never_on_someone_elses_word(make_ledger, approved_by, role):
    """Seed 001 §1/§6: only an explicit, auditable human exception; an agent cannot type one in, and
    nobody can sign one with another's name."""
    caller = make_ledger(principal="agent-7" if role == "agent" else "user:alice", role=role)
    exception = {"reason": "老板同意了"} | ({"approved_by": approved_by} if approved_by else {})
    before = counts(caller)
    for tool, arguments in (("log_finding", finding(epistemic_state="supported", manual_exception=exception)),):
        error = refused(caller.call(tool, arguments), "PERMISSION_DENIED")
        assert error["field"].startswith("manual_exception")
    assert counts(caller) == before


def test_failed_evidence_leaves_no_half_written_finding(ledger):
    log(ledger)
    before = counts(ledger)
    bad = dict(EXPERIMENT, source_ref="run:2", method="vibes")
    error = refused(ledger.call("log_finding", finding(evidence=[dict(EXPERIMENT, source_ref="run:1"), bad])),
                    "INVALID_ARGUMENT")
    assert error["field"] == "evidence[1].method"
    assert counts(ledger) == before


# ------------------------------------------------------------------------------ get_finding

def test_get_finding_returns_short_excerpts_unless_asked(ledger, book):
    long_excerpt = "温度漂移" * 60
    fid = log(ledger, evidence=[dict(EXPERIMENT, excerpt=long_excerpt)])["finding_id"]
    limit = book.table("findings_vocabulary").limits["excerpt_chars"]
    short = ok(ledger.call("get_finding", {"finding_id": fid}))["evidence"][0]
    assert short["excerpt_truncated"] is True and short["excerpt"] == long_excerpt[:limit] + "…"
    full = ok(ledger.call("get_finding", {"finding_id": fid, "full_excerpts": True}))["evidence"][0]
    assert (full["excerpt"], full["excerpt_truncated"]) == (long_excerpt, False)


def test_get_finding_holds_states_scope_evidence_relations_events_and_documents(ledger):
    fid = log(ledger, evidence=[EXPERIMENT])["finding_id"]
    other = log(ledger, statement="另一个发现")["finding_id"]
    ok(ledger.call("link_finding", {"finding_id": fid, "relation": "depends_on", "target": {"finding_id": other}}))
    ok(ledger.call("link_finding", {"finding_id": fid, "relation": "documented_in",
                                    "target": {"document": "docs/debugging.md"}}))
    data = ok(ledger.call("get_finding", {"finding_id": fid}))
    assert list(data) == ["finding", "evidence", "evidence_total", "evidence_offset", "relations", "events",
                          "events_total", "documents", "rule_proposals"]
    f = data["finding"]
    assert (f["epistemic_state"], f["lifecycle_state"], f["last_validated_at"]) == (
        "unassessed", "active", "2025-01-01T00:00:00Z")
    assert f["scope"]["revalidate_on"] == ["code_change", "config_change"]
    assert [(r["direction"], r["relation"], r["finding_id"]) for r in data["relations"]] == [
        ("outgoing", "depends_on", other)]
    assert [e["kind"] for e in data["events"]] == ["created", "linked", "linked"]
    assert [d["target"] for d in data["documents"]] == ["docs/debugging.md"]
    incoming = ok(ledger.call("get_finding", {"finding_id": other}))["relations"]
    assert [(r["direction"], r["finding_id"]) for r in incoming] == [("incoming", fid)]


def test_get_finding_limits_events(ledger):
    fid = log(ledger)["finding_id"]
    for n in range(3):
        ok(ledger.call("link_finding", {"finding_id": fid, "relation": "documented_in",
                                        "target": {"document": f"docs/{n}.md"}}))
    data = ok(ledger.call("get_finding", {"finding_id": fid, "events_limit": 2}))
    assert [e["version"] for e in data["events"]] == [3, 4] and data["events_total"] == 4
    refused(ledger.call("get_finding", {"finding_id": fid, "events_limit": 10_000}), "INVALID_ARGUMENT")


def test_unknown_finding_is_not_found(ledger):
    refused(ledger.call("get_finding", {"finding_id": "F-999999"}), "NOT_FOUND")


# ------------------------------------------------------------------------------ add_evidence

def test_contradicting_evidence_never_refutes_by_itself(ledger):
    fid = log(ledger, epistemic_state="supported", evidence=[EXPERIMENT])["finding_id"]
    env = ledger.call("add_evidence", {"finding_id": fid, "evidence": COUNTER})
    data = ok(env)
    assert data["epistemic_state"] == "supported" and data["linked"] is True
    assert [w["code"] for w in env["warnings"]] == ["contradicting_evidence_unassessed"]
    assert ok(ledger.call("get_finding", {"finding_id": fid}))["finding"]["epistemic_state"] == "supported"


def test_source_ref_is_reused_only_when_kind_revision_and_content_agree(ledger):
    a = log(ledger, evidence=[EXPERIMENT])["finding_id"]
    b = log(ledger, statement="第二个发现")["finding_id"]
    same = ok(ledger.call("add_evidence", {"finding_id": b, "evidence": EXPERIMENT}))
    assert (same["evidence_id"], same["reused"]) == ("E-000001", True)
    for change in ({"revision": "abcdef0"}, {"excerpt": "另一段内容"}, {"source_kind": "file"}):
        env = ledger.call("add_evidence", {"finding_id": a, "evidence": dict(EXPERIMENT, **change)})
        assert ok(env)["reused"] is False and ok(env)["evidence_id"] != "E-000001"
        assert "evidence_source_changed" in [w["code"] for w in env["warnings"]]


def test_linking_the_same_evidence_twice_is_a_no_op(ledger):
    fid = log(ledger, evidence=[EXPERIMENT])["finding_id"]
    data = ok(ledger.call("add_evidence", {"finding_id": fid, "evidence": {"evidence_id": "E-000001",
                                                                            "relation": "supports",
                                                                            "method": "experiment"}}))
    assert (data["linked"], data["version"]) == (False, 1)


def test_evidence_needs_an_identity(ledger):
    fid = log(ledger)["finding_id"]
    error = refused(ledger.call("add_evidence", {"finding_id": fid, "evidence": {"relation": "supports",
                                                                                  "method": "experiment"}}),
                    "INVALID_ARGUMENT")
    assert error["field"] == "evidence"
    refused(ledger.call("add_evidence", {"finding_id": fid, "evidence": {"evidence_id": "E-404", "relation": "supports",
                                                                          "method": "experiment"}}), "NOT_FOUND")


# ------------------------------------------------------------------------------ set_finding_state

@pytest.mark.parametrize("target", ["supported", "refuted"])
def test_supported_or_refuted_without_evidence_is_refused(ledger, target):
    fid = log(ledger)["finding_id"]
    refused(ledger.call("set_finding_state", {"finding_id": fid, "epistemic_state": target, "reason": "我认为如此",
                                              "expected_version": 1}), "EVIDENCE_REQUIRED")
    assert version(ledger, fid) == 1


def test_cited_evidence_is_the_basis(ledger):
    fid = log(ledger, evidence=[EXPERIMENT, USER_SAYS])["finding_id"]
    refused(ledger.call("set_finding_state", {"finding_id": fid, "epistemic_state": "supported", "reason": "用户确认",
                                              "evidence_ids": ["E-000002"], "expected_version": 1}),
            "EVIDENCE_REQUIRED")
    data = ok(ledger.call("set_finding_state", {"finding_id": fid, "epistemic_state": "supported",
                                                "reason": "实验确认", "evidence_ids": ["E-000001"],
                                                "expected_version": 1}))
    assert (data["from"], data["to"], data["version"]) == ("unassessed", "supported", 2)


def test_citing_unlinked_evidence_is_not_found(ledger):
    fid = log(ledger)["finding_id"]
    refused(ledger.call("set_finding_state", {"finding_id": fid, "epistemic_state": "provisional", "reason": "r",
                                              "evidence_ids": ["E-000404"], "expected_version": 1}), "NOT_FOUND")


def test_contested_returns_both_sides_evidence(ledger):
    fid = log(ledger, evidence=[EXPERIMENT])["finding_id"]
    ok(ledger.call("add_evidence", {"finding_id": fid, "evidence": COUNTER}))
    data = ok(ledger.call("set_finding_state", {"finding_id": fid, "epistemic_state": "contested",
                                                "reason": "证据冲突", "expected_version": 2}))
    conflict = data["conflict"]
    assert [e["evidence_id"] for e in conflict["supporting"]] == ["E-000001"]
    assert [e["evidence_id"] for e in conflict["contradicting"]] == ["E-000002"]
    assert conflict["contradicting"][0]["excerpt"] == COUNTER["excerpt"]


def test_contested_needs_both_sides(ledger):
    fid = log(ledger, evidence=[EXPERIMENT])["finding_id"]
    refused(ledger.call("set_finding_state", {"finding_id": fid, "epistemic_state": "contested", "reason": "r",
                                              "expected_version": 1}), "EVIDENCE_REQUIRED")


def test_transitions_outside_the_table_are_refused(ledger):
    fid = log(ledger)["finding_id"]
    refused(ledger.call("set_finding_state", {"finding_id": fid, "epistemic_state": "unassessed", "reason": "r",
                                              "expected_version": 1}), "INVALID_STATE_TRANSITION")
    refused(ledger.call("set_finding_state", {"finding_id": fid, "lifecycle_state": "superseded", "reason": "r",
                                              "expected_version": 1}), "INVALID_STATE_TRANSITION")
    refused(ledger.call("set_finding_state", {"finding_id": fid, "epistemic_state": "provisional",
                                              "lifecycle_state": "withdrawn", "reason": "r", "expected_version": 1}),
            "INVALID_ARGUMENT")
    refused(ledger.call("set_finding_state", {"finding_id": fid, "epistemic_state": "sure", "reason": "r",
                                              "expected_version": 1}), "INVALID_ARGUMENT")


def test_lifecycle_moves_and_frozen_history(ledger):
    fid = log(ledger)["finding_id"]
    ok(ledger.call("set_finding_state", {"finding_id": fid, "lifecycle_state": "withdrawn", "reason": "误记",
                                         "expected_version": 1}))
    refused(ledger.call("set_finding_state", {"finding_id": fid, "epistemic_state": "provisional", "reason": "r",
                                              "expected_version": 2}), "INVALID_STATE_TRANSITION")
    ok(ledger.call("set_finding_state", {"finding_id": fid, "lifecycle_state": "archived", "reason": "归档",
                                         "expected_version": 2}))
    refused(ledger.call("set_finding_state", {"finding_id": fid, "lifecycle_state": "active", "reason": "r",
                                              "expected_version": 3}), "INVALID_STATE_TRANSITION")


def test_set_state_to_refuted_with_counter_evidence_suggests_refute_tool(ledger):
    fid = log(ledger, evidence=[COUNTER])["finding_id"]
    env = ledger.call("set_finding_state", {"finding_id": fid, "epistemic_state": "refuted", "reason": "日志反证",
                                            "expected_version": 1})
    assert ok(env)["to"] == "refuted"
    assert "prefer_refute_tool" in [w["code"] for w in env["warnings"]]


# ------------------------------------------------------------------------------ refute_finding

def test_refute_never_deletes_and_never_archives(ledger):
    fid = log(ledger, epistemic_state="supported", evidence=[EXPERIMENT])["finding_id"]
    before = counts(ledger)
    data = ok(ledger.call("refute_finding", {"finding_id": fid, "reason": "温度日志反证", "evidence": [COUNTER],
                                             "expected_version": 1}))
    assert (data["epistemic_state"], data["lifecycle_state"], data["evidence_ids"]) == ("refuted", "active",
                                                                                       ["E-000002"])
    after = counts(ledger)
    assert after["findings"] == before["findings"]
    assert after["finding_events"] == before["finding_events"] + 1
    got = ok(ledger.call("get_finding", {"finding_id": fid}))
    assert got["finding"]["statement"] == finding()["statement"]
    assert [e["kind"] for e in got["events"]] == ["created", "refuted"]


def test_refute_needs_contradicting_evidence(ledger):
    fid = log(ledger)["finding_id"]
    refused(ledger.call("refute_finding", {"finding_id": fid, "reason": "r", "evidence": [],
                                           "expected_version": 1}), "EVIDENCE_REQUIRED")
    error = refused(ledger.call("refute_finding", {"finding_id": fid, "reason": "r", "evidence": [EXPERIMENT],
                                                   "expected_version": 1}), "INVALID_ARGUMENT")
    assert error["field"] == "evidence[0]"


def test_refute_defaults_relation_to_contradicts(ledger):
    fid = log(ledger)["finding_id"]
    counter = {k: v for k, v in COUNTER.items() if k != "relation"}
    ok(ledger.call("refute_finding", {"finding_id": fid, "reason": "r", "evidence": [counter], "expected_version": 1}))


def test_the_database_itself_refuses_deleting_findings_or_rewriting_events(ledger):
    log(ledger)
    for statement in ("DELETE FROM findings", "UPDATE finding_events SET reason = 'x'", "DELETE FROM finding_events",
                      "UPDATE findings SET statement = 'rewritten'"):
        with pytest.raises(database_errors()):
            sql(ledger.store, statement)
    assert sql(ledger.store, "SELECT COUNT(*) FROM findings") == [(1,)]


# ------------------------------------------------------------------------------ supersede_finding

def test_supersede_creates_links_and_closes_in_one_call(ledger):
    old = log(ledger)["finding_id"]
    data = ok(ledger.call("supersede_finding", {
        "finding_id": old, "reason": "温度才是主因", "expected_version": 1,
        "new": finding(statement="温度漂移是该差异的主因", evidence=[COUNTER | {"relation": "supports"}])}))
    assert data["superseded_id"] == old and data["superseded_version"] == 2
    new = ok(ledger.call("get_finding", {"finding_id": data["finding_id"]}))
    assert [(r["direction"], r["relation"], r["finding_id"]) for r in new["relations"]] == [
        ("outgoing", "supersedes", old)]
    old_view = ok(ledger.call("get_finding", {"finding_id": old}))
    assert old_view["finding"]["lifecycle_state"] == "superseded"
    assert old_view["finding"]["epistemic_state"] == "unassessed"
    assert old_view["events"][-1]["payload"] == {"superseded_by": data["finding_id"]}


def test_a_failed_supersede_leaves_nothing(ledger):
    old = log(ledger)["finding_id"]
    before = counts(ledger)
    refused(ledger.call("supersede_finding", {"finding_id": old, "reason": "r", "expected_version": 1,
                                              "new": finding(epistemic_state="supported", evidence=[USER_SAYS])}),
            "EVIDENCE_REQUIRED")
    refused(ledger.call("supersede_finding", {"finding_id": old, "reason": "r", "expected_version": 1,
                                              "new": finding(evidence=[dict(EXPERIMENT, method="guess")])}),
            "INVALID_ARGUMENT")
    assert counts(ledger) == before
    assert ok(ledger.call("get_finding", {"finding_id": old}))["finding"]["lifecycle_state"] == "active"


def test_a_superseded_finding_cannot_be_superseded_again(ledger):
    old = log(ledger)["finding_id"]
    ok(ledger.call("supersede_finding", {"finding_id": old, "reason": "r", "expected_version": 1, "new": finding()}))
    refused(ledger.call("supersede_finding", {"finding_id": old, "reason": "r", "expected_version": 2,
                                              "new": finding()}), "INVALID_STATE_TRANSITION")


# ------------------------------------------------------------------------------ revalidate_finding

@pytest.mark.parametrize("result, evidence, state", [
    ("still_supports", [EXPERIMENT], "supported"),
    ("refuted", [COUNTER], "refuted"),
    ("conflicting", [EXPERIMENT, COUNTER], "contested"),
    ("insufficient", [], "provisional"),
])
def test_revalidation_result_maps_to_a_state(ledger, book, result, evidence, state):
    assert book.table("findings_vocabulary").revalidation_results[result]["to"] == state
    fid = log(ledger)["finding_id"]
    data = ok(ledger.call("revalidate_finding", {"finding_id": fid, "result": result, "reason": "复查", "evidence": evidence,
                                                 "scope_context": {"commit": "1111111"}, "expected_version": 1}))
    assert (data["finding_id"], data["created_new"], data["epistemic_state"]) == (fid, False, state)
    f = ok(ledger.call("get_finding", {"finding_id": fid}))["finding"]
    assert f["epistemic_state"] == state
    assert f["last_validated_at"] == data["last_validated_at"] != "2025-01-01T00:00:00Z"
    assert f["scope"]["context"] == {"commit": "1111111"}


def test_revalidation_still_supports_needs_independent_evidence(ledger):
    fid = log(ledger)["finding_id"]
    refused(ledger.call("revalidate_finding", {"finding_id": fid, "result": "still_supports", "reason": "复查", "evidence": [USER_SAYS],
                                               "expected_version": 1}), "EVIDENCE_REQUIRED")


@pytest.mark.parametrize("change, material", [
    ({"statement": "温度漂移才是该差异的主因"}, "statement_changed"),
    ({"claim_kind": "observation"}, "claim_kind_changed"),
    ({"scope": {"match": {"runtime.backend": "sglang"}, "context": {"commit": "0862527"}}}, "applicability_changed"),
    ({"scope": {"match": {"runtime.backend": "vLLM", "gpu": "A100"}}}, "applicability_changed"),
])
def test_a_material_change_creates_a_new_linked_finding(ledger, change, material):
    fid = log(ledger)["finding_id"]
    data = ok(ledger.call("revalidate_finding", {"finding_id": fid, "result": "insufficient", "reason": "复查", "expected_version": 1,
                                                 **change}))
    assert data["created_new"] is True and data["material_change"]["code"] == material
    assert data["finding_id"] != fid and data["revalidated_id"] == fid
    new = ok(ledger.call("get_finding", {"finding_id": data["finding_id"]}))
    assert [(r["relation"], r["finding_id"]) for r in new["relations"]] == [("revalidated_as", fid)]
    old = ok(ledger.call("get_finding", {"finding_id": fid}))["finding"]
    replaced = ledger.book.table("findings_vocabulary").acts_on["revalidation_replaced_state"]
    assert (old["statement"], old["lifecycle_state"], old["version"]) == (finding()["statement"], replaced, 2)


@pytest.mark.parametrize("change", [
    {"statement": "  当前探针结果不支持   off-by-one 是该差异的主因 "},
    {"scope_context": {"commit": "2222222", "runtime": {"backend": "vLLM"}}},
    {"scope": {"match": {"runtime.backend": "vLLM"}, "context": {"commit": "3333333"}, "revalidate_on": []}},
])
def test_whitespace_or_context_changes_are_not_material(ledger, change):
    fid = log(ledger)["finding_id"]
    data = ok(ledger.call("revalidate_finding", {"finding_id": fid, "result": "insufficient", "reason": "复查", "expected_version": 1,
                                                 **change}))
    assert (data["created_new"], data["material_change"]["code"], data["finding_id"]) == (False, "same_claim", fid)


def test_revalidation_result_must_be_known(ledger):
    fid = log(ledger)["finding_id"]
    refused(ledger.call("revalidate_finding", {"finding_id": fid, "result": "fine", "reason": "复查", "expected_version": 1}),
            "INVALID_ARGUMENT")


# ------------------------------------------------------------------------------ link_finding

def test_acyclic_relations_refuse_cycles(ledger):
    a, b, c = (log(ledger, statement=f"发现 {n}")["finding_id"] for n in "abc")
    ok(ledger.call("link_finding", {"finding_id": a, "relation": "depends_on", "target": {"finding_id": b}}))
    ok(ledger.call("link_finding", {"finding_id": b, "relation": "depends_on", "target": {"finding_id": c}}))
    before = counts(ledger)
    refused(ledger.call("link_finding", {"finding_id": c, "relation": "depends_on", "target": {"finding_id": a}}),
            "RELATION_CYCLE")
    refused(ledger.call("link_finding", {"finding_id": a, "relation": "refines", "target": {"finding_id": a}}),
            "RELATION_CYCLE")
    assert counts(ledger) == before
    # another kind is another graph
    ok(ledger.call("link_finding", {"finding_id": c, "relation": "derived_from", "target": {"finding_id": a}}))


def test_contradicts_links_are_symmetric_and_never_refute(ledger):
    a = log(ledger, epistemic_state="supported", evidence=[EXPERIMENT])["finding_id"]
    b = log(ledger, statement="off-by-one 是主因")["finding_id"]
    ok(ledger.call("link_finding", {"finding_id": b, "relation": "contradicts", "target": {"finding_id": a}}))
    ok(ledger.call("link_finding", {"finding_id": a, "relation": "contradicts", "target": {"finding_id": b}}))
    assert ok(ledger.call("get_finding", {"finding_id": a}))["finding"]["epistemic_state"] == "supported"
    assert ok(ledger.call("get_finding", {"finding_id": b}))["finding"]["epistemic_state"] == "unassessed"


def test_relations_come_from_the_table(ledger):
    a, b = log(ledger)["finding_id"], log(ledger, statement="b")["finding_id"]
    refused(ledger.call("link_finding", {"finding_id": a, "relation": "supersedes", "target": {"finding_id": b}}),
            "INVALID_ARGUMENT")
    refused(ledger.call("link_finding", {"finding_id": a, "relation": "likes", "target": {"finding_id": b}}),
            "INVALID_ARGUMENT")
    refused(ledger.call("link_finding", {"finding_id": a, "relation": "documented_in",
                                         "target": {"rule_source": "AGENTS.md#debugging"}}), "INVALID_ARGUMENT")
    data = ok(ledger.call("link_finding", {"finding_id": a, "relation": "derived_from_rule",
                                           "target": {"rule_source": "AGENTS.md#debugging"}}))
    assert data["target"] == {"kind": "rule_source", "ref": "AGENTS.md#debugging"} and data["created"] is True
    refused(ledger.call("link_finding", {"finding_id": a, "relation": "related_to",
                                         "target": {"finding_id": b, "document": "x.md"}}), "INVALID_ARGUMENT")


# ------------------------------------------------------------------------------ propose_rule

def test_propose_rule_only_creates_a_proposal(ledger, tmp_path):
    fid = log(ledger)["finding_id"]
    env = ledger.call("propose_rule", {"finding_id": fid, "rule_text": "- 排查差异前先记录 GPU 温度",
                                       "target_path": "AGENTS.md", "rationale": "两次误判都因温度漂移"})
    assert ok(env) == {"proposal_id": "RP-000001", "finding_id": fid, "status": "proposed", "version": 1}
    assert [w["code"] for w in env["warnings"]] == ["proposal_needs_approval"]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("ledger.db")) == []
    proposals = ok(ledger.call("get_finding", {"finding_id": fid}))["rule_proposals"]
    assert [(p["proposal_id"], p["status"]) for p in proposals] == [("RP-000001", "proposed")]


@pytest.mark.parametrize("path", ["../AGENTS.md", "/etc/passwd", "docs/../../x.md", "C:/x.md", "a\\b.md", "."])
def test_propose_rule_refuses_paths_outside_the_project(ledger, path):
    fid = log(ledger)["finding_id"]
    error = refused(ledger.call("propose_rule", {"finding_id": fid, "rule_text": "r", "target_path": path,
                                                 "rationale": "r"}), "INVALID_ARGUMENT")
    assert len(path) < 3 or path not in error["message"]


# ------------------------------------------------------------------------------ found in review

def test_the_same_evidence_twice_in_one_call_is_stored_once(ledger):
    before = counts(ledger)
    data = log(ledger, evidence=[EXPERIMENT, dict(EXPERIMENT, relation="context")])
    assert data["evidence_ids"] == ["E-000001"] and data["evidence_count"] == 1
    after = counts(ledger)
    assert (after["evidence"], after["finding_evidence"]) == (before["evidence"] + 1, before["finding_evidence"] + 2)


@pytest.mark.parametrize("method", ["user_statement", "model_inference"])
def test_provisional_is_not_promoted_to_supported_on_words(ledger, method):
    fid = log(ledger, epistemic_state="provisional", evidence=[dict(USER_SAYS, method=method)])["finding_id"]
    refused(ledger.call("set_finding_state", {"finding_id": fid, "epistemic_state": "supported",
                                              "reason": "用户和模型都确信如此", "expected_version": 1}),
            "EVIDENCE_REQUIRED")
    refused(ledger.call("revalidate_finding", {"finding_id": fid, "result": "still_supports", "reason": "复查", "expected_version": 1,
                                               "reason": "再次确认"}), "EVIDENCE_REQUIRED")
    assert ok(ledger.call("get_finding", {"finding_id": fid}))["finding"]["epistemic_state"] == "provisional"


@pytest.mark.parametrize("change", [{}, {"statement": "一个新的主张"}])
def test_history_cannot_be_revalidated(ledger, change):
    """A superseded record is history: re-confirming it (same state) or deriving a new claim from it
    would make it look current again, so both are refused and nothing is written."""
    fid = log(ledger, epistemic_state="provisional")["finding_id"]
    ok(ledger.call("supersede_finding", {"finding_id": fid, "reason": "r", "expected_version": 1, "new": finding()}))
    before = counts(ledger)
    refused(ledger.call("revalidate_finding", {"finding_id": fid, "result": "insufficient", "reason": "复查", "expected_version": 2,
                                               "scope_context": {"commit": "1111111"}, **change}),
            "INVALID_STATE_TRANSITION")
    assert counts(ledger) == before
    assert ok(ledger.call("get_finding", {"finding_id": fid}))["finding"]["last_validated_at"] is None


def test_a_conflicting_revalidation_returns_both_sides(ledger):
    fid = log(ledger, evidence=[EXPERIMENT])["finding_id"]
    data = ok(ledger.call("revalidate_finding", {"finding_id": fid, "result": "conflicting", "reason": "复查", "evidence": [COUNTER],
                                                 "expected_version": 1}))
    assert data["epistemic_state"] == "contested"
    assert [e["evidence_id"] for e in data["conflict"]["supporting"]] == ["E-000001"]
    assert [e["evidence_id"] for e in data["conflict"]["contradicting"]] == ["E-000002"]


def test_a_refused_refute_leaves_its_evidence_unwritten(ledger):
    fid = log(ledger)["finding_id"]
    ok(ledger.call("set_finding_state", {"finding_id": fid, "lifecycle_state": "withdrawn", "reason": "误记",
                                         "expected_version": 1}))
    before = counts(ledger)
    refused(ledger.call("refute_finding", {"finding_id": fid, "reason": "r", "evidence": [COUNTER],
                                           "expected_version": 2}), "INVALID_STATE_TRANSITION")
    assert counts(ledger) == before
