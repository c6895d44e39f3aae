"""What the MCP server declares and how it answers what it does not serve (issue 21), in-process.

It declares only tools and the guides it serves as resources (no prompts or subscriptions), names
the package version, lists each tool's annotations as its schema file declares them, answers an
unknown tool with the protocol error the spec lists (-32602) carrying the registry's refusal, and
serves a subset when told (`tools=`, `--tools`). What a host hands its model (names, descriptions,
input schemas) and the whole tools/list stay within the budgets docs/mcp-protocol.md states.
"""
from __future__ import annotations

import json
from importlib.metadata import version

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from groundrules import Caller, FindingLedger, Service
from groundrules.core import canonical
from groundrules.api import TOOLS
from groundrules.cli.main import main
from groundrules.core.errors import GroundrulesError
from groundrules.findings import SequentialIds, StepClock
from groundrules.transports.dispatch import Dispatcher
from groundrules.transports.mcp_tools import ToolServer, select_tools
from groundrules.transports.settings import ServerSettings
from said import said, worded_in

REVIEWER = Caller("user:alice", "reviewer", ("p1",))
# The budgets (bytes of compact UTF-8 JSON), stated in docs/mcp-protocol.md "Listing size". Measured
# when set: 36.2 KB for what a reviewer's model sees of 21 tools (the largest tool 4.7 KB), and
# 118.7 KB for the whole tools/list with output schemas; with read_decisions (22 tools) 37.7 KB and
# 128.6 KB, which raised the tools/list budget from 128,000; with the evidence contract's scope and
# lock shapes (issue 22) 141.3 KB, which raised it to 150,000; with the writer every record, link and
# event names and each fold entry's provenance verdict (issue 30) 155.5 KB, which raised it to
# 160,000; the model-facing budget went to 41,000 with the redaction's erased answer (issue 35:
# 40.2 KB). With the listing made the contract (issue 32, item 1: enums from the tables, every
# argument typed and written out, the whole knowledge-gateway context inline for explain_support)
# 41.7 KB model-facing, which raised it to 43,000; with draft_candidate and draft_interpretation
# (item 4, 24 tools) 45.6 KB, which raised it to 47,000, and the tools/list to 175,000. The compact
# listing (`serve --listing compact`) of an agent's 20 tools: 25.6 KB, against 27,000 (the issue's
# 20 KB target for the default listing is not met: see docs/mcp-protocol.md). With every inner shape
# typed (issue 32, item 1's remainder: records with the seed shapes read backwards, interpretations,
# the verify request and candidate, event types and slots as enums), nested descriptions left to the guides and shared shapes
# written once: 71,304 bytes for a reviewer's 24 tools, the largest fold_evidence's 14,539 (its
# records alone 9 shapes), an agent's 20 tools 67,168 (compact 55,051), 196,073 for the whole
# tools/list: the budgets below. The 20 KB for an agent's default listing is not reachable
# with those shapes inline (docs/mcp-protocol.md "Listing size"). So a session lists toolsets
# (rules/toolsets.yaml, issue 32): an agent's starts with 10 tools, list_toolsets and enable_toolset
# among them, 17,315 bytes, against the 20,000 (AGENT_BUDGET); the full listings
# (`--toolsets all`, or a connection with no session) grew by the two tools and read_decisions' longer
# tool enum: 72,274 for a reviewer's 26, 68,105 for an agent's 22, and 200,769 for the whole tools/list. A tool description or input
# schema that grows past them is a reviewed change of the budget, not a drift.
MODEL_FACING_BUDGET = 73_000
AGENT_BUDGET = 20_000
AGENT_ALL_BUDGET = 69_000
COMPACT_AGENT_BUDGET = 56_000
ONE_TOOL_BUDGET = 15_000
TOOLS_LIST_BUDGET = 203_000


@pytest.fixture
def service(rulebook, tmp_path):
    ledger = FindingLedger(tmp_path / "l.db", rulebook=rulebook, clock=StepClock(), ids=SequentialIds())
    yield Service(rulebook, findings=ledger)
    ledger.close()


def session(server, body, mode="auto"):
    async def go():
        async with Client(server, raise_exceptions=True, mode=mode) as client:
            return await body(client)
    return anyio.run(go)


def test_it_declares_only_tools_and_its_guides_and_names_the_package_version(service):
    async def body(client):
        return client.server_info, client.server_capabilities
    info, capabilities = session(ToolServer(service, lambda: REVIEWER), body)
    assert info.name == "groundrules" and info.version == version("groundrules") != ""
    declared = {k for k, v in capabilities.model_dump(exclude_none=True).items() if v}
    assert declared == {"tools", "resources"}
    assert capabilities.resources.subscribe is False


def test_a_resource_it_does_not_have_is_the_specs_not_found(service):
    async def body(client):
        with pytest.raises(MCPError) as caught:
            await client.read_resource("file:///etc/passwd")
        return caught.value.error
    error = session(ToolServer(service, lambda: REVIEWER), body)
    assert error.code == -32002 and "passwd" in error.message


@pytest.mark.parametrize("call", [lambda c: c.get_prompt("anything"), lambda c: c.list_prompts()])
def test_what_it_does_not_serve_is_method_not_found(service, call):
    async def body(client):
        with pytest.raises(MCPError) as caught:
            await call(client)
        return caught.value.error.code
    assert session(ToolServer(service, lambda: REVIEWER), body) == -32601


