"""Toolsets (rules/toolsets.yaml, issue 32): what an MCP session lists, and how a model adds to it.

A session lists its role's default toolsets and the always-listed list_toolsets / enable_toolset; a
tool the role may call in a toolset the session has not enabled is refused with TOOLSET_NOT_ENABLED
naming the toolset; enable_toolset adds it and sends notifications/tools/list_changed. The library
(no session) answers every tool the role may call. Every set here is read from the tables.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

from groundrules import Caller, FindingLedger, RulesError, Service, load_rulebook
from groundrules.api import TOOLS
from groundrules.cli.main import main
from groundrules.findings import SequentialIds, StepClock
from groundrules.transports.mcp_tools import ToolServer
from table_edits import TableFile
from said import said

AGENT = Caller("agent-1", "agent", ("p1",))
FOLD = {"now": "2030-01-02T00:00:00Z", "records": [], "interpretations": []}


@pytest.fixture
def service(rulebook, tmp_path):
    ledger = FindingLedger(tmp_path / "l.db", rulebook=rulebook, clock=StepClock(), ids=SequentialIds())
    yield Service(rulebook, findings=ledger)
    ledger.close()


def not_listed_for(service: Service, role: str) -> str:
    """A tool `role` may call that its session does not list from the start (the table's first)."""
    table = service.toolsets
    return next(n for n in TOOLS if service.roles.may_call(role, n)
                and table.of_tool(n).name not in table.starting(role))


def test_every_tool_of_the_registry_is_in_exactly_one_toolset(rulebook):
    table = rulebook.table("toolsets")
    held = [tool for toolset in table.toolsets.values() for tool in toolset.tools]
    assert sorted(held) == sorted(TOOLS)


def _load_problems(root: Path) -> dict:
    """The first problem of each code, by line."""
    with pytest.raises(RulesError) as caught:
        load_rulebook(root, cache=False)
    found: dict = {}
    for problem in sorted(caught.value.problems, key=lambda p: p.line):
        found.setdefault(problem.code, problem)
    return found


def test_a_tool_in_two_toolsets_in_none_or_unknown_fails_the_load_naming_it(tables_copy):
    root = tables_copy
    table = TableFile(root / "rules" / "toolsets.yaml")
    at = ("toolsets", "decision_log", "tools", 0)
    left_out = table.at(*at)
    table.replace_value(at, "list_toolsets")
    problems = _load_problems(root)
    twice, missing = problems["tool-in-two-toolsets"], problems["tool-in-no-toolset"]
    assert (twice.file, twice.line, twice.key) == ("rules/toolsets.yaml", table.source.where(at)[0],
                                                   "toolsets.decision_log.tools[0]")
    assert "list_toolsets" in twice.message and "remove it" in twice.hint
    assert left_out in missing.message and left_out in missing.hint
    table.replace_value(at, left_out[:-1])
    unknown = _load_problems(root)["unknown-tool"]
    assert (unknown.key, unknown.hint) == ("toolsets.decision_log.tools[0]", f"did you mean '{left_out}'?")


def test_a_default_naming_no_toolset_fails_the_load(tables_copy):
    root = tables_copy
    table = TableFile(root / "rules" / "toolsets.yaml")
    name = table.at("defaults", 0, "toolsets", 0)
    table.replace_value(("defaults", 0, "toolsets", 0), name + "x")
    problem = _load_problems(root)["unknown-toolset"]
    assert (problem.file, problem.key, problem.hint) == ("rules/toolsets.yaml", "defaults[0].toolsets[0]",
                                                        f"did you mean '{name}'?")


def test_the_library_answers_every_tool_the_role_may_call_and_a_session_only_what_it_enabled(service):
    tool = not_listed_for(service, "agent")
    toolset = service.toolsets.of_tool(tool).name
    starting = service.toolsets.starting("agent")
    library = service.call(tool, {}, AGENT)
    assert library["error"] is None or library["error"]["code"] != "TOOLSET_NOT_ENABLED"
    for lang in service.messages.languages:
        refused = service.call(tool, {}, AGENT, toolsets=starting, lang=lang)
        assert refused["error"]["code"] == "TOOLSET_NOT_ENABLED" and refused["error"]["field"] == "tool"
        assert f'"{toolset}"' in refused["error"]["message"] and "enable_toolset" in refused["error"]["message"]
    enabled = service.call(tool, {}, AGENT, toolsets=starting | {toolset})
    assert enabled == library


def test_list_toolsets_says_what_each_toolset_holds_for_the_role_and_what_is_enabled(service):
    table = service.toolsets
    starting = table.starting("agent")
    data = service.call("list_toolsets", {}, AGENT, toolsets=starting)["data"]["toolsets"]
    expected = [t for t in table.toolsets.values() if any(service.roles.may_call("agent", n) for n in t.tools)]
    assert [t["name"] for t in data] == [t.name for t in expected]
    for shown, toolset in zip(data, expected):
        assert shown["tools"] == [n for n in toolset.tools if service.roles.may_call("agent", n)]
        assert shown["enabled"] is (toolset.name in starting)
    assert all(t["enabled"] for t in service.call("list_toolsets", {}, AGENT)["data"]["toolsets"])
    assert service.input_schema("enable_toolset")["properties"]["toolset"]["enum"] == list(table.toolsets)
    unknown = service.call("enable_toolset", {"toolset": "nope"}, AGENT)
    assert unknown["error"]["code"] == "INVALID_ARGUMENT"


def _session(server, body, mode="legacy"):
    changed = []

    async def handler(message):
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            changed.append(message)

    async def go():
        with anyio.fail_after(60):
            async with Client(server, raise_exceptions=True, mode=mode, message_handler=handler) as client:
                return await body(client, changed)
    return anyio.run(go)


async def _names(client) -> list[str]:
    return [t.name for t in (await client.list_tools()).tools]


def test_a_session_enables_a_toolset_and_is_told_its_listing_changed(service):
    table = service.toolsets
    tool = not_listed_for(service, "agent")
    toolset = table.of_tool(tool).name
    may = [n for n in TOOLS if service.roles.may_call("agent", n)]

    async def body(client, changed):
        before = await _names(client)
        refused = await client.call_tool(tool, {})
        enabled = await client.call_tool("enable_toolset", {"toolset": toolset})
        after = await _names(client)
        again = await client.call_tool("enable_toolset", {"toolset": toolset})
        return client.server_capabilities, before, refused, enabled, list(changed), after, again, await _names(client)
    capabilities, before, refused, enabled, changed, after, again, last = _session(
        ToolServer(service, lambda: AGENT), body)
    assert capabilities.tools.list_changed is True
    assert before == [n for n in may if table.of_tool(n).name in table.starting("agent")] and tool not in before
    assert refused.is_error and refused.structured_content["error"]["code"] == "TOOLSET_NOT_ENABLED"
    assert f'"{toolset}"' in refused.structured_content["error"]["message"]
    assert enabled.structured_content["data"] == {"toolset": toolset, "tools": [
        n for n in table.toolsets[toolset].tools if service.roles.may_call("agent", n)]}
    assert len(changed) == 1                              # and not again for a toolset already enabled
    assert after == [n for n in may if n in before or table.of_tool(n).name == toolset]
    assert again.structured_content["ok"] and last == after


def test_the_call_works_once_enabled_and_each_session_starts_afresh(service):
    tool, arguments = "fold_evidence", FOLD
    toolset = service.toolsets.of_tool(tool).name
    assert toolset not in service.toolsets.starting("agent")
    library = service.call(tool, arguments, AGENT)
    server = ToolServer(service, lambda: AGENT)

    async def first(client, changed):
        await client.call_tool("enable_toolset", {"toolset": toolset})
        return (await client.call_tool(tool, arguments)).structured_content

    async def second(client, changed):
        return tool in await _names(client), (await client.call_tool(tool, arguments)).structured_content
    assert library["ok"] and _session(server, first) == library
    listed, answer = _session(server, second)
    assert not listed and answer["error"]["code"] == "TOOLSET_NOT_ENABLED"


def test_the_starting_toolsets_an_operator_names(service):
    table = service.toolsets
    may = [n for n in TOOLS if service.roles.may_call("agent", n)]
    always = {t.name for t in table.toolsets.values() if t.always}

    async def body(client, changed):
        return await _names(client)
    assert _session(ToolServer(service, lambda: AGENT, toolsets=["all"]), body) == may
    one = next(t for t in table.toolsets if t not in table.starting("agent"))
    assert _session(ToolServer(service, lambda: AGENT, toolsets=[one]), body) == [
        n for n in may if table.of_tool(n).name in always | {one}]
    # --tools without enable_toolset: nothing could be enabled, so every tool served is listed
    served = {n for n in may if table.of_tool(n).name not in always}
    assert set(_session(ToolServer(service, lambda: AGENT, tools=served), body)) == served


def test_a_connection_with_no_session_lists_and_answers_every_tool_the_role_may_call(service):
    """The 2026-07-28 protocol has no session to enable into: it is answered as the library is."""
    async def body(client, changed):
        return await _names(client), (await client.call_tool("fold_evidence", FOLD)).structured_content
    names, answer = _session(ToolServer(service, lambda: AGENT), body, mode="auto")
    assert names == [n for n in TOOLS if service.roles.may_call("agent", n)]
    assert answer["ok"] and answer == service.call("fold_evidence", FOLD, AGENT)


def test_serve_refuses_a_toolset_it_does_not_know_or_has_nothing_to_enable_with(tmp_path, capsys):
    code = main(["serve", "--db", str(tmp_path / "l.db"), "--toolsets", "findings,suport"])
    assert code == 1
    assert said("usage.toolsets_unknown_close", name="suport", closest="support") in capsys.readouterr().err
    code = main(["--lang", "en", "serve", "--db", str(tmp_path / "l.db"), "--toolsets", "all", "--tools", "findings"])
    assert code == 1
    assert said("usage.toolsets_need_enable", "en") in capsys.readouterr().err


@pytest.mark.extended
def test_a_real_stdio_server_sends_list_changed_on_the_wire(tmp_path, service):
    """`groundrules serve` over stdio, spoken to line by line: the capability, the refusal, the
    notification before enable_toolset's answer, and the listing after it."""
    tool = "fold_evidence"
    toolset = service.toolsets.of_tool(tool).name
    proc = subprocess.Popen([sys.executable, "-m", "groundrules.cli.main", "serve", "--db", str(tmp_path / "s.db"),
                             "--project", "p1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=(tmp_path / "err.log").open("ab"))
    try:
        seen: list = []

        def ask(n: int, method: str, params: dict) -> dict:
            proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params}) + "\n").encode())
            proc.stdin.flush()
            for _ in range(10):                      # notifications first, then the answer
                message = json.loads(proc.stdout.readline())
                if message.get("id") == n:
                    return message
                seen.append(message.get("method"))
            raise AssertionError(f"no answer to {method}: {seen}")

        init = ask(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "t", "version": "1"}})
        assert init["result"]["capabilities"]["tools"]["listChanged"] is True
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        before = [t["name"] for t in ask(1, "tools/list", {})["result"]["tools"]]
        refused = ask(2, "tools/call", {"name": tool, "arguments": FOLD})["result"]
        assert refused["isError"] and refused["structuredContent"]["error"]["code"] == "TOOLSET_NOT_ENABLED"
        assert seen == []
        assert ask(3, "tools/call", {"name": "enable_toolset", "arguments": {"toolset": toolset}})["result"][
            "structuredContent"]["ok"]
        assert seen == ["notifications/tools/list_changed"]
        after = [t["name"] for t in ask(4, "tools/list", {})["result"]["tools"]]
        assert tool not in before and tool in after and set(before) < set(after)
        assert not ask(5, "tools/call", {"name": tool, "arguments": FOLD})["result"]["isError"]
    finally:
        proc.stdin.close()
        proc.wait(30)
