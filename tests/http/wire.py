"""A JSON-RPC client over raw HTTP, for what the SDK's client never sends (bad ids, batches, the same
id twice, a body that never ends) and for counting sessions by hand."""
from __future__ import annotations

import json
from typing import Any

import httpx2

LEGACY, MODERN = "2025-11-25", "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
ACCEPT = "application/json, text/event-stream"


class Wire:
    def __init__(self, url: str, token: str, timeout: float = 30):
        self.url, self.token = url, token
        self.http = httpx2.Client(timeout=timeout)

    def headers(self, session: str | None = None) -> dict:
        out = {"Authorization": f"Bearer {self.token}", "Accept": ACCEPT, "Content-Type": "application/json"}
        if session is not None:
            out.update({"mcp-session-id": session, "mcp-protocol-version": LEGACY})
        return out

    def post(self, body: Any, session: str | None = None) -> httpx2.Response:
        content = body if isinstance(body, (bytes, str)) else json.dumps(body, ensure_ascii=False)
        return self.http.post(self.url, content=content, headers=self.headers(session))

    def open_session(self) -> httpx2.Response:
        """initialize (and, when it succeeds, the initialized notification); the response of initialize."""
        response = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                              "params": {"protocolVersion": LEGACY, "capabilities": {},
                                         "clientInfo": {"name": "wire", "version": "1"}}})
        if response.status_code == 200:
            session = response.headers["mcp-session-id"]
            self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        return response

    def session(self) -> str:
        response = self.open_session()
        assert response.status_code == 200, response.text
        return response.headers["mcp-session-id"]

    def close(self, session: str) -> int:
        return self.http.delete(self.url, headers=self.headers(session)).status_code

    def call(self, session: str | None, tool: str, arguments: Any, request_id: Any = 1) -> httpx2.Response:
        """A tools/call on a session, or without one (session None) as a 2026-07-28 request stands alone."""
        if session is not None:
            return self.post({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                              "params": {"name": tool, "arguments": arguments}}, session)
        return self.request("tools/call", {"name": tool, "arguments": arguments}, request_id, name=tool)

    def request(self, method: str, params: dict, request_id: Any = 1, *, name: str | None = None) -> httpx2.Response:
        """One self-contained 2026-07-28 request (no session): its envelope keys in params._meta, its
        method (and tool name) in headers."""
        headers = dict(self.headers(), **{"mcp-protocol-version": MODERN, "mcp-method": method})
        if name is not None:
            headers["mcp-name"] = name
        body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": dict(params, _meta=META)}
        return self.http.post(self.url, content=json.dumps(body, ensure_ascii=False), headers=headers)


def envelope(response: httpx2.Response) -> dict:
    """The envelope a tools/call answered with."""
    assert response.status_code == 200, response.text
    return response.json()["result"]["structuredContent"]


def error_code(response: httpx2.Response) -> int:
    return response.json()["error"]["code"]
