"""Hostile arguments (seed 001 §4): paths in ids and keys, huge and malformed values, other
projects' ids. Every answer is an envelope with one of the eight codes, and no refusal message or
field ever carries a filesystem path, an excerpt, or another project's data — through the library
and through the MCP server alike."""
from __future__ import annotations

import json
from pathlib import Path

import anyio
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from budget import examples
from mcp import Client

from findings_support import CODES, EXPERIMENT, finding, ok, refused
from groundrules.transports.mcp_tools import ToolServer

SECRET = "机密摘录：用户密码是 hunter2"
PATHS = ["/etc/passwd", "/home/alice/.ssh/id_rsa", "C:\\Users\\alice\\ledger.db", "../../../../etc/shadow",
         "~/.aws/credentials"]
TOOLS = ["log_finding", "query_findings", "get_finding", "add_evidence", "set_finding_state", "refute_finding",
         "supersede_finding", "revalidate_finding", "link_finding", "propose_rule"]
ARGUMENT_NAMES = ["finding_id", "statement", "claim_kind", "evidence", "epistemic_state", "lifecycle_state",
                  "expected_version", "reason", "relation", "target", "result", "keyword", "limit", "scope", "tags",
                  "project", "new", "scope_context", "idempotency_key", "rule_text", "target_path", "rationale",
                  "evidence_ids", "events_limit"]


@pytest.fixture
def world(make_ledger, db):
    """Our ledger (p1) with one finding, and another project's finding with a secret excerpt in
    the same file."""
    other = make_ledger("alpha")
    theirs = ok(other.call("log_finding", finding(statement="alpha 的内部结论", tags=["alpha-only"],
                                                  evidence=[dict(EXPERIMENT, source_ref="run:alpha", excerpt=SECRET)])))
    mine = make_ledger("p1")
    fid = ok(mine.call("log_finding", finding(evidence=[dict(EXPERIMENT, excerpt=SECRET)])))["finding_id"]
    return mine, fid, theirs, db


def forbidden(db) -> list[str]:
    return [SECRET, "hunter2", "alpha", str(db), *([str(db.parent)] if isinstance(db, Path) else []), *PATHS]


def assert_clean(envelope: dict, db) -> None:
    """One of the eight codes, and nothing that must not leak anywhere in the error."""
    assert list(envelope) == ["ok", "data", "warnings", "error", "rulebook"]
    if envelope["ok"]:
        return
    assert envelope["error"]["code"] in CODES
    text = json.dumps(envelope["error"], ensure_ascii=False)
    for needle in forbidden(db):
        assert needle not in text, (needle, envelope["error"])


hostile_text = st.one_of(st.sampled_from(PATHS + [SECRET, "F-" + "9" * 64, "F-../../x", "\x00", "‮", "'; DROP TABLE findings;--"]),
                         st.text(max_size=30), st.just("漂" * 30_000))
hostile_value = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | hostile_text,
                             lambda kids: st.lists(kids, max_size=3)
                             | st.dictionaries(st.one_of(st.sampled_from(ARGUMENT_NAMES + PATHS + [SECRET]), hostile_text),
                                               kids, max_size=3),
                             max_leaves=10)


@settings(max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tool=st.sampled_from(TOOLS), args=st.dictionaries(st.sampled_from(ARGUMENT_NAMES + PATHS), hostile_value,
                                                         max_size=5))
def test_fuzzed_arguments_never_leak(world, tool, args):
    mine, _, _, db = world
    assert_clean(mine.call(tool, args), db)


@pytest.mark.parametrize("tool, args", [
    ("get_finding", {"finding_id": "/etc/passwd"}),
    ("get_finding", {"finding_id": "MINE", "/home/alice/.ssh/id_rsa": 1}),
    ("query_findings", {"scope_context": {"/etc/passwd": [SECRET]}}),
    ("log_finding", finding(scope={"match": {"C:\\Users\\alice\\ledger.db": {"x": SECRET}}})),
    ("log_finding", finding(evidence=[dict(EXPERIMENT, **{"/etc/passwd": SECRET})])),
    ("query_findings", {"scope_context": {"a./etc/shadow": 1, "a": {"/etc/shadow": 2}}}),
    ("propose_rule", {"finding_id": "MINE", "rule_text": SECRET, "target_path": "/etc/passwd", "rationale": SECRET}),
    ("add_evidence", {"finding_id": "MINE", "evidence": dict(EXPERIMENT, excerpt=SECRET * 5000)}),
])
def test_paths_and_excerpts_given_as_ids_or_keys_are_not_echoed(world, tool, args):
    mine, fid, _, db = world
    env = mine.call(tool, dict(args, finding_id=fid) if args.get("finding_id") == "MINE" else args)
    refused(env, "INVALID_ARGUMENT")
    assert_clean(env, db)