def test_an_unknown_tool_is_the_protocol_error_with_the_registrys_refusal(service):
    async def body(client):
        with pytest.raises(MCPError) as caught:
            await client.call_tool("log_findings", {})
        return caught.value.error
    error = session(ToolServer(service, lambda: REVIEWER), body)
    library = service.call("log_findings", {}, REVIEWER)
    assert error.code == -32602
    assert error.message == library["error"]["message"]
    assert canonical.dumps(error.data) == canonical.dumps(library)
    assert library["error"]["code"] == "UNKNOWN_TOOL" and "'log_finding'" in library["error"]["hint"]


def test_each_listed_tool_carries_the_annotations_of_its_schema_file(service, rulebook):
    async def body(client):
        return (await client.list_tools()).tools
    tools = session(ToolServer(service, lambda: REVIEWER), body)
    assert {t.name for t in tools} == set(TOOLS)
    for tool in tools:
        declared = rulebook.schemas.get(f"tools/{tool.name}.schema.json")["annotations"]
        assert tool.annotations.model_dump(by_alias=True, exclude_none=True) == declared


def test_a_subset_is_served_and_the_rest_is_unknown(service):
    served = select_tools(service, ["findings"])
    assert served == {n for n, t in TOOLS.items() if t.ledger == "findings"}

    async def body(client):
        names = {t.name for t in (await client.list_tools()).tools}
        listed = await client.call_tool("query_findings", {})
        with pytest.raises(MCPError) as caught:
            await client.call_tool("lock_message", {"message": {"id": "m", "role": "user", "content": "x"}})
        return names, listed, caught.value.error
    names, listed, error = session(ToolServer(service, lambda: REVIEWER, tools=served), body)
    assert names == served
    assert listed.structured_content["ok"] is True
    assert error.code == -32602 and "lock_message" not in error.data["error"]["message"].split("：", 1)[1]


def test_tool_names_groups_and_roles_select_tools(service):
    roles = service.roles
    assert select_tools(service, ["agent"]) == {n for n in TOOLS if roles.may_call("agent", n)}
    assert select_tools(service, ["stateless"]) == {n for n, t in TOOLS.items() if not t.ledger}
    assert select_tools(service, ["evidence", "get_finding"]) == {n for n, t in TOOLS.items()
                                                                  if t.ledger == "evidence"} | {"get_finding"}
    with pytest.raises(GroundrulesError) as caught:
        select_tools(service, ["evidense"])
    assert caught.value.code == "USAGE" and worded_in(caught.value, "en").message == said(
        "usage.tools_unknown_close", "en", name="evidense", closest="evidence")


def _size(value) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def test_what_a_model_sees_of_the_tools_stays_within_its_budget(service):
    async def body(client):
        return (await client.list_tools()).tools
    tools = session(ToolServer(service, lambda: REVIEWER, toolsets=["all"]), body, mode="legacy")
    assert {t.name for t in tools} == {n for n in TOOLS if service.roles.may_call("reviewer", n)}
    facing = {t.name: _size({"name": t.name, "description": t.description, "inputSchema": t.input_schema})
              for t in tools}
    assert sum(facing.values()) <= MODEL_FACING_BUDGET, facing
    assert max(facing.values()) <= ONE_TOOL_BUDGET, facing
    listing = _size({"tools": [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]})
    assert listing <= TOOLS_LIST_BUDGET


def test_a_compact_listing_is_the_same_contract_in_fewer_bytes(service):
    """`--listing compact`: no description inside an input schema, each tool's first sentence; the
    schemas' constraints are those of the full listing, which the registry enforces."""
    def strip(node):
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if not (k == "description" and isinstance(v, str))}
        return [strip(v) for v in node] if isinstance(node, list) else node

    async def body(client):
        return (await client.list_tools()).tools
    agent = Caller("a", "agent", ("p",))
    compact = session(ToolServer(service, lambda: agent, dispatcher=Dispatcher(service, ServerSettings(
        listing="compact"))), body)
    full = {t.name: t for t in session(ToolServer(service, lambda: agent), body)}
    assert sum(_size({"name": t.name, "description": t.description, "inputSchema": t.input_schema})
               for t in full.values()) <= AGENT_ALL_BUDGET
    assert [t.name for t in compact] == list(full)
    for tool in compact:
        assert tool.input_schema == strip(full[tool.name].input_schema)
        assert full[tool.name].description.startswith(tool.description.rstrip("."))
    facing = sum(_size({"name": t.name, "description": t.description, "inputSchema": t.input_schema})
                 for t in compact)
    assert facing <= COMPACT_AGENT_BUDGET


def test_an_agents_session_starts_with_its_default_toolsets_within_the_budget(service):
    """What an agent's model reads in a session before it enables anything: the toolsets its role
    starts with (rules/toolsets.yaml), read from the table, within AGENT_BUDGET."""
    async def body(client):
        return (await client.list_tools()).tools
    agent = Caller("a", "agent", ("p",))
    tools = session(ToolServer(service, lambda: agent), body, mode="legacy")
    table = service.toolsets
    starting = table.starting("agent")
    assert [t.name for t in tools] == [n for n in TOOLS if service.roles.may_call("agent", n)
                                       and table.of_tool(n).name in starting]
    assert {"list_toolsets", "enable_toolset"} <= {t.name for t in tools}
    assert sum(_size({"name": t.name, "description": t.description, "inputSchema": t.input_schema})
               for t in tools) <= AGENT_BUDGET


def test_serve_refuses_a_tools_name_it_does_not_know(tmp_path, capsys):
    code = main(["serve", "--db", str(tmp_path / "l.db"), "--tools", "findings,evidense"])
    assert code == 1
    assert said("usage.tools_unknown_close", name="evidense", closest="evidence") in capsys.readouterr().err
