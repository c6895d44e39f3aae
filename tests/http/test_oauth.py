"""`serve --http --auth oauth`: an OAuth 2.1 resource server, against a real authorization server.

The issuer is the certified `oidc-provider`, its own Node process on loopback (oauth_support.py),
issuing JWT access tokens by the client_credentials grant; the groundrules server runs on
loopback too, its verifier reading a clock the tests move. Every refusal must be the answer the
MCP authorization spec asks for (status, WWW-Authenticate, JSON body, the claim map's
description), and nothing of a refused request may reach a tool: the ledger is read behind it.
Both official SDK clients connect with their own OAuth support (client_credentials, headless).
Extended: it runs Node processes (two issuers, one restarted to rotate its key).
"""
from __future__ import annotations

import base64
import json
import re
import subprocess
import time
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

import anyio
import httpx2
import pytest
from joserfc import jwt
from joserfc.jwk import OctKey, RSAKey
from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from findings_support import EXPERIMENT, finding, ok, refused
from groundrules import Caller, EvidenceLedger, FindingLedger, Service
from groundrules.findings import RandomIds, SystemClock
from groundrules.transports.mcp_http import http_app
from groundrules.transports.oauth import OAuthVerifier
from node_tools import NODE_DIR, require
from oauth_support import HOST, Clock, Issuer, serving, signing_key

pytestmark = pytest.mark.extended

CLIENTS = [{"client_id": "agent-alpha", "client_secret": "s-alpha", "projects": ["alpha"]},
           {"client_id": "agent-beta", "client_secret": "s-beta", "projects": ["beta"]},
           {"client_id": "reviewer-1", "client_secret": "s-review", "projects": ["alpha", "beta"]}]
ACCEPT = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


@dataclass
class Served:
    url: str                    # the /mcp endpoint, which is also the resource (aud) tokens must name
    base: str
    service: Service
    verifier: OAuthVerifier
    clock: Clock


@pytest.fixture(scope="module")
def node():
    return require(20, "oidc-provider")


@pytest.fixture(scope="module")
def issuer(node, tmp_path_factory):
    running = Issuer(node, tmp_path_factory.mktemp("issuer"), CLIENTS, [signing_key("k1")])
    yield running
    running.stop()


@pytest.fixture(scope="module")
def stranger(node, tmp_path_factory):
    """Another authorization server, with the same clients, that the resource server does not trust."""
    running = Issuer(node, tmp_path_factory.mktemp("stranger"), CLIENTS, [signing_key("k1")])
    yield running
    running.stop()


@pytest.fixture(scope="module")
def oauth(rulebook, issuer, tmp_path_factory):
    where = tmp_path_factory.mktemp("oauth")
    ids = RandomIds()
    service = Service(rulebook, findings=FindingLedger(where / "l.db", rulebook=rulebook, rules_root=where),
                      evidence=EvidenceLedger(where / "l.db", ids=lambda: ids.new("R"), clock=SystemClock(),
                                              rulebook=rulebook))
    clock, made = Clock(), {}

    def app(port: int):
        made["verifier"] = OAuthVerifier.configured(rulebook, resource=f"http://{HOST}:{port}/mcp",
                                                    issuers=[issuer.url], clock=clock)
        return http_app(service, made["verifier"], host=HOST, port=port)

    with serving(app) as base:
        yield Served(f"{base}/mcp", base, service, made["verifier"], clock)
    service.findings.close()
    service.evidence.close()


@pytest.fixture(autouse=True)
def clock_back(request):
    yield
    if "oauth" in request.fixturenames:
        request.getfixturevalue("oauth").clock.offset = 0


@pytest.fixture(scope="module")
def table(rulebook):
    return rulebook.of_kind("claim_map")[0]


def body_said(table, reason: str) -> str:
    """A refusal's error_description as the JSON body carries it: in the server's language (no Accept-Language)."""
    from groundrules import default_rulebook
    return table.messages.speaking(default_rulebook().table("messages").default)[reason].render({})


def header_said(table, reason: str) -> str:
    """As the WWW-Authenticate header carries it: the first language's text RFC 6750 allows there."""
    from groundrules.claim_map import header_safe
    return next(t for t in (table.messages.speaking(lang)[reason].render({}) for lang in table.messages.languages())
                if header_safe(t))


def challenge(response) -> dict:
    header = response.headers["www-authenticate"]
    assert header.startswith("Bearer ")
    return dict(re.findall(r'(\w+)="([^"]*)"', header))


def post(url: str, token: str | None, body: dict, **headers) -> Any:
    auth = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return httpx2.post(url, json=body, headers={**ACCEPT, **auth, **headers}, timeout=60)


def log_call(statement: str) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "log_finding", "arguments": finding(project="alpha", statement=statement)}}


