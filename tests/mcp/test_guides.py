"""The guides a model reads beside the listing (issue 32, item 2): the event grammar and the
candidate shape, served as MCP resources, made from the tables and schemas, each with a worked
example the part accepts. Over stdio in a real process (extended) and in-process here; over HTTP
in tests/http/test_guides_http.py: one server class answers all three."""
from __future__ import annotations

import json
import subprocess
import sys

import anyio
import pytest
from mcp import Client

from groundrules import Caller, Service
from groundrules.core import canonical
from groundrules.evidence.fold import tables
from groundrules.guides import GUIDES, MIME, guide_text
from groundrules.transports.mcp_tools import ToolServer

AGENT = Caller("a", "agent", ("p",))
SERVICE = Service()


def _read_all(server) -> tuple[list, dict]:
    async def go():
        async with Client(server, raise_exceptions=True) as client:
            listed = (await client.list_resources()).resources
            read = {str(r.uri): (await client.read_resource(r.uri)).contents[0] for r in listed}
            return listed, read
    return anyio.run(go)


def test_each_guide_is_listed_and_read_as_the_service_builds_it():
    listed, read = _read_all(ToolServer(SERVICE, lambda: AGENT))
    assert [r.name for r in listed] == [g.name for g in GUIDES]
    for guide in GUIDES:
        content = read[guide.uri]
        assert content.mime_type == MIME
        assert content.text == guide_text(SERVICE, guide.name) == canonical.dumps(guide.build(SERVICE), indent=None)


def test_the_event_grammar_is_the_event_catalogues():
    grammar = json.loads(guide_text(SERVICE, "event-grammar"))
    catalogue = tables(SERVICE.book)[0]
    assert list(grammar["records"]) == list(catalogue.records)
    assert list(grammar["events"]) == list(catalogue.events)
    for name, event in catalogue.events.items():
        assert grammar["events"][name]["requires"] == list(event.requires)
        assert grammar["events"][name]["forbids"] == list(event.forbids)
    assert grammar["interpretation"]["required"] == ["id", "events", "dispositions"]


@pytest.mark.parametrize("name", [g.name for g in GUIDES])
def test_each_worked_example_is_accepted_by_its_tool(name):
    example = json.loads(guide_text(SERVICE, name))["example"]
    envelope = SERVICE.call(example["tool"], example["arguments"], AGENT)
    assert envelope["ok"], envelope["error"]
    if example["tool"] == "fold_evidence":
        assert envelope["data"]["state"]["scopes"], envelope["data"]


@pytest.mark.extended
def test_a_real_stdio_server_lists_and_reads_the_guides(tmp_path):
    """`groundrules serve` over stdio, spoken to line by line: resources/list, then resources/read."""
    proc = subprocess.Popen([sys.executable, "-m", "groundrules.cli.main", "serve", "--db", str(tmp_path / "l.db"),
                             "--project", "p1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=(tmp_path / "err.log").open("ab"))
    try:
        def ask(n: int, method: str, params: dict) -> dict:
            proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": n, "method": method, "params": params}) + "\n").encode())
            proc.stdin.flush()
            return json.loads(proc.stdout.readline())
        ask(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "t", "version": "1"}})
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        listed = ask(1, "resources/list", {})["result"]["resources"]
        assert [r["uri"] for r in listed] == [g.uri for g in GUIDES]
        for n, guide in enumerate(GUIDES, 2):
            contents = ask(n, "resources/read", {"uri": guide.uri})["result"]["contents"]
            assert contents[0]["text"] == guide_text(SERVICE, guide.name)
        assert ask(9, "resources/read", {"uri": "groundrules://guide/none"})["error"]["code"] == -32002
    finally:
        proc.stdin.close()
        proc.wait(30)
