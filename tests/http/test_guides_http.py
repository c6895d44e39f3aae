"""The guides over Streamable HTTP (issue 32, item 2): the same resources, read with a bearer
token from a real server, are the bytes stdio and the library give (tests/mcp/test_guides.py)."""
from __future__ import annotations

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from groundrules.guides import GUIDES, guide_text


def test_the_guides_read_over_http_are_the_services(server):
    url, service = server

    async def go():
        http = httpx2.AsyncClient(headers={"Authorization": "Bearer tok-alpha"}, timeout=60)
        async with Client(streamable_http_client(url, http_client=http)) as client:
            listed = (await client.list_resources()).resources
            return [str(r.uri) for r in listed], {g.uri: (await client.read_resource(g.uri)).contents[0].text
                                                  for g in GUIDES}
    uris, texts = anyio.run(go)
    assert uris == [g.uri for g in GUIDES]
    assert texts == {g.uri: guide_text(service, g.name) for g in GUIDES}
