"""Logging through every transport records the same decision: the same calls made through the
library (`Service.call`), the CLI (`groundrules call … --log-decisions`, in process), MCP over real
stdio (`groundrules serve --log-decisions`) and MCP over HTTP (a real server on loopback, the
caller its token's principal) leave decisions that differ in nothing but id, time and duration."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from groundrules import Caller, EvidenceLedger, FindingLedger, Service
from groundrules.cli.main import main
from groundrules.decisions.crypto import key_from_file
from groundrules.decisions.log import DecisionLog
from groundrules.findings import SequentialIds, StepClock

from conftest import KEY_MATERIAL

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http"))
from http_support import agent_calls, running, write_tokens  # noqa: E402

PRINCIPAL, PROJECT, CLOCK, IDS = "agent-a", "p1", "2030-01-01T00:00:00Z", 1000
CALLS = [
    ("log_finding", {"claim_kind": "diagnosis", "statement": "温度漂移导致误差", "tags": ["gpu"],
                     "evidence": [{"source_kind": "log", "source_ref": "log:gpu", "excerpt": "温度升高后误差翻倍",
                                   "relation": "supports", "method": "log_inspection"}]}),
    ("lock_message", {"message": {"id": "m1", "role": "user", "content": "不方便接电话，微信 wx_wang01，手机 138 0000 1234"}}),
    ("explain_support", {"ctx": {}}),
    ("approve_rule", {"proposal_id": "RP-000001"}),
    ("read_decisions", {}),
]
SAME = ("principal", "role", "project", "tool", "rulebook", "ok", "error_code", "kept", "dropped", "arguments", "answer")


def logged(db: Path, key_file: Path, rulebook) -> list[dict]:
    log = DecisionLog(db, key=key_from_file(key_file), rulebook=rulebook, purge_every_s=None)
    try:
        return [log.view(row, reveal=True) for row in log.rows()]
    finally:
        log.close()


def by_library(folder: Path, rulebook) -> list[dict]:
    db = folder / "ledger.db"
    clock, ids = StepClock(CLOCK), SequentialIds(start=IDS)
    log = DecisionLog(db, key=key_from_file(folder / "key"), rulebook=rulebook, ids=SequentialIds(start=IDS),
                      clock=StepClock(CLOCK))
    service = Service(rulebook, findings=FindingLedger(db, rulebook=rulebook, clock=clock, ids=ids),
                      evidence=EvidenceLedger(db, clock=clock, ids=lambda: ids.new("R"), rulebook=rulebook), decisions=log)
    caller = Caller(PRINCIPAL, "agent", (PROJECT,))
    out = [service.call(tool, arguments, caller) for tool, arguments in CALLS]
    for part in (log, service.findings, service.evidence):
        part.close()
    return out


def options(folder: Path) -> list[str]:
    return ["--db", str(folder / "ledger.db"), "--project", PROJECT, "--operator", PRINCIPAL, "--role", "agent",
            "--step-clock", CLOCK, "--sequential-ids", str(IDS), "--log-decisions", "--decision-key", str(folder / "key")]


def by_cli(folder: Path, capsys) -> list[dict]:
    out = []
    for n, (tool, arguments) in enumerate(CALLS):
        one = folder / str(n)                      # each command is a process of its own: a database each
        one.mkdir()
        (one / "key").write_bytes(KEY_MATERIAL)
        path = one / "arguments.json"
        path.write_text(json.dumps(arguments, ensure_ascii=False), encoding="utf-8")
        main(["call", tool, str(path), *options(one)])
        out.append(json.loads(capsys.readouterr().out))
    return out


def by_stdio(folder: Path) -> list[dict]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "groundrules.cli.main", "serve", *options(folder)],
                                   env=dict(os.environ))

    async def go():
        with anyio.fail_after(120):
            async with Client(params) as client:
                return [(await client.call_tool(tool, arguments)).structured_content for tool, arguments in CALLS]
    return anyio.run(go)


def by_http(folder: Path, rulebook) -> list[dict]:
    db = folder / "ledger.db"
    clock, ids = StepClock(CLOCK), SequentialIds(start=IDS)
    log = DecisionLog(db, key=key_from_file(folder / "key"), rulebook=rulebook, ids=SequentialIds(start=IDS),
                      clock=StepClock(CLOCK))
    service = Service(rulebook, findings=FindingLedger(db, rulebook=rulebook, clock=clock, ids=ids),
                      evidence=EvidenceLedger(db, clock=clock, ids=lambda: ids.new("R"), rulebook=rulebook), decisions=log)
    tokens = write_tokens(folder / "tokens.yaml", {"tok-a": (PRINCIPAL, "agent", [PROJECT])})
    with running(service, tokens) as url:
        out = agent_calls(url, "tok-a", CALLS)
    for part in (log, service.findings, service.evidence):
        part.close()
    return out


@pytest.mark.extended          # a real `groundrules serve` process
def test_every_transport_records_the_same_decision(rulebook, tmp_path, capsys):
    folders = {}
    for name in ("library", "cli", "stdio", "http"):
        folders[name] = tmp_path / name
        folders[name].mkdir()
        (folders[name] / "key").write_bytes(KEY_MATERIAL)
    envelopes = {"library": by_library(folders["library"], rulebook), "cli": by_cli(folders["cli"], capsys),
                 "stdio": by_stdio(folders["stdio"]), "http": by_http(folders["http"], rulebook)}
    decisions = {name: logged(folders[name] / "ledger.db", folders[name] / "key", rulebook)
                 for name in ("library", "stdio", "http")}
    decisions["cli"] = [logged(folders["cli"] / str(n) / "ledger.db", folders["cli"] / str(n) / "key", rulebook)[0]
                        for n in range(len(CALLS))]
    library = decisions["library"]
    assert [d["tool"] for d in library] == [tool for tool, _ in CALLS]
    assert [d["ok"] for d in library] == [True, True, False, False, False]     # answers and refusals both
    for name, found in decisions.items():
        assert [e["decision"] for e in envelopes[name]] == [d["id"] for d in found]
        for mine, theirs in zip(library, found):
            assert {k: theirs[k] for k in SAME} == {k: mine[k] for k in SAME}, name
    # the logged answer is the envelope each transport sent, but for its decision id
    for name in envelopes:
        for envelope, decision in zip(envelopes[name], decisions[name]):
            assert decision["answer"] == {k: v for k, v in envelope.items() if k != "decision"}
    assert [d["id"] for d in decisions["stdio"]] == [d["id"] for d in library]
    assert [d["at"] for d in decisions["stdio"]] == [d["at"] for d in library]
