"""Case corpus: each file under tests/cases/findings is a sequence of tool calls on a fresh ledger;
the whole group's answers (data, warnings, error; not the rulebook version) are pinned in one file."""
from __future__ import annotations

import json

from findings_support import ROOT, open_client
from groundrules import Caller
from groundrules.findings import SequentialIds, StepClock

CASES = ROOT / "tests" / "cases" / "findings"


def play(book, path, db) -> list:
    """Each step as the reviewer `tester`, or in the role a step names (as corpus_runs plays them)."""
    ledger = open_client(db, "p1", rulebook=book, clock=StepClock(), ids=SequentialIds())
    out = []
    for step in json.loads(path.read_text(encoding="utf-8")):
        caller = Caller(ledger.caller.principal, step.get("role", ledger.caller.role), ledger.caller.projects)
        env = ledger.service.call(step["tool"], step["args"], caller)
        out.append({"tool": step["tool"], "ok": env["ok"], "data": env["data"], "warnings": env["warnings"],
                    "error": env["error"]})
    ledger.close()
    return out


def test_case_corpus(book, tmp_path, snapshot_json):
    outputs = {path.stem: play(book, path, tmp_path / f"{path.stem}.db") for path in sorted(CASES.glob("*.json"))}
    assert outputs == snapshot_json