def test_other_projects_ids_reveal_nothing(world):
    mine, fid, theirs, db = world
    their_id, their_evidence = theirs["finding_id"], theirs["evidence_ids"][0]
    calls = [(t, dict(a, finding_id=their_id)) for t, a in (
        ("get_finding", {}), ("set_finding_state", {"epistemic_state": "provisional", "reason": "r", "expected_version": 1}),
        ("revalidate_finding", {"result": "insufficient", "reason": "复查", "expected_version": 1}),
        ("propose_rule", {"rule_text": "r", "target_path": "a.md", "rationale": "r"}))]
    calls += [("link_finding", {"finding_id": fid, "relation": "related_to", "target": {"finding_id": their_id}}),
              ("set_finding_state", {"finding_id": fid, "epistemic_state": "supported", "reason": "r",
                                     "evidence_ids": [their_evidence], "expected_version": 1}),
              ("add_evidence", {"finding_id": fid, "evidence": {"evidence_id": their_evidence, "relation": "supports",
                                                                 "method": "experiment"}})]
    for tool, args in calls:
        env = mine.call(tool, args)
        # another project's record is as unknown as one that never existed: no answer tells them apart
        assert env["error"]["code"] == "NOT_FOUND", (tool, env["error"])
        assert_clean(env, db)


@pytest.mark.parametrize("value, field", [
    (float("nan"), "scope.context.x"), (float("inf"), "scope.match.x"), ("a\ud800b", "statement"),
])
def test_values_canonical_json_cannot_hold_are_invalid_arguments(ledger, db, value, field):
    args = finding(statement=value) if field == "statement" else finding(
        scope={field.split(".")[1]: {"x": value}})
    error = refused(ledger.call("log_finding", args), "INVALID_ARGUMENT")
    assert error["field"] == field


def test_deep_nesting_is_an_invalid_argument_not_a_crash(ledger):
    deep: dict = {}
    node = deep
    for _ in range(10_000):
        node["a"] = {}
        node = node["a"]
    refused(ledger.call("query_findings", {"scope_context": deep}), "INVALID_ARGUMENT")
    refused(ledger.call("log_finding", finding(details=None, scope=deep)), "INVALID_ARGUMENT")


def test_huge_scope_values_are_refused_before_they_are_stored(ledger):
    error = refused(ledger.call("log_finding", finding(scope={"context": {"commit": "x" * 5_000_000}})),
                    "INVALID_ARGUMENT")
    assert error["field"] == "scope.context.commit"
    refused(ledger.call("query_findings", {"scope_context": {"runtime": {"backend": "v" * 100_000}}}),
            "INVALID_ARGUMENT")


# ------------------------------------------------------------------------------ through MCP

@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(st.tuples(st.sampled_from(TOOLS),
                                st.dictionaries(st.sampled_from(ARGUMENT_NAMES + PATHS + ["model_config", "model_fields"]),
                                                hostile_value.filter(lambda v: v == v), max_size=4)),
                      min_size=1, max_size=4))
def test_fuzzed_mcp_calls_answer_a_valid_envelope(world, calls):
    """Whatever arrives, the result carries the envelope (isError iff refused), it validates against
    the tool's published output schema, and its error leaks nothing."""
    mine, _, _, db = world
    server = ToolServer(mine.service, lambda: mine.caller)

    async def go():
        async with Client(server, raise_exceptions=True) as client:
            return [(tool, await client.call_tool(tool, args)) for tool, args in calls]
    for tool, result in anyio.run(go):
        envelope = result.structured_content
        assert envelope is not None and result.is_error is (not envelope["ok"])
        listing = mine.service.listing(tool)
        jsonschema.validate(envelope, listing.output_schema)         # what an MCP client checks
        jsonschema.validate(envelope, listing.output_contract)       # and the data's whole contract
        assert_clean(envelope, db)
