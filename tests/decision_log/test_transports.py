"""Logging through every transport records the same decision: the same calls made through the
library (`Service.call`), the CLI (`groundrules call … --log-decisions`, in process), MCP over real
stdio (`groundrules serve --log-decisions`) and MCP over HTTP (a real server on loopback, the
caller its token's principal) leave decisions that differ in nothing but id, time and duration,
on SQLite and on PostgreSQL (a database per transport, and per CLI command: each is a process of
its own, numbering its ids from the same start)."""
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
from groundrules.decision_log.crypto import key_from_file
from groundrules.decision_log.log import DecisionLog
from groundrules.findings import SequentialIds, StepClock
from groundrules.store.keystore import SqliteKeyStore

from decision_support import KEY_MATERIAL

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


def logged(db, key_file: Path, rulebook) -> list[dict]:
    log = DecisionLog(db, key=key_from_file(key_file), data_keys=SqliteKeyStore(key_file.parent / "keys"),
                      rulebook=rulebook, purge_every_s=None)
    try:
        return [log.view(row, reveal=True) for row in log.rows()]
    finally:
        log.close()


def logged_service(folder: Path, db, rulebook) -> tuple[Service, DecisionLog]:
    """Both ledgers and a decision log on `db`, with the clock and ids every transport here shares."""
    clock, ids = StepClock(CLOCK), SequentialIds(start=IDS)
    keys = SqliteKeyStore(folder / "keys")
    log = DecisionLog(db, key=key_from_file(folder / "key"), data_keys=keys, rulebook=rulebook,
                      ids=SequentialIds(start=IDS), clock=StepClock(CLOCK))
    service = Service(rulebook, findings=FindingLedger(db, rulebook=rulebook, clock=clock, ids=ids),
                      evidence=EvidenceLedger(db, clock=clock, ids=lambda: ids.new("R"), rulebook=rulebook, keys=keys),
                      decisions=log)
    return service, log


def by_library(folder: Path, db, rulebook) -> list[dict]:
    service, log = logged_service(folder, db, rulebook)
    caller = Caller(PRINCIPAL, "agent", (PROJECT,))
    out = [service.call(tool, arguments, caller) for tool, arguments in CALLS]
    for part in (log, service.findings, service.evidence):
        part.close()
    return out


def options(folder: Path, db) -> list[str]:
    return ["--db", str(db), "--project", PROJECT, "--operator", PRINCIPAL, "--role", "agent",
            "--step-clock", CLOCK, "--sequential-ids", str(IDS), "--log-decisions", "--decision-key", str(folder / "key"),
            "--key-store", str(folder / "keys")]


def by_cli(folder: Path, dbs: list, capsys) -> list[dict]:
    out = []
    for n, (tool, arguments) in enumerate(CALLS):
        one = folder / str(n)                      # each command is a process of its own: a database each
        (one / "key").write_bytes(KEY_MATERIAL)
        path = one / "arguments.json"
        path.write_text(json.dumps(arguments, ensure_ascii=False), encoding="utf-8")
        main(["call", tool, str(path), *options(one, dbs[n])])
        out.append(json.loads(capsys.readouterr().out))
    return out


def by_stdio(folder: Path, db) -> list[dict]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "groundrules.cli.main", "serve", *options(folder, db)],
                                   env=dict(os.environ))

    async def go():
        with anyio.fail_after(120):
            async with Client(params) as client:
                return [(await client.call_tool(tool, arguments)).structured_content for tool, arguments in CALLS]
    return anyio.run(go)


def by_http(folder: Path, db, rulebook) -> list[dict]:
    service, log = logged_service(folder, db, rulebook)
    tokens = write_tokens(folder / "tokens.yaml", {"tok-a": (PRINCIPAL, "agent", [PROJECT])})
    with running(service, tokens) as url:
        out = agent_calls(url, "tok-a", CALLS)
    for part in (log, service.findings, service.evidence):
        part.close()
    return out


@pytest.mark.extended          # a real `groundrules serve` process
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_every_transport_records_the_same_decision(backend, rulebook, tmp_path, capsys, request):
    cluster = request.getfixturevalue("pg_cluster") if backend == "postgres" else None

    def database(folder: Path):
        folder.mkdir(parents=True)
        (folder / "key").write_bytes(KEY_MATERIAL)
        if cluster is None:
            return folder / "ledger.db"
        name = cluster.fresh_database()
        request.addfinalizer(lambda: cluster.drop(name))
        return cluster.uri(name)
    folders = {name: tmp_path / name for name in ("library", "cli", "stdio", "http")}
    dbs = {name: database(folders[name]) for name in ("library", "stdio", "http")}
    dbs["cli"] = [database(folders["cli"] / str(n)) for n in range(len(CALLS))]
    envelopes = {"library": by_library(folders["library"], dbs["library"], rulebook),
                 "cli": by_cli(folders["cli"], dbs["cli"], capsys),
                 "stdio": by_stdio(folders["stdio"], dbs["stdio"]), "http": by_http(folders["http"], dbs["http"], rulebook)}
    decisions = {name: logged(dbs[name], folders[name] / "key", rulebook) for name in ("library", "stdio", "http")}
    decisions["cli"] = [logged(dbs["cli"][n], folders["cli"] / str(n) / "key", rulebook)[0]
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
