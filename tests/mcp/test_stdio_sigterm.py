"""SIGTERM on `groundrules serve` over stdio: the calls running are answered, then the server exits
0 and its ledgers (and a decision log) are closed; a real process, so extended."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import pytest

pytestmark = pytest.mark.extended


def test_sigterm_answers_the_calls_running_and_exits_0(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "groundrules.cli.main", "serve", "--db", str(tmp_path / "l.db"),
                             "--project", "p1", "--toolsets", "all"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=(tmp_path / "err.log").open("ab"))

    def send(message: dict) -> None:
        proc.stdin.write((json.dumps(message, ensure_ascii=False) + "\n").encode())
        proc.stdin.flush()
    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    assert json.loads(proc.stdout.readline())["id"] == 0
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    content = "，".join(f"备用电话 1380013{i:04d}" for i in range(3000))
    fold = {"records": [{"id": "m1", "type": "message", "role": "user", "state": "sent", "content": content,
                         "observed_at": "2024-05-01T10:00:00+08:00"}], "interpretations": [],
            "now": "2024-05-02T10:00:00+08:00"}
    for n in (1, 2):
        send({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "fold_evidence", "arguments": fold}})
    send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "log_finding", "arguments": {
        "claim_kind": "diagnosis", "statement": "批量为 32 时显存溢出", "retrieval_policy": "relevant"}}})
    lines: list = []
    reading = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)   # answers are large
    reading.start()
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)                      # stdin stays open: the signal alone stops it
    assert proc.wait(60) == 0, (tmp_path / "err.log").read_text("utf-8")[-2000:]
    reading.join(30)
    assert {json.loads(line)["id"] for line in lines if line.strip()} == {1, 2, 3}
