"""`groundrules serve --http --auth oauth` as the real command in its own process, on a local JWKS
file: it publishes its metadata, accepts a token signed by a listed key, and SIGHUP re-reads the
key file (a rotated key is accepted after the signal, not before: the refetch interval holds)."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import anyio
import httpx2
import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from groundrules import default_rulebook
from groundrules.api import TOOLS
from oauth_support import HOST, free_port

pytestmark = pytest.mark.extended

ISSUER = "https://login.example.test/realms/acme"
START_S = 120


def key(kid: str) -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": kid, "alg": "RS256", "use": "sig"})


def token(signer: RSAKey, resource: str) -> str:
    now = int(time.time())
    return jwt.encode({"alg": "RS256", "kid": signer.kid}, {
        "iss": ISSUER, "aud": resource, "sub": "ci-agent", "scope": "groundrules", "iat": now, "exp": now + 600,
        "groundrules_projects": ["alpha"]}, signer)


def status(url: str, bearer: str) -> int:
    return httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30,
                       headers={"Authorization": f"Bearer {bearer}", "Accept": "application/json, text/event-stream",
                                "MCP-Protocol-Version": "2025-11-25"}).status_code


def tool_names(url: str, bearer: str) -> list[str]:
    async def go():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {bearer}"}, timeout=60)
        async with Client(streamable_http_client(url, http_client=http)) as client:
            return [t.name for t in (await client.list_tools()).tools]
    return anyio.run(go)


@pytest.fixture
def served(tmp_path):
    k1 = key("k1")
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps(KeySet([k1]).as_dict()), encoding="utf-8")
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "groundrules.cli.main", "serve", "--http", f"{HOST}:{port}",
                             "--db", str(tmp_path / "l.db"), "--auth", "oauth", "--issuer", ISSUER,
                             "--jwks", str(jwks), "--tools", "findings"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://{HOST}:{port}/mcp"
    metadata = f"http://{HOST}:{port}/.well-known/oauth-protected-resource"
    deadline = time.monotonic() + START_S
    try:
        while True:
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            try:
                if httpx2.get(metadata, timeout=5).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)
        yield url, jwks, k1, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def test_the_command_serves_oauth_and_sighup_rereads_its_key_file(served):
    url, jwks, k1, proc = served
    metadata = httpx2.get(url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"), timeout=30).json()
    assert metadata["resource"] == url and metadata["authorization_servers"] == [ISSUER]
    names = tool_names(url, token(k1, url))
    roles = default_rulebook().table("roles")              # --tools findings, as the agent role may call them
    assert set(names) == {n for n, t in TOOLS.items() if t.ledger == "findings" and roles.may_call("agent", n)}
    k2 = key("k2")
    jwks.write_text(json.dumps(KeySet([k2, k1]).as_dict()), encoding="utf-8")
    assert status(url, token(k2, url)) == 401                  # read a moment ago: not read again yet
    proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + START_S
    while status(url, token(k2, url)) == 401:
        assert time.monotonic() < deadline, "SIGHUP did not make the server read its key file again"
        time.sleep(0.1)
    assert tool_names(url, token(k2, url)) == names
    assert status(url, token(key("k3"), url)) == 401
