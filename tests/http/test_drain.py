"""SIGTERM on `groundrules serve --http` with calls in flight (issue 19, item 2): the server exits 0
within its grace period, and every write it committed was answered: a client is never told
"failed" (or nothing at all) for a write that happened. Real processes, so marked extended."""
from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import httpx2
import pytest

from test_serve_cli import free_port, status, wait_for
from http_support import write_tokens
from wire import Wire

pytestmark = pytest.mark.extended
GRACE_S = 3
ALPHA = "tok-a"


def start(tmp_path, *extra: str) -> tuple[subprocess.Popen, str]:
    """A real server whose sessions list every toolset (its calls fold and append from the start)."""
    tokens = write_tokens(tmp_path / "tokens.yaml", {ALPHA: ("agent-a", "agent", ["alpha"])})
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "groundrules.cli.main", "serve", "--http", f"127.0.0.1:{port}",
                             "--db", str(tmp_path / "ledger.db"), "--tokens", str(tokens), "--grace", str(GRACE_S),
                             "--toolsets", "all", *extra], stdout=subprocess.DEVNULL, stderr=(tmp_path / "server.log").open("ab"))
    url = f"http://127.0.0.1:{port}/mcp"
    wait_for(lambda: proc.poll() is not None or status(url, "nobody") == 401, "the server")
    assert proc.poll() is None, (tmp_path / "server.log").read_text("utf-8")
    return proc, url


def long_fold() -> dict:
    """A fold that takes a while: one long message full of numbers to lock."""
    content = "，".join(f"备用电话 1380013{i:04d}" for i in range(4000))
    return {"records": [{"id": "m1", "type": "message", "role": "user", "state": "sent", "content": content,
                         "observed_at": "2024-05-01T10:00:00+08:00"}],
            "interpretations": [], "now": "2024-05-02T10:00:00+08:00"}


def committed(tmp_path) -> set[str]:
    conn = sqlite3.connect(tmp_path / "ledger.db")
    try:
        return {row[0] for row in conn.execute("SELECT id FROM findings")}
    finally:
        conn.close()


@pytest.mark.parametrize("same_id", [False, True], ids=["unique ids", "one id for all"])
def test_sigterm_with_calls_in_flight_answers_every_commit_and_exits_in_time(tmp_path, same_id):
    proc, url = start(tmp_path)
    wire = Wire(url, ALPHA, timeout=60)
    session = wire.session()
    answers: list = []
    lock = threading.Lock()

    def fire(n: int, tool: str, arguments: dict) -> None:
        try:
            response = wire.call(session, tool, arguments, 1 if same_id else n)
            outcome = response.json()
        except (httpx2.TransportError, json.JSONDecodeError) as exc:
            outcome = {"transport": type(exc).__name__}
        with lock:
            answers.append((tool, outcome))

    threads = [threading.Thread(target=fire, args=(1000 + i, "fold_evidence", long_fold())) for i in range(3)]
    for i in range(40):
        threads.append(threading.Thread(target=fire, args=(i, "log_finding", {
            "claim_kind": "diagnosis", "statement": f"批量为 {i} 时显存溢出", "retrieval_policy": "relevant"})))
    for thread in threads[:3]:
        thread.start()
    for thread in threads[3:]:
        thread.start()
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    stopped = time.monotonic()
    code = proc.wait(GRACE_S + 30)
    took = time.monotonic() - stopped
    for thread in threads:
        thread.join(60)
    assert code == 0, (tmp_path / "server.log").read_text("utf-8")[-3000:]
    assert took < GRACE_S + 5, f"exit {took:.1f} s after SIGTERM"        # not a speed claim: it did not hang
    acknowledged = {a["result"]["structuredContent"]["data"]["finding_id"] for tool, a in answers
                    if tool == "log_finding" and "result" in a and a["result"]["structuredContent"]["ok"]}
    assert committed(tmp_path) == acknowledged                        # nothing committed unanswered
    assert len(answers) == 43                                          # every caller heard back (or was cut off)
    if same_id:
        assert any("error" in a and a["error"]["code"] == -32600 for _, a in answers)


def test_a_second_sigterm_stops_waiting_and_still_commits_nothing_unanswered(tmp_path):
    proc, url = start(tmp_path, "--grace", "60")
    wire = Wire(url, ALPHA, timeout=60)
    session = wire.session()
    results: list = []

    def fold(n: int) -> None:
        try:
            results.append(wire.call(session, "fold_evidence", long_fold(), n))
        except httpx2.TransportError as exc:
            results.append(exc)
    threads = [threading.Thread(target=fold, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)                                     # the second: do not wait 60 s
    stopped = time.monotonic()
    assert proc.wait(30) == 0
    assert time.monotonic() - stopped < 20
    for thread in threads:
        thread.join(60)
    assert committed(tmp_path) == set()


def test_sigterm_with_evidence_writes_sharing_one_request_id_on_a_session_answers_every_commit(tmp_path):
    """Issue 35, item 5: the drain with ledger writes whose calls share one JSON-RPC id on one
    session (the hang a past campaign found), and the evidence ledger's commits, not the finding
    ledger's: every record committed was acknowledged, and each caller heard back."""
    proc, url = start(tmp_path)
    wire = Wire(url, ALPHA, timeout=60)
    session = wire.session()
    answers: list = []
    lock = threading.Lock()

    def fire(n: int) -> None:
        record = {"id": f"m{n}", "type": "message", "role": "user", "state": "sent",
                  "content": f"第 {n} 条：微信 wx_drain{n:03d}"}
        try:
            outcome = wire.call(session, "append_evidence", {"record": record}, 7).json()
        except (httpx2.TransportError, json.JSONDecodeError) as exc:
            outcome = {"transport": type(exc).__name__}
        with lock:
            answers.append(outcome)

    threads = [threading.Thread(target=fire, args=(n,)) for n in range(40)]
    for thread in threads:
        thread.start()
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(GRACE_S + 30)
    for thread in threads:
        thread.join(60)
    assert code == 0, (tmp_path / "server.log").read_text("utf-8")[-3000:]
    acknowledged = {a["result"]["structuredContent"]["data"]["records"][0]["id"] for a in answers
                    if "result" in a and a["result"]["structuredContent"]["ok"]}
    conn = sqlite3.connect(tmp_path / "ledger.db")
    try:
        stored = {row[0] for row in conn.execute("SELECT id FROM ledger_records WHERE type = 'message'")}
    finally:
        conn.close()
    assert stored == acknowledged                                      # nothing committed unanswered
    assert len(answers) == 40 and acknowledged                        # every caller heard back; some got in
