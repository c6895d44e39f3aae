"""Faults: a writer killed mid-stream, two processes racing on one finding, a failure inside supersede.

Each test is bounded (a few seconds): subprocesses are killed by id, never by name.
"""
from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from findings_support import COUNTER, EXPERIMENT, TABLES, counts, finding, ok, open_client, refused
from groundrules.findings import SequentialIds, StepClock
from groundrules.store.findings_sqlite import SqliteFindingStore

PRELUDE = textwrap.dedent(f"""
    import json, sys
    from pathlib import Path
    from groundrules import Caller, FindingLedger, Service, load_rulebook
    TABLES = [Path(p) for p in {json.dumps([str(t) for t in TABLES])}]
    book = load_rulebook(Path(TABLES[0]).parents[1], TABLES)
    service = Service(book, findings=FindingLedger(sys.argv[1], rulebook=book))
    caller = Caller("racer", "agent", ("p1",))
""")

WRITER = PRELUDE + textwrap.dedent("""
    n = 0
    while True:
        n += 1
        env = service.call("log_finding", {
            "claim_kind": "observation", "statement": f"第 {n} 次测量的温度漂移", "tags": ["fault"],
            "evidence": [
                {"source_kind": "experiment_run", "source_ref": f"run:{n}", "excerpt": "漂移 0.3", "relation": "supports",
                 "method": "experiment"},
                {"source_kind": "log", "source_ref": f"log:{n}", "excerpt": "温度 81℃", "relation": "supports",
                 "method": "log_inspection"}]}, caller)
        assert env["ok"], env
        print(env["data"]["finding_id"], flush=True)
""")

RACER = PRELUDE + textwrap.dedent("""
    finding_id, target = sys.argv[2], sys.argv[3]
    print("ready", flush=True)
    sys.stdin.readline()
    env = service.call("set_finding_state", {"finding_id": finding_id, "epistemic_state": target, "reason": target,
                                             "expected_version": 1}, caller)
    print(json.dumps({"ok": env["ok"], "code": env["error"] and env["error"]["code"]}), flush=True)
""")


def _spawn(script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_a_killed_writer_leaves_no_half_written_finding_and_loses_no_acknowledged_one_sqlite_file_check(sqlite_db):
    db = sqlite_db
    SqliteFindingStore(db).close()   # migrate before the writer starts, so the kill lands among log_finding calls
    writer = _spawn(WRITER, str(db))
    acknowledged = []
    try:
        while len(acknowledged) < 40:
            line = writer.stdout.readline()
            assert line, writer.stderr.read()
            acknowledged.append(line.strip())
        writer.send_signal(signal.SIGKILL)
    finally:
        writer.kill()
        writer.wait(timeout=10)
    # what the writer printed before it died was acknowledged too, read or not
    acknowledged += [line.strip() for line in writer.stdout.read().splitlines() if line.strip()]
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    ids = {row[0] for row in conn.execute("SELECT id FROM findings")}
    assert set(acknowledged) <= ids
    assert len(ids) <= len(acknowledged) + 1      # at most the one committed but not yet printed
    for seq, in conn.execute("SELECT seq FROM findings"):
        assert conn.execute("SELECT COUNT(*) FROM finding_evidence WHERE finding_seq = ?", (seq,)).fetchone() == (2,)
        assert conn.execute("SELECT COUNT(*) FROM finding_events WHERE finding_seq = ? AND kind = 'created'",
                            (seq,)).fetchone() == (1,)
        assert conn.execute("SELECT COUNT(*) FROM finding_tags WHERE finding_seq = ?", (seq,)).fetchone() == (1,)
    assert conn.execute("SELECT COUNT(*) FROM evidence").fetchone() == (2 * len(ids),)
    assert conn.execute("SELECT COUNT(*) FROM findings_search WHERE findings_search MATCH '\"漂移\"'").fetchone() == (
        len(ids),)
    conn.close()


def test_two_processes_racing_on_one_finding_one_wins(make_ledger, db):
    ledger = make_ledger("p1")
    fid = ok(ledger.call("log_finding", finding(evidence=[EXPERIMENT, COUNTER])))["finding_id"]
    racers = [_spawn(RACER, str(db), fid, target) for target in ("supported", "contested")]
    try:
        for racer in racers:
            assert racer.stdout.readline().strip() == "ready", racer.stderr.read()
        for racer in racers:
            racer.stdin.write("go\n")
            racer.stdin.flush()
        results = [json.loads(racer.stdout.readline()) for racer in racers]
    finally:
        for racer in racers:
            racer.kill()
            racer.wait(timeout=10)
    assert sorted((r["ok"], r["code"] or "") for r in results) == [(False, "CONCURRENT_MODIFICATION"), (True, "")]
    got = ok(ledger.call("get_finding", {"finding_id": fid}))
    winner = ["supported", "contested"][[r["ok"] for r in results].index(True)]
    assert (got["finding"]["epistemic_state"], got["finding"]["version"]) == (winner, 2)
    assert [e["kind"] for e in got["events"]] == ["created", "state_changed"]


@pytest.mark.parametrize("step", [
    "BEFORE INSERT ON finding_relations",                                      # after the new finding is written
    "BEFORE UPDATE OF lifecycle_state ON findings",                           # the last step: closing the old one
    "BEFORE INSERT ON finding_events WHEN NEW.kind = 'superseded'",           # the old one's event
])
def test_a_failure_inside_supersede_leaves_nothing_sqlite_temp_trigger(book, sqlite_db, step):
    db = sqlite_db

    def inject(conn: sqlite3.Connection) -> None:
        conn.execute(f"CREATE TEMP TRIGGER injected {step} BEGIN SELECT RAISE(ABORT, 'injected'); END")
    setup = open_client(db, "p1", rulebook=book, clock=StepClock(), ids=SequentialIds())
    old = ok(setup.call("log_finding", finding()))["finding_id"]
    before = counts(setup)
    failing = open_client(SqliteFindingStore(db, on_connect=inject), "p1", rulebook=book, clock=StepClock(),
                     ids=SequentialIds(start=500))
    refused(failing.call("supersede_finding", {"finding_id": old, "reason": "r", "expected_version": 1,
                                               "new": finding(statement="新的主张", evidence=[EXPERIMENT])}),
            "STORAGE_ERROR")
    assert counts(setup) == before
    view = ok(setup.call("get_finding", {"finding_id": old}))
    assert (view["finding"]["lifecycle_state"], view["finding"]["version"], view["relations"]) == ("active", 1, [])
    assert ok(setup.call("query_findings", {"keyword": "新的主张"}))["findings"] == []
    failing.close()
    setup.close()