def written(served: Served, statement: str) -> list:
    return ok(served.service.call("query_findings", {"keyword": statement}, Caller("audit", "reviewer", ("alpha",))))[
        "findings"]


def claims_of(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def tampered(token: str, **changes) -> str:
    """The token with its payload changed and its signature kept."""
    header, _, signature = token.split(".")
    payload = base64.urlsafe_b64encode(json.dumps({**claims_of(token), **changes}).encode()).rstrip(b"=").decode()
    return f"{header}.{payload}.{signature}"


def tools(url: str, token: str, *, mode: str = "auto") -> list[str]:
    async def go():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
            return [t.name for t in (await client.list_tools()).tools]
    return anyio.run(go)


def calls(url: str, token: str, batch: list) -> list[dict]:
    async def go():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        async with Client(streamable_http_client(url, http_client=http)) as client:
            return [(await client.call_tool(name, arguments)).structured_content for name, arguments in batch]
    return anyio.run(go)


# ------------------------------------------------------------------------------ discovery

def test_the_metadata_names_the_resource_its_authorization_server_and_scopes(oauth, issuer, table):
    documents = []
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        response = httpx2.get(oauth.base + path, timeout=30)
        assert response.status_code == 200 and response.headers["access-control-allow-origin"] == "*"
        documents.append(response.json())
    assert documents[0] == documents[1]
    assert documents[0]["resource"] == oauth.url
    assert documents[0]["authorization_servers"] == [issuer.url]
    assert documents[0]["scopes_supported"] == list(table.supported_scopes)
    assert documents[0]["bearer_methods_supported"] == ["header"]
    assert httpx2.options(oauth.base + "/.well-known/oauth-protected-resource/mcp", timeout=30).status_code == 204


def test_a_request_without_a_token_is_challenged_to_the_metadata_and_scope(oauth, table):
    response = post(oauth.url, None, log_call("无令牌"))
    assert response.status_code == 401
    assert challenge(response) == {"resource_metadata": oauth.base + "/.well-known/oauth-protected-resource/mcp",
                                   "scope": " ".join(table.required_scopes)}
    assert response.json() == {"error_description": body_said(table, "no_token")}
    assert written(oauth, "无令牌") == []


# ------------------------------------------------------------------------------ tokens refused (401)

def _forged(issuer: Issuer, oauth: Served) -> str:
    claims = claims_of(issuer.token("agent-alpha", "groundrules", oauth.url))
    key = RSAKey.generate_key(2048, parameters={"kid": "k1"})
    return jwt.encode({"alg": "RS256", "kid": "k1", "typ": "at+jwt"}, claims, key)


def _shared_secret(issuer: Issuer, oauth: Served) -> str:
    claims = claims_of(issuer.token("agent-alpha", "groundrules", oauth.url))
    return jwt.encode({"alg": "HS256", "kid": "k1"}, claims, OctKey.import_key("k" * 32))


BAD_TOKENS = {
    "wrong audience": (lambda issuer, stranger, oauth: issuer.token("agent-alpha", "groundrules",
                                                                    "http://127.0.0.1:9/mcp"), "wrong_audience"),
    "wrong issuer": (lambda issuer, stranger, oauth: stranger.token("agent-alpha", "groundrules", oauth.url),
                     "unknown_issuer"),
    "payload changed": (lambda issuer, stranger, oauth: tampered(issuer.token("agent-alpha", "groundrules", oauth.url),
                                                                 groundrules_projects=["beta"]), "bad_signature"),
    "signed by another key under the issuer's key id": (lambda issuer, stranger, oauth: _forged(issuer, oauth),
                                                        "bad_signature"),
    "signed with a shared secret": (lambda issuer, stranger, oauth: _shared_secret(issuer, oauth),
                                    "unsupported_algorithm"),
    "not a JWT": (lambda issuer, stranger, oauth: "opaque-token-value", "malformed"),
    "no issuer": (lambda issuer, stranger, oauth: tampered(issuer.token("agent-alpha", "groundrules", oauth.url),
                                                           iss=None), "unknown_issuer"),
}


@pytest.mark.parametrize("case", list(BAD_TOKENS))
def test_a_token_that_is_not_this_servers_is_401_invalid_token_and_reaches_no_tool(oauth, issuer, stranger,
                                                                                    table, case):
    make, reason = BAD_TOKENS[case]
    token = make(issuer, stranger, oauth)
    statement = f"不应写入 {case}"
    for body in (log_call(statement), {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}):
        response = post(oauth.url, token, body)
        assert response.status_code == 401, response.text
        assert challenge(response) == {"error": "invalid_token", "error_description": header_said(table, reason),
                                       "resource_metadata": oauth.base + "/.well-known/oauth-protected-resource/mcp",
                                       "scope": " ".join(table.required_scopes)}
        assert response.json() == {"error": "invalid_token", "error_description": body_said(table, reason)}
    assert written(oauth, statement) == []


def test_an_expired_token_is_accepted_within_the_leeway_and_refused_past_it(oauth, issuer, table):
    token = issuer.token("agent-alpha", "groundrules", oauth.url)
    exp = claims_of(token)["exp"]
    oauth.clock.offset = exp + table.leeway_s - 1 - time.time()
    assert tools(oauth.url, token)
    oauth.clock.offset = exp + table.leeway_s + 1 - time.time()
    response = post(oauth.url, token, log_call("过期令牌"))
    assert response.status_code == 401
    assert challenge(response)["error_description"] == header_said(table, "expired")
    assert written(oauth, "过期令牌") == []


def test_a_token_not_valid_yet_is_refused(oauth, issuer, table):
    token = issuer.token("agent-alpha", "groundrules", oauth.url)
    oauth.clock.offset = -(table.leeway_s + 60)          # the server's clock is behind the issuer's
    response = post(oauth.url, token, log_call("未生效令牌"))
    assert response.status_code == 401
    assert challenge(response)["error_description"] == header_said(table, "not_yet_valid")


# ------------------------------------------------------------------------------ tokens short of a scope (403)

def test_a_token_without_the_required_scope_is_403_insufficient_scope(oauth, issuer, table):
    token = issuer.token("agent-alpha", "other", oauth.url)
    response = post(oauth.url, token, log_call("缺少权限范围"))
    assert response.status_code == 403
    assert challenge(response) == {"error": "insufficient_scope", "error_description": header_said(table, "missing_scope"),
                                   "scope": " ".join(table.required_scopes),
                                   "resource_metadata": oauth.base + "/.well-known/oauth-protected-resource/mcp"}
    assert response.json()["error"] == "insufficient_scope"
    assert written(oauth, "缺少权限范围") == []


# ------------------------------------------------------------------------------ tokens accepted

def test_each_role_lists_and_calls_what_the_role_table_grants_it(oauth, issuer):
    roles = oauth.service.roles
    agent = issuer.token("agent-alpha", "groundrules", oauth.url)
    reviewer = issuer.token("reviewer-1", "groundrules groundrules:review", oauth.url)
    table = oauth.service.toolsets
    for token, role in ((agent, "agent"), (reviewer, "reviewer")):
        for mode in ("auto", "legacy"):      # a session (legacy) lists its role's default toolsets
            assert sorted(tools(oauth.url, token, mode=mode)) == sorted(
                t for t in roles.grants if roles.may_call(role, t)
                and (mode == "auto" or table.of_tool(t).name in table.starting(role)))
    fid = ok(calls(oauth.url, agent, [("log_finding", finding(evidence=[EXPERIMENT]))])[0])["finding_id"]
    pid = ok(calls(oauth.url, agent, [("propose_rule", {"finding_id": fid, "rule_text": "- 先记录温度",
                                                        "target_path": "AGENTS.md", "rationale": "两次误判"})])[0])[
        "proposal_id"]
    refused(calls(oauth.url, agent, [("approve_rule", {"proposal_id": pid})])[0], "PERMISSION_DENIED")
    ok(calls(oauth.url, reviewer, [("approve_rule", {"project": "alpha", "proposal_id": pid})])[0])
    events = ok(calls(oauth.url, agent, [("get_finding", {"finding_id": fid})])[0])["events"]
    assert [e["payload"]["decided_by"] for e in events if e["kind"] == "rule_applied"] == ["reviewer-1"]
    # issue 30: the finding's first event names the agent as the OAuth token authenticated it
    assert events[0]["writer"]["auth"] | {"method": "oauth", "subject": claims_of(agent)["sub"]} == \
        events[0]["writer"]["auth"]


def test_a_token_for_project_alpha_is_refused_on_beta(oauth, issuer):
    alpha = issuer.token("agent-alpha", "groundrules", oauth.url)
    beta = issuer.token("agent-beta", "groundrules", oauth.url)
    theirs = ok(calls(oauth.url, beta, [("log_finding", finding(statement="贝塔的发现"))])[0])["finding_id"]
    mine, other, elsewhere = calls(oauth.url, alpha, [
        ("log_finding", finding(statement="阿尔法的发现")), ("get_finding", {"finding_id": theirs}),
        ("log_finding", finding(project="beta", statement="越界写入"))])
    assert ok(mine)["finding_id"] != theirs
    refused(other, "NOT_FOUND")
    assert refused(elsewhere, "PROJECT_SCOPE_MISMATCH")["field"] == "project"
    assert [f["statement"] for f in written(oauth, "越界写入")] == []


def test_a_session_is_bound_to_the_principal_that_opened_it(oauth, issuer):
    alpha = issuer.token("agent-alpha", "groundrules", oauth.url)
    again = issuer.token("agent-alpha", "groundrules", oauth.url)
    beta = issuer.token("agent-beta", "groundrules", oauth.url)
    opened = post(oauth.url, alpha, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    session = opened.headers["mcp-session-id"]
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert post(oauth.url, again, listing, **{"mcp-session-id": session}).status_code == 200
    assert post(oauth.url, beta, listing, **{"mcp-session-id": session}).status_code == 404


# ------------------------------------------------------------------------------ key rotation

def test_a_rotated_key_is_fetched_once_the_refetch_interval_allows(oauth, issuer, table):
    old = issuer.token("agent-alpha", "groundrules", oauth.url)
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    source = oauth.verifier.issuers[issuer.url]
    source.forget()                                                    # as SIGHUP does: read the set afresh
    assert tools(oauth.url, old)                                      # the key set is read and cached now
    issuer.rotate([signing_key("k2"), *issuer_keys(issuer)])
    new = issuer.token("agent-alpha", "groundrules", oauth.url)
    assert json.loads(base64.urlsafe_b64decode(new.split(".")[0] + "==")).get("kid") == "k2"
    fetches = source.fetches
    oauth.clock.offset = source.attempted_at + 1 - time.time()        # a second after the last read
    response = post(oauth.url, new, listing)
    assert response.status_code == 401 and source.fetches == fetches             # rate-limited: not read again
    assert challenge(response)["error_description"] == header_said(table, "unknown_key")
    oauth.clock.offset = source.attempted_at + table.keys["refetch_min_s"] - time.time()
    assert tools(oauth.url, new)
    assert source.fetches == fetches + 1
    assert tools(oauth.url, old)                                      # the old key is still published


def issuer_keys(issuer: Issuer) -> list[dict]:
    config = json.loads((issuer.folder / f"issuer-{issuer.port}.json").read_text(encoding="utf-8"))
    return config["keys"]


# ------------------------------------------------------------------------------ an MCP client's own OAuth

class MemoryStorage:
    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, info):
        self.client = info


def test_the_sdk_client_discovers_the_issuer_and_gets_its_own_token(oauth, issuer):
    """The Python SDK's client_credentials provider: 401 -> resource metadata -> the issuer's
    metadata -> a token for this resource -> the call, with no token handed to it."""
    storage = MemoryStorage()

    async def go():
        auth = ClientCredentialsOAuthProvider(server_url=oauth.url, storage=storage, client_id="agent-beta",
                                              client_secret="s-beta", scope="groundrules", issuer=issuer.url)
        http = httpx2.AsyncClient(auth=auth, timeout=60)
        async with Client(streamable_http_client(oauth.url, http_client=http)) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            answer = await client.call_tool("query_findings", {})
            return names, answer.structured_content
    names, answer = anyio.run(go)
    assert "log_finding" in names and "approve_rule" not in names
    assert answer["ok"] is True
    assert claims_of(storage.tokens.access_token)["aud"] == oauth.url


def test_the_typescript_sdk_client_gets_its_own_token_headless(oauth, issuer, node):
    """The official TypeScript SDK's client with its client_credentials provider
    (tests/node/ts_oauth_client.mjs), from the 401 to the call."""
    require(20, "@modelcontextprotocol/sdk")
    out = subprocess.run([node, str(NODE_DIR / "ts_oauth_client.mjs"), oauth.url, "agent-beta", "s-beta",
                          "groundrules", issuer.url], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout)
    roles, table = oauth.service.roles, oauth.service.toolsets
    assert sorted(seen["tools"]) == sorted(t for t in roles.grants if roles.may_call("agent", t)
                                           and table.of_tool(t).name in table.starting("agent"))
    assert seen["answer"]["ok"] is True and seen["audience"] == oauth.url
    assert seen["server"] == {"name": "groundrules", "version": version("groundrules")}


# ------------------------------------------------------------------------------ the issuer out of reach

def test_while_no_key_set_can_be_had_the_answer_is_503_with_retry_after(rulebook, issuer, table):
    dead = f"http://{HOST}:9"                # the discard port: nothing answers there

    def app(port: int):
        verifier = OAuthVerifier.configured(rulebook, resource=f"http://{HOST}:{port}/mcp", issuers=[dead])
        return http_app(Service(rulebook), verifier, host=HOST, port=port)

    token = tampered(issuer.token("agent-alpha", "groundrules", "http://x/mcp"), iss=dead)
    with serving(app) as base:
        response = post(f"{base}/mcp", token, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 503
    assert response.headers["retry-after"] == str(table.keys["refetch_min_s"])
    assert response.json() == {"error": "temporarily_unavailable",
                               "error_description": body_said(table, "keys_unavailable")}
