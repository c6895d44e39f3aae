"""One server for many agents, over real HTTP on loopback with the SDK's client (issue 9)."""
from __future__ import annotations

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from http_support import CALLERS
from groundrules import Caller
from findings_support import COUNTER, EXPERIMENT, finding, ok, refused
from http_support import agent_calls, call, tool_names

AGENT_A, AGENT_B, REVIEWER = "tok-alpha", "tok-beta", "tok-review"


def log(url: str, token: str, **overrides) -> str:
    return ok(call(url, token, "log_finding", finding(**overrides)))["finding_id"]


# ------------------------------------------------------------------------------ who may connect

@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer not-a-token"}, {"Authorization": "Basic dG9rLWFscGhh"},
                                     {"Authorization": "Bearer " + "tok-alpha" * 2}])
def test_a_request_without_a_valid_token_gets_401_before_any_tool_runs(server, headers):
    url, service = server
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "log_finding", "arguments": finding(project="alpha", statement="不应写入")}}
    before = ok(service.call("query_findings", {"keyword": "不应写入"}, _caller("alpha")))["findings"]
    response = httpx2.post(url, json=body, headers={**headers, "Accept": "application/json, text/event-stream"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert ok(service.call("query_findings", {"keyword": "不应写入"}, _caller("alpha")))["findings"] == before == []


def test_the_sdk_client_is_refused_without_a_valid_token(url):
    with pytest.raises(BaseException) as caught:
        call(url, "wrong-token", "query_findings", {})
    assert caught.group_contains(MCPError) if isinstance(caught.value, BaseExceptionGroup) else isinstance(
        caught.value, MCPError)


def test_the_host_check_stays_on(url):
    response = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                           headers={"Authorization": "Bearer tok-alpha", "Host": "evil.example",
                                    "Accept": "application/json, text/event-stream"})
    assert response.status_code == 421


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_list_tools_shows_each_role_what_it_may_call(server, mode):
    url, service = server
    table = service.toolsets
    for token, (_, role, _) in CALLERS.items():
        allowed = [t for t in service.roles.grants if service.roles.may_call(role, t)]
        if mode == "legacy":          # a session lists its role's default toolsets (rules/toolsets.yaml)
            allowed = [t for t in allowed if table.of_tool(t).name in table.starting(role)]
        assert sorted(tool_names(url, token, mode=mode)) == sorted(allowed)
    assert set(tool_names(url, REVIEWER)) > set(tool_names(url, AGENT_A))


# ------------------------------------------------------------------------------ isolation

def test_two_agents_in_two_projects_never_see_each_other(url):
    mine = log(url, AGENT_A, statement="阿尔法项目的温度漂移", project="alpha")
    theirs = log(url, AGENT_B, statement="贝塔项目的温度漂移")           # 'current' = beta, its only grant
    for token, own, other, other_project in ((AGENT_A, mine, theirs, "beta"), (AGENT_B, theirs, mine, "alpha")):
        found = ok(call(url, token, "query_findings", {"keyword": "温度漂移"}))["findings"]
        assert [f["finding_id"] for f in found] == [own]
        refused(call(url, token, "get_finding", {"finding_id": other}), "NOT_FOUND")
        refused(call(url, token, "add_evidence", {"finding_id": other, "evidence": EXPERIMENT}), "NOT_FOUND")
        error = refused(call(url, token, "query_findings", {"project": other_project, "keyword": "温度漂移"}),
                        "PROJECT_SCOPE_MISMATCH")
        assert error["field"] == "project"
        refused(call(url, token, "log_finding", finding(project=other_project)), "PROJECT_SCOPE_MISMATCH")
    assert [f["finding_id"] for f in ok(call(url, REVIEWER, "query_findings", {"project": "beta",
                                                                                "keyword": "温度漂移"}))["findings"]] == [theirs]


# ------------------------------------------------------------------------------ reviewer-only effects

def test_an_agents_manual_exception_is_refused_a_reviewers_recorded_under_its_principal(url):
    exception = {"reason": "复盘会议确认"}
    fid = log(url, AGENT_A, project="alpha")
    for tool, arguments in (("log_finding", finding(epistemic_state="supported", manual_exception=exception)),
                            ("set_finding_state", {"finding_id": fid, "epistemic_state": "supported", "reason": "r",
                                                   "expected_version": 1, "manual_exception": exception})):
        assert refused(call(url, AGENT_A, tool, arguments), "PERMISSION_DENIED")["field"] == "manual_exception"
    ok(call(url, REVIEWER, "set_finding_state", {"project": "alpha", "finding_id": fid, "epistemic_state": "supported",
                                                  "reason": "r", "expected_version": 1, "manual_exception": exception}))
    events = ok(call(url, REVIEWER, "get_finding", {"project": "alpha", "finding_id": fid}))["events"]
    recorded = [e["payload"]["manual_exception"] for e in events if "manual_exception" in (e.get("payload") or {})]
    assert recorded == [{"approved_by": "user:alice", "reason": "复盘会议确认"}]
    # issue 30: every event names the token's principal and role, and that a token authenticated it
    assert [e["writer"] for e in events] == [{"principal": "agent-a", "role": "agent", "auth": {"method": "token"}},
                                             {"principal": "user:alice", "role": "reviewer", "auth": {"method": "token"}}]
    impostor = dict(exception, approved_by="user:boss")
    refused(call(url, REVIEWER, "log_finding", finding(project="alpha", epistemic_state="supported",
                                                       manual_exception=impostor)), "PERMISSION_DENIED")


def test_only_a_reviewer_approves_a_rule_and_the_decider_is_its_principal(url, rules_root):
    fid = log(url, AGENT_A, project="alpha", evidence=[EXPERIMENT])
    pid = ok(call(url, AGENT_A, "propose_rule", {"finding_id": fid, "rule_text": "- 排查差异前先记录 GPU 温度",
                                                 "target_path": "AGENTS.md", "rationale": "两次误判"}))["proposal_id"]
    for tool in ("approve_rule", "reject_rule"):
        refused(call(url, AGENT_A, tool, {"proposal_id": pid, "note": "我自己批准"}), "PERMISSION_DENIED")
    assert not (rules_root / "AGENTS.md").exists()
    assert ok(call(url, REVIEWER, "approve_rule", {"project": "alpha", "proposal_id": pid}))["status"] == "applied"
    assert "GPU 温度" in (rules_root / "AGENTS.md").read_text(encoding="utf-8")
    events = ok(call(url, AGENT_A, "get_finding", {"finding_id": fid}))["events"]
    assert [e["payload"]["decided_by"] for e in events if e["kind"] == "rule_applied"] == ["user:alice"]


# ------------------------------------------------------------------------------ many agents at once

def test_eight_clients_racing_one_finding_exactly_one_wins_per_version(url):
    fid = log(url, AGENT_A, project="alpha", evidence=[EXPERIMENT, COUNTER])
    states = ["provisional", "contested", "provisional"]
    for version, state in enumerate(states, start=1):
        arguments = {"finding_id": fid, "epistemic_state": state, "reason": f"round {version}",
                     "expected_version": version}
        envelopes = anyio.run(lambda: _race(url, AGENT_A, "set_finding_state", arguments, 8))
        assert sum(e["ok"] for e in envelopes) == 1, envelopes[0]["error"]
        assert sorted(e["error"]["code"] for e in envelopes if not e["ok"]) == ["CONCURRENT_MODIFICATION"] * 7
    data = ok(call(url, AGENT_A, "get_finding", {"finding_id": fid}))
    assert (data["finding"]["version"], data["finding"]["epistemic_state"]) == (len(states) + 1, states[-1])
    rounds = sorted(e["reason"] for e in data["events"] if (e.get("reason") or "").startswith("round"))
    assert rounds == [f"round {v}" for v in range(1, len(states) + 1)]       # no lost, no duplicated write


async def _race(url: str, token: str, tool: str, arguments: dict, n: int) -> list[dict]:
    """n connections, each opened first, then all calling at once."""
    go, out = anyio.Event(), []

    async def one() -> None:
        async with Client(streamable_http_client(url, http_client=httpx2.AsyncClient(
                headers={"Authorization": f"Bearer {token}"}, timeout=60)), mode="legacy") as client:
            shown = (await client.call_tool("list_toolsets", {})).structured_content["data"]["toolsets"]
            holder = next(t for t in shown if tool in t["tools"])
            if not holder["enabled"]:                 # a session enables the toolset its call needs
                await client.call_tool("enable_toolset", {"toolset": holder["name"]})
            await client.list_tools()
            ready.append(1)
            await go.wait()
            out.append((await client.call_tool(tool, arguments)).structured_content)

    ready: list = []
    async with anyio.create_task_group() as tg:
        for _ in range(n):
            tg.start_soon(one)
        while len(ready) < n:
            await anyio.sleep(0.01)
        go.set()
    return out


def test_a_retried_log_from_another_connection_returns_the_first_result(url):
    arguments = finding(project="alpha", statement="重试不重复", idempotency_key="retry-7f3a")
    first = ok(call(url, AGENT_A, "log_finding", arguments, mode="legacy"))
    again = ok(call(url, AGENT_A, "log_finding", arguments, mode="auto"))
    assert again == first
    found = ok(call(url, AGENT_A, "query_findings", {"keyword": "重试不重复"}))["findings"]
    assert [f["finding_id"] for f in found] == [first["finding_id"]]


def test_one_connection_serves_many_calls_as_its_caller(url):
    envelopes = agent_calls(url, AGENT_B, [("log_finding", finding(statement="同一连接"))] * 3
                            + [("query_findings", {"keyword": "同一连接"})])
    assert len(ok(envelopes[-1])["findings"]) == 3


def _caller(project: str) -> Caller:
    return Caller("test-observer", "reviewer", (project,))



# ------------------------------------------------------------------------------ the evidence ledger

def test_the_evidence_ledger_over_http_per_project_with_the_reviewer_as_redactor(url):
    record = {"type": "message", "role": "user", "state": "sent", "content": "我的手机是 13812345678"}
    stored = ok(call(url, AGENT_A, "append_evidence", {"record": record}))["records"]
    mid = stored[0]["id"]
    assert "lock" in [r["type"] for r in stored]
    refused(call(url, AGENT_B, "get_evidence", {"record_id": mid}), "UNKNOWN_EVIDENCE")
    refused(call(url, AGENT_B, "get_evidence", {"project": "alpha"}), "PROJECT_SCOPE_MISMATCH")
    refused(call(url, AGENT_A, "redact_evidence", {"record_id": mid, "reason": "r"}), "PERMISSION_DENIED")
    events = ok(call(url, REVIEWER, "redact_evidence", {"project": "alpha", "record_id": mid,
                                                        "reason": "用户要求删除"}))["redactions"]
    assert {e["by"] for e in events} == {"user:alice"} and len(events) == len(stored)
    again = ok(call(url, AGENT_A, "get_evidence", {"record_id": mid}))["records"][0]
    assert again["content"]["redacted"] is True and "13812345678" not in str(again)


def test_stored_interpretations_over_http_are_what_fold_ledger_folds_per_project(url):
    record = {"type": "message", "role": "user", "state": "sent", "content": "我的手机是 13812345678"}
    stored = ok(call(url, AGENT_B, "append_evidence", {"record": record}))["records"]
    locks = [r["id"] for r in stored if r["type"] == "lock"]
    assert len(locks) == 1
    given = {"id": "I-http", "events": [{"id": "e-http", "type": "set", "slot": "phone", "value": "13812345678",
                                         "evidence": locks}],
             "dispositions": [{"lock": locks[0], "slot": "phone"}]}
    refused(call(url, AGENT_A, "append_interpretation", {"project": "beta", "interpretation": given}),
            "PROJECT_SCOPE_MISMATCH")
    ok(call(url, AGENT_B, "append_interpretation", {"interpretation": given}))
    now = "2100-01-01T00:00:00+08:00"
    folded = ok(call(url, AGENT_B, "fold_ledger", {"now": now}))
    assert folded == ok(call(url, AGENT_B, "fold_ledger", {"now": now, "interpretations": [given]}))
    assert [e["id"] for e in folded["events"]] == ["e-http"]
    assert ok(call(url, REVIEWER, "fold_ledger", {"project": "beta", "now": now})) == folded
    alpha = call(url, REVIEWER, "fold_ledger", {"project": "alpha", "now": now})     # none of beta's
    assert "e-http" not in str(alpha)


# ------------------------------------------------------------------------------ 0 ways for an agent

# valid arguments for each tool whose options the role table reserves, carrying that option
WITH_OPTION = {
    "log_finding": lambda fid: finding(epistemic_state="supported", manual_exception={"reason": "r"}),
    "set_finding_state": lambda fid: {"finding_id": fid, "epistemic_state": "supported", "reason": "r",
                                      "expected_version": 1, "manual_exception": {"reason": "r"}},
    "supersede_finding": lambda fid: {"finding_id": fid, "reason": "r", "expected_version": 1,
                                      "new": finding(epistemic_state="supported", manual_exception={"reason": "r"})},
    "revalidate_finding": lambda fid: {"finding_id": fid, "result": "still_supports", "reason": "r",
                                       "expected_version": 1, "manual_exception": {"reason": "r"}},
}


def test_no_tool_or_option_the_role_table_reserves_is_open_to_an_agent(server):
    url, service = server
    roles = service.roles
    fid = log(url, AGENT_A, project="alpha")
    before = ok(call(url, AGENT_A, "get_finding", {"finding_id": fid}))
    reserved_tools = [t for t in roles.grants if not roles.may_call("agent", t)]
    assert reserved_tools                                     # the table does reserve some
    for tool in reserved_tools:
        assert tool not in tool_names(url, AGENT_A)
        refused(call(url, AGENT_A, tool, {}), "PERMISSION_DENIED")
    reserved_options = {t for t, options in roles.options.items() for _, allowed in options if "agent" not in allowed}
    assert reserved_options == set(WITH_OPTION)
    for tool in reserved_options:
        error = refused(call(url, AGENT_A, tool, WITH_OPTION[tool](fid)), "PERMISSION_DENIED")
        assert error["field"].endswith("manual_exception")
    assert ok(call(url, AGENT_A, "get_finding", {"finding_id": fid})) == before


# ------------------------------------------------------------------------------ the language of an answer

def _refused_in(url: str, headers: dict, meta: dict | None) -> dict:
    async def run() -> dict:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {AGENT_A}", **headers}, timeout=60)
        async with Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool("get_finding", {"finding_id": "F-404"}, meta=meta)
            return result.structured_content
    return anyio.run(run)


@pytest.mark.parametrize("headers, meta, lang", [
    ({}, None, None),
    ({"Accept-Language": "en-GB,en;q=0.9,zh;q=0.5"}, None, "en"),
    ({"Accept-Language": "fr, zh;q=0.8, en;q=0.7"}, None, "zh"),
    ({"Accept-Language": "fr"}, None, None),                          # none offered: the server's
    ({"Accept-Language": "zh"}, {"groundrules/lang": "en"}, "en"),    # the call's _meta wins
])
def test_an_http_answer_speaks_the_language_asked_as_the_library_does(server, headers, meta, lang):
    url, service = server
    over_http = _refused_in(url, headers, meta)
    library = service.call("get_finding", {"finding_id": "F-404"}, Caller("agent-a", "agent", ("alpha",)), lang=lang)
    assert over_http["error"]["code"] == "NOT_FOUND" and over_http == library
