"""Case corpus of tool calls: each file under tests/cases/calls is a sequence of calls, through the
registry (`Service.call`), on fresh ledgers (both in one file, as the CLI opens them) with an injected
clock and ids; each step names its role (default agent) and, as an MCP session would, the
toolsets it has enabled (default: none named, the library's answer to every tool the role may call). The answers of every file (data, warnings,
error; not the rulebook version) are pinned in one reviewed snapshot file.

A case states what a host relies on across tools (a redaction withdraws what cites the record, a
retry is answered as the first call was) where no single table's examples can."""
from __future__ import annotations

import json
from pathlib import Path

from groundrules import Caller, EvidenceLedger, FindingLedger, Service
from groundrules.findings import SequentialIds, StepClock

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases" / "calls"
PROJECT = "p1"


def play(book, path: Path, db: Path) -> list:
    clock, ids = StepClock(), SequentialIds()
    findings = FindingLedger(db, rulebook=book, clock=clock, ids=ids)
    evidence = EvidenceLedger(db, rulebook=book, clock=clock, ids=lambda: ids.new("R"))
    service = Service(book, findings=findings, evidence=evidence)
    out = []
    try:
        for step in json.loads(path.read_text(encoding="utf-8")):
            caller = Caller(f"{step.get('role', 'agent')}-1", step.get("role", "agent"), (PROJECT,))
            toolsets = step.get("toolsets")            # an MCP session's enabled toolsets; absent: the library's
            env = service.call(step["tool"], step["args"], caller,
                               toolsets=None if toolsets is None else frozenset(toolsets))
            out.append({"tool": step["tool"], "ok": env["ok"], "data": env["data"], "warnings": env["warnings"],
                        "error": env["error"]})
    finally:
        findings.close()
        evidence.close()
    return out


def test_call_corpus(rulebook, tmp_path, snapshot_json):
    paths = sorted(CASES.glob("*.json"))
    assert paths
    assert {p.stem: play(rulebook, p, tmp_path / f"{p.stem}.db") for p in paths} == snapshot_json
