"""`groundrules serve --http`: the real command in its own process; SIGHUP re-reads the tokens file."""
from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

import httpx2
import pytest

from groundrules.cli.main import main
from http_support import tool_names, write_tokens
from said import words

START_S = 120          # a loaded CI machine may take long to import and start; no timing is asserted


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status(url: str, token: str) -> int:
    return httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                       headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
                                "MCP-Protocol-Version": "2025-11-25"}).status_code


def wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + START_S
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except httpx2.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def served(tmp_path):
    tokens = write_tokens(tmp_path / "tokens.yaml", {"tok-a": ("agent-a", "agent", ["alpha"])})
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "groundrules.cli.main", "serve", "--http", f"127.0.0.1:{port}",
                             "--db", str(tmp_path / "ledger.db"), "--tokens", str(tokens)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_for(lambda: proc.poll() is not None or status(url, "nobody") == 401, "the server")
        assert proc.poll() is None, proc.communicate()[1]
        yield url, tokens, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.wait(60)


@pytest.mark.extended
def test_sighup_rereads_the_tokens_file_and_a_bad_file_keeps_the_grants(served):
    url, tokens, proc = served
    assert "log_finding" in tool_names(url, "tok-a")
    write_tokens(tokens, {"tok-b": ("user:bob", "reviewer", ["alpha"])})
    proc.send_signal(signal.SIGHUP)
    wait_for(lambda: status(url, "tok-a") == 401, "tok-a to be revoked")
    assert "approve_rule" in tool_names(url, "tok-b")
    tokens.write_text("tokens:\n  - sha256: not-a-digest\n", encoding="utf-8")
    proc.send_signal(signal.SIGHUP)
    time.sleep(1)
    assert proc.poll() is None and status(url, "tok-a") == 401
    assert "approve_rule" in tool_names(url, "tok-b")            # the grants in force before the bad file
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert f"{tokens}:2:5" in err and all(w in err for w in words("tokens.key_missing")) \
        and "the previous ones stay in force" in err


def test_a_bad_tokens_file_stops_the_start_with_one_line(tmp_path, capsys):
    tokens = tmp_path / "tokens.yaml"
    tokens.write_text("tokens:\n  - sha256: abc\n    principal: a\n    role: agent\n    projects: [p]\n")
    code = main(["serve", "--http", "127.0.0.1:1", "--db", str(tmp_path / "l.db"), "--tokens", str(tokens)])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and f"{tokens}:2:" in err


@pytest.mark.parametrize("argv, message", [
    (["--http", "127.0.0.1:1"], "usage.serve_http_needs_tokens"),
    (["--tokens", "t.yaml"], "usage.serve_http_only"),
    (["--http", "localhost"], "usage.serve_http_address"),
    (["--http", "0.0.0.0:1", "--tokens", "TOKENS"], "usage.not_loopback"),
])
@pytest.mark.parametrize("lang", [None, "en"])
def test_serve_usage_errors(tmp_path, capsys, argv, message, lang):
    tokens = write_tokens(tmp_path / "tokens.yaml", {"tok-a": ("agent-a", "agent", ["alpha"])})
    argv = [str(tokens) if a == "TOKENS" else a for a in argv]
    assert main([*(["--lang", lang] if lang else []), "serve", "--db", str(tmp_path / "l.db"), *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("groundrules serve: USAGE: ") and all(w in err for w in words(message, lang))


@pytest.mark.extended
def test_sighup_puts_an_edited_table_and_a_new_token_live_with_no_call_failing(tmp_path):
    """Issue 20, item 4: a table edited under a running server decides once SIGHUP reloads it; calls
    running meanwhile all answer; a token added with `groundrules tokens add` is taken up too."""
    import json
    import shutil
    import threading
    from pathlib import Path

    from cli_inproc import run_cli
    from wire import Wire, envelope
    root = Path(__file__).resolve().parents[2]
    rules = tmp_path / "tables"
    for name in ("rules", "locks", "schemas"):
        shutil.copytree(root / name, rules / name)
    tokens = write_tokens(tmp_path / "tokens.yaml", {"tok-a": ("agent-a", "agent", ["alpha"])})
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "groundrules.cli.main", "--rules", str(rules), "serve", "--http",
                             f"127.0.0.1:{port}", "--db", str(tmp_path / "ledger.db"), "--tokens", str(tokens),
                             "--log-format", "json"], stdout=subprocess.DEVNULL,
                            stderr=(tmp_path / "server.log").open("ab"))
    url = f"http://127.0.0.1:{port}/mcp"
    context = json.loads((root / "schemas/examples/support_reason/cq-shenlun-partial.json").read_text("utf-8"))
    try:
        wait_for(lambda: proc.poll() is not None or status(url, "nobody") == 401, "the server")
        wire = Wire(url, "tok-a")
        before = envelope(wire.call(None, "explain_support", {"context": context}))
        failures: list = []
        stop = threading.Event()

        def hammer() -> None:
            mine = Wire(url, "tok-a")
            while not stop.is_set():
                answer = envelope(mine.call(None, "explain_support", {"context": context}))
                if not answer["ok"]:
                    failures.append(answer)
        threads = [threading.Thread(target=hammer) for _ in range(3)]
        for thread in threads:
            thread.start()
        table = rules / "rules" / "support_reason.yaml"
        label = before["data"]["primary_label"]
        table.write_text(table.read_text("utf-8").replace(label, label + "（已改）", 1), encoding="utf-8")
        added = run_cli("--rules", rules, "tokens", "add", "--principal", "agent-b", "--role", "agent",
                        "--projects", "alpha", "--file", tokens)
        new_token = added.stdout.decode().strip()
        proc.send_signal(signal.SIGHUP)
        wait_for(lambda: envelope(wire.call(None, "explain_support", {"context": context}))["data"]["primary_label"]
                 == label + "（已改）", "the edited table to decide")
        stop.set()
        for thread in threads:
            thread.join(60)
        assert failures == []
        after = envelope(Wire(url, new_token).call(None, "explain_support", {"context": context}))
        assert after["ok"] and after["rulebook"] != before["rulebook"]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    err = (tmp_path / "server.log").read_text("utf-8")
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    started = next(line for line in lines if line["message"] == "groundrules serving")
    assert started["pid"] == proc.pid and started["rulebook"] == before["rulebook"]
    assert started["address"] == url and started["stores"] == {"findings": "sqlite", "evidence": "sqlite"}
    assert any(line["message"] == "rule tables reloaded" and line["rulebook"] == after["rulebook"] for line in lines)


def test_a_busy_port_is_an_error_and_nothing_says_serving(tmp_path, capsys):
    """The port is bound before the server logs that it serves (issue 32, item 5): a port in use
    stops the start with one line naming it, exit 1, and no "serving" line."""
    tokens = write_tokens(tmp_path / "tokens.yaml", {"tok-a": ("agent-a", "agent", ["alpha"])})
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = main(["serve", "--http", f"127.0.0.1:{port}", "--db", str(tmp_path / "l.db"), "--tokens", str(tokens)])
    err = capsys.readouterr().err
    assert code == 1 and f"127.0.0.1:{port}" in err and "serving" not in err
