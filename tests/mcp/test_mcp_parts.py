"""Every part's tool on the one MCP server, driven through the `mcp` client in-process."""
from __future__ import annotations

import json
from pathlib import Path

import anyio
import jsonschema
import pytest
from mcp import Client

from groundrules import Caller, FindingLedger, Service, explain, fold, load_rulebook, lock, verify
from groundrules.findings import SequentialIds, StepClock
from groundrules.transports.mcp_tools import ToolServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "schemas" / "examples"
PART_TOOLS = {"explain_support", "lock_message", "fold_evidence", "verify_extraction"}


def example(part: str, name: str):
    return json.loads((EXAMPLES / part / f"{name}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def book():
    return load_rulebook(ROOT)


@pytest.fixture
def server(book, tmp_path):
    ledger = FindingLedger(tmp_path / "l.db", rulebook=book, clock=StepClock(), ids=SequentialIds())
    yield ToolServer(Service(book, findings=ledger), lambda: Caller("agent-1", "agent", ("p1",)))
    ledger.close()


def call_all(server, calls):
    async def go():
        async with Client(server, raise_exceptions=True) as client:
            tools = (await client.list_tools()).tools
            return tools, [await client.call_tool(name, args) for name, args in calls]
    return anyio.run(go)


def test_every_part_is_listed_with_schemas(server):
    tools, _ = call_all(server, [])
    by_name = {t.name: t for t in tools}
    assert PART_TOOLS <= set(by_name)
    for name in PART_TOOLS:
        assert by_name[name].description and by_name[name].input_schema["type"] == "object"
        assert by_name[name].output_schema["required"] == ["ok", "data", "warnings", "error", "rulebook"]


def test_each_part_answers_what_the_library_answers(server, book):
    ctx = example("support_reason", "cq-shenlun-partial")
    message = {"id": "m1", "role": "user", "content": "不方便接电话，微信 wx_wang01"}
    payload = example("fold", "seed_region-read_as_correct")
    verified = example("verify", "end_time_only")
    _, (explained, locked, folded, ok) = call_all(server, [
        ("explain_support", {"context": ctx}), ("lock_message", {"message": message}),
        ("fold_evidence", payload), ("verify_extraction", verified)])
    for result in (explained, locked, folded, ok):
        assert result.is_error is False and result.structured_content["rulebook"] == book.version
    assert explained.structured_content["data"] == explain(ctx, book)
    assert locked.structured_content["data"] == {"locks": lock(message, book)}
    assert [x["kind"] for x in locked.structured_content["data"]["locks"]] == ["wechat"]
    assert folded.structured_content["data"] == fold(payload, book)
    report = verify(verified["request"], verified["instance"] if "instance" in verified else verified["schema"],
                    verified["candidate"], book)
    assert ok.structured_content == {"ok": report["ok"], "data": report["data"], "warnings": report["warnings"],
                                     "error": report["error"], "rulebook": book.version}


def test_listed_output_schema_holds_the_envelope_and_carries_each_data_contract(server, book):
    """An MCP client validates every result against the listed output schema, so the listing
    states the envelope (what every answer must be) and hands the data's contract along under
    $defs/data; the server's answers hold to the whole contract (output_contract)."""
    ctx = example("support_reason", "cq-shenlun-partial")
    tools, (explained,) = call_all(server, [("explain_support", {"context": ctx})])
    service = Service(book)
    for listed in tools:
        listing = service.listing(listed.name)
        assert listed.output_schema == listing.output_schema
        assert listed.output_schema["$defs"]["data"] == listing.output_contract["properties"]["data"]["anyOf"][1]
    envelope = explained.structured_content
    listing = service.listing("explain_support")
    jsonschema.validate(envelope, listing.output_schema)
    jsonschema.validate(envelope, listing.output_contract)
    broken = dict(envelope, data=dict(envelope["data"], reasons="not a list"))
    jsonschema.validate(broken, listing.output_schema)           # a client checks only the envelope
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, listing.output_contract)
    with pytest.raises(jsonschema.ValidationError):              # ... but the envelope it does check
        jsonschema.validate(dict(envelope, ok="yes"), listing.output_schema)


def test_refusals_are_error_results_carrying_the_envelope(server):
    _, results = call_all(server, [
        ("lock_message", {"message": {"id": "m1", "role": "robot", "content": "x"}}),
        ("lock_message", {"msg": {}}),
        ("fold_evidence", {"now": "2024-05-31T25:00:00+08:00", "records": [], "interpretations": []}),
        ("verify_extraction", example("verify", "start_time_missing")),
        ("verify_extraction", {"request": {}}),
    ])
    assert [r.is_error for r in results] == [True] * 5
    codes = [r.structured_content["error"]["code"] for r in results]
    assert codes[:3] == ["INVALID_MESSAGE", "INVALID_ARGUMENT", "PAYLOAD_INVALID"]   # a part's own code for
    assert [r.structured_content["error"]["field"] for r in results[:2]] == ["role", "(arguments)"]  # what it reads
    assert codes[3] == "DATA_EXTRACTION_FAILED"
    assert results[3].structured_content["error"]["partialResult"]["data"] == {}
    assert codes[4] == "INVALID_ARGUMENT"
    for r in results:
        assert json.loads(r.content[0].text) == r.structured_content


@pytest.mark.parametrize("run", [lambda *_: float("nan"), lambda *_: 1 / 0], ids=["unsendable answer", "a bug"])
def test_a_tool_that_fails_inside_still_answers_an_envelope(server, monkeypatch, run):
    from groundrules import api
    monkeypatch.setitem(api.TOOLS, "explain_support", api.Tool("explain_support", "", run))
    context = json.loads((ROOT / "schemas" / "examples" / "support_reason" / "cq-shenlun-partial.json").read_text("utf-8"))
    _, (result,) = call_all(server, [("explain_support", {"context": context})])
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == "INTERNAL_ERROR"
    assert "nan" not in result.content[0].text.lower() and "division" not in result.content[0].text
