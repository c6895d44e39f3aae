"""The MCP server, driven by the `mcp` client: in-process, and over real stdio in a subprocess."""
from __future__ import annotations

import os
import shutil
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters

from findings_support import CODES, EXPERIMENT, ROOT, TABLES, finding
from groundrules import Caller, FindingLedger, Service, load_rulebook
from groundrules.transports.mcp_tools import ToolServer

SEED_TOOLS = ["log_finding", "query_findings", "get_finding", "add_evidence", "set_finding_state", "refute_finding",
              "supersede_finding", "revalidate_finding", "link_finding", "propose_rule"]


@pytest.fixture(scope="module")
def mcp_book():
    return load_rulebook(ROOT, TABLES + [ROOT / "rules" / "support_reason.yaml"])


@pytest.fixture
def server(mcp_book, db):
    from groundrules.findings import SequentialIds, StepClock
    ledger = FindingLedger(db, rulebook=mcp_book, clock=StepClock(), ids=SequentialIds())
    yield ToolServer(Service(mcp_book, findings=ledger), lambda: Caller("agent-1", "agent", ("p1",)))
    ledger.close()


def run(coro_fn, *args):
    return anyio.run(coro_fn, *args)


def test_lists_the_seed_tools_with_input_and_output_schemas(server):
    async def go():
        async with Client(server, raise_exceptions=True) as client:
            return (await client.list_tools()).tools
    tools = {t.name: t for t in run(go)}
    assert set(SEED_TOOLS) | {"explain_support", "lock_message", "fold_evidence", "verify_extraction"} <= set(tools)
    assert not {"approve_rule", "reject_rule"} & set(tools)     # only a reviewer decides a proposal (seed §6)
    for name in SEED_TOOLS:
        t = tools[name]
        assert t.input_schema["type"] == "object" and t.description
        assert t.output_schema["required"] == ["ok", "data", "warnings", "error", "rulebook"]
    assert tools["log_finding"].input_schema["required"] == ["claim_kind", "statement"]
    scope = tools["log_finding"].input_schema["properties"]["scope"]     # written out: no top-level $ref
    assert scope["type"] == "object" and "revalidate_on" in scope["properties"]


def test_calls_return_the_envelope_and_refusals_are_errors_carrying_it(server):
    async def go():
        async with Client(server, raise_exceptions=True) as client:
            created = await client.call_tool("log_finding", finding(evidence=[EXPERIMENT]))
            fid = created.structured_content["data"]["finding_id"]
            got = await client.call_tool("get_finding", {"finding_id": fid})
            refusals = [await client.call_tool("set_finding_state", {"finding_id": fid, "epistemic_state": "refuted",
                                                                     "reason": "r", "expected_version": 1}),
                        await client.call_tool("get_finding", {"finding_idd": fid}),
                        await client.call_tool("get_finding", {"finding_id": "F-999999"}),
                        await client.call_tool("query_findings", {"limit": "many"})]
            return created, got, refusals
    created, got, refusals = run(go)
    assert created.is_error is False and created.structured_content["ok"] is True
    assert got.structured_content["data"]["finding"]["statement"] == finding()["statement"]
    assert [r.is_error for r in refusals] == [True] * 4
    assert [r.structured_content["error"]["code"] for r in refusals] == [
        "EVIDENCE_REQUIRED", "INVALID_ARGUMENT", "NOT_FOUND", "INVALID_ARGUMENT"]
    assert all(r.structured_content["ok"] is False and r.structured_content["error"]["code"] in CODES
               for r in refusals)


def test_explain_support_is_served_too(server):
    context = {"query": "2024 重庆 申论 题量", "support_status": "insufficient", "stage": "no_candidates",
               "required_slots": [], "metrics": {"candidate_count": 0, "readable_count": 0, "evidence_count": 0},
               "missing": [], "evidence": [], "engines": [], "conflict_status": "none", "conflicts": [],
               "incomparable": [], "provenance": {}, "answer_policy": {}}

    async def go():
        async with Client(server, raise_exceptions=True) as client:
            return (await client.call_tool("explain_support", {"context": context}),
                    await client.call_tool("explain_support", {"ctx": context}))
    answer, refusal = run(go)
    assert answer.structured_content["data"]["primary"] == "no_candidates"
    assert refusal.is_error and refusal.structured_content["error"]["code"] == "INVALID_ARGUMENT"


@pytest.fixture
def rules_root(tmp_path):
    """A rules folder holding only the tables the server needs, so other parts' work cannot break it."""
    root = tmp_path / "rules-root"
    (root / "rules").mkdir(parents=True)
    for table in TABLES + [ROOT / "rules" / "support_reason.yaml"]:
        shutil.copy(table, root / "rules" / table.name)
    (root / "schemas").symlink_to(ROOT / "schemas")
    return root


@pytest.mark.extended
def test_serves_over_real_stdio(rules_root, db):
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "groundrules.cli.main", "--rules", str(rules_root), "serve", "--db", str(db), "--project", "p1"],
        env=dict(os.environ))   # the SDK passes only a few variables on; the server under test is ours

    async def go():
        with anyio.fail_after(60):
            async with Client(params) as client:
                return await talk(client)

    async def talk(client):
        names = [t.name for t in (await client.list_tools()).tools]
        created = await client.call_tool("log_finding", finding(statement="温度漂移导致误差"))
        fid = created.structured_content["data"]["finding_id"]
        found = await client.call_tool("query_findings", {"keyword": "漂移"})
        other = await client.call_tool("get_finding", {"finding_id": fid, "project": "p2"})
        return names, fid, found, other
    names, fid, found, other = run(go)
    assert set(SEED_TOOLS) <= set(names)
    assert [f["finding_id"] for f in found.structured_content["data"]["findings"]] == [fid]
    assert other.is_error and other.structured_content["error"]["code"] == "PROJECT_SCOPE_MISMATCH"


@pytest.mark.parametrize("args", [
    {}, {"finding_idd": "F-000001"}, {"finding_id": "F-000001", "model_fields": 1},
    {"finding_id": "F-000001", "model_config": {"extra": "allow"}}, {"finding_id": "F-000001", "arguments": {}},
])
def test_arguments_the_sdk_would_reject_or_drop_still_answer_the_envelope(server, args):
    """Missing, misspelt, or named like pydantic's own attributes: the ledger sees the arguments as
    sent and refuses them with INVALID_ARGUMENT inside the envelope, never a bare SDK text."""
    async def go():
        async with Client(server, raise_exceptions=True) as client:
            await client.call_tool("log_finding", finding())
            return await client.call_tool("get_finding", args)
    result = run(go)
    assert result.is_error and result.structured_content["error"]["code"] == "INVALID_ARGUMENT"
