"""Issue 13, items 6 and 8: every hostile line sent to a real `groundrules serve` is answered, and
the server keeps serving. The corpus is tests/cases/hostile/stdio_messages.jsonl: each entry is a
line (base64, so invalid UTF-8 survives) or a head + repeated body + tail, and what must answer it:
a JSON-RPC error code, "envelope:CODE" (a tool result whose envelope refuses with CODE), 0 (a
normal result) or null (a response sent to the server, which JSON-RPC says is not answered)."""
from __future__ import annotations

import base64
import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

# real processes per case (a stdio server, host processes): run after the default suite
pytestmark = pytest.mark.extended

CORPUS = Path(__file__).resolve().parents[1] / "cases" / "hostile" / "stdio_messages.jsonl"
ENTRIES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
ANSWER_CHARS = 4000       # no answer to a hostile line echoes it back at length


def raw(entry: dict) -> bytes:
    if "line_b64" in entry:
        return base64.b64decode(entry["line_b64"])
    body = "".join(text * times for text, times in entry["repeat"])
    return (entry.get("head", "") + body + entry.get("tail", "")).encode("utf-8")


class Server:
    def __init__(self, db: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "groundrules.cli.main", "serve", "--db", str(db),
                                      "--project", "p1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, line: bytes) -> None:
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def until(self, probe_id: str, timeout: float = 60) -> list[tuple[bytes, dict]]:
        """Every frame up to and including the answer to `probe_id`."""
        frames = []
        while True:
            line = self.lines.get(timeout=timeout)
            assert line is not None, self.proc.stderr.read().decode()[-3000:]
            frame = json.loads(line)
            frames.append((line, frame))
            if frame.get("id") == probe_id:
                return frames

    def close(self) -> str:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        return self.proc.stderr.read().decode("utf-8", "replace")


def ping(probe_id: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": probe_id, "method": "ping"}).encode()


def initialized(server: Server) -> Server:
    server.send(json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}})
        .encode())
    assert "result" in server.until("init")[-1][1]
    server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    return server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = initialized(Server(tmp_path_factory.mktemp("stdio") / "ledger.db"))
    yield server
    stderr = server.close()
    assert "Traceback" not in stderr, stderr[-3000:]


def matches(expect, frame: dict) -> bool:
    if isinstance(expect, int) and expect != 0:
        return frame.get("error", {}).get("code") == expect
    if expect == 0:
        return "result" in frame
    code = expect.split(":", 1)[1]
    return frame.get("result", {}).get("structuredContent", {}).get("error", {}).get("code") == code


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_every_hostile_line_is_answered_and_the_server_keeps_serving(server, entry):
    probe = f"probe-{entry['name']}"
    server.send(raw(entry))
    server.send(ping(probe))
    frames = server.until(probe)
    assert "result" in frames[-1][1]                         # still serving
    answered = frames[:-1]
    if entry["expect"] is None:
        assert [frame for _, frame in answered] == []
        return
    if not answered:      # JSON-RPC answers in any order: a slow refusal may follow the probe's answer
        line = server.lines.get(timeout=60)
        assert line is not None, server.proc.stderr.read().decode()[-3000:]
        answered = [(line, json.loads(line))]
    assert len(answered) == 1, answered
    line, answer = answered[0]
    assert matches(entry["expect"], answer), (entry["expect"], answer)
    assert len(line) <= ANSWER_CHARS, line[:200]


def test_the_corpus_holds_the_attacks_the_issue_lists():
    names = {e["name"] for e in ENTRIES}
    assert len(ENTRIES) >= 53
    for needed in ("not json", "lone high surrogate escape", "raw control char in a string", "5000-digit integer",
                   "nesting 200", "batch", "empty line", "object id", "huge id", "invalid utf-8"):
        assert needed in names


def test_another_projects_finding_id_answers_like_an_unknown_one_over_stdio(tmp_path):
    from groundrules import FindingLedger
    from groundrules.core import rulebook
    from groundrules.api import Caller, Service
    db = tmp_path / "ledger.db"
    ledger = FindingLedger(db, rulebook=rulebook.default())
    logged = Service(ledger.book, findings=ledger).call("log_finding", {
        "claim_kind": "diagnosis", "statement": "别的项目的结论"}, Caller("other", "agent", ("other",)))
    ledger.close()
    theirs = logged["data"]["finding_id"]
    unknown = theirs[:-1] + ("0" if theirs[-1] != "0" else "1")
    server = initialized(Server(db))
    try:
        answers = []
        for i, fid in enumerate((theirs, unknown)):
            server.send(json.dumps({"jsonrpc": "2.0", "id": f"get-{i}", "method": "tools/call", "params": {
                "name": "get_finding", "arguments": {"finding_id": fid}}}).encode())
            frame = server.until(f"get-{i}")[-1][1]
            error = frame["result"]["structuredContent"]["error"]
            answers.append({k: v.replace(fid, "ID") if isinstance(v, str) else v for k, v in error.items()})
        assert answers[0] == answers[1] and answers[0]["code"] == "NOT_FOUND"
    finally:
        assert "Traceback" not in server.close()
