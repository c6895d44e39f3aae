"""The shared server as a shared resource (issue 19): no caller can stall, starve or flood another,
and HTTP is held to the stdio rules. Each test reproduces one finding of the issue against a real
server on loopback (its settings made small so the limits are reached in a test's time)."""
from __future__ import annotations

import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from groundrules import Caller, EvidenceLedger, FindingLedger, Service
from groundrules.findings import RandomIds, SystemClock
from groundrules.transports.settings import ServerSettings
from http_support import CALLERS, HOST, running, write_tokens
from said import said
from wire import Wire, envelope, error_code

ALPHA, BETA = "tok-alpha", "tok-beta"
MESSAGE = {"id": "m1", "role": "user", "content": "手机 13800138000"}
CONTEXT = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "examples" / "support_reason"
                      / "cq-shenlun-partial.json").read_text(encoding="utf-8"))


class HeldService(Service):
    """The registry, with the calls `held(tool, caller)` picks stopped until `release` is set."""

    def __init__(self, *args, held=lambda tool, caller: False, **kwargs):
        super().__init__(*args, **kwargs)
        self.held, self.release, self.arrived = held, threading.Event(), threading.Semaphore(0)

    def call(self, tool, arguments, caller: Caller, **options) -> dict:
        if self.held(tool, caller):
            self.arrived.release()
            assert self.release.wait(60), "never released"
        return super().call(tool, arguments, caller, **options)

    def wait_arrived(self, n: int = 1) -> None:
        for _ in range(n):
            assert self.arrived.acquire(timeout=30), "a held call never arrived"


def serve(tmp_path: Path, rulebook, settings: ServerSettings, held=lambda tool, caller: False):
    ids = RandomIds()
    db = tmp_path / "ledger.db"
    service = HeldService(rulebook, findings=FindingLedger(db, rulebook=rulebook),
                          evidence=EvidenceLedger(db, ids=lambda: ids.new("R"), clock=SystemClock(), rulebook=rulebook),
                          held=held)
    return service, running(service, write_tokens(tmp_path / "tokens.yaml", CALLERS), settings)


# ------------------------------------------------------------------------------ sessions

def test_one_principal_holds_at_most_its_share_of_sessions_and_others_still_connect(tmp_path, rulebook):
    service, server = serve(tmp_path, rulebook, ServerSettings(sessions_per_principal=3, max_sessions=5))
    with server as url:
        alpha, beta = Wire(url, ALPHA), Wire(url, BETA)
        sessions = [alpha.session() for _ in range(3)]
        refused = alpha.open_session()
        assert refused.status_code == 429 and "mcp-session-id" not in refused.headers
        assert refused.json()["error"]["message"] == said("wire.sessions_full", sessions=3)   # the server's language
        assert beta.open_session().status_code == 200               # another principal is not locked out
        assert alpha.close(sessions[0]) in (200, 204)
        assert alpha.open_session().status_code == 200              # a closed session frees its place


def test_an_idle_session_is_closed_and_frees_its_place(tmp_path, rulebook):
    service, server = serve(tmp_path, rulebook, ServerSettings(sessions_per_principal=1, session_idle_s=0.3))
    with server as url:
        alpha = Wire(url, ALPHA)
        session = alpha.session()
        assert envelope(alpha.call(session, "lock_message", {"message": MESSAGE}))["ok"]
        deadline = time.monotonic() + 30
        while alpha.call(session, "lock_message", {"message": MESSAGE}).status_code != 404:
            assert time.monotonic() < deadline, "the idle session was never closed"
            time.sleep(0.5)                                          # idle longer than the idle period
        assert alpha.open_session().status_code == 200


# ------------------------------------------------------------------------------ calls

def test_a_request_id_already_in_flight_on_its_session_is_refused_at_once(tmp_path, rulebook):
    service, server = serve(tmp_path, rulebook, ServerSettings(),
                            held=lambda tool, caller: tool == "explain_support")
    with server as url, ThreadPoolExecutor(2) as pool:
        alpha = Wire(url, ALPHA)
        session = alpha.session()
        toolset = rulebook.table("toolsets").of_tool("explain_support").name     # a session enables it first
        assert envelope(alpha.call(session, "enable_toolset", {"toolset": toolset}, 6))["ok"]
        first = pool.submit(alpha.call, session, "explain_support", {"context": CONTEXT}, 7)
        service.wait_arrived()
        again = alpha.call(session, "lock_message", {"message": MESSAGE}, 7)
        assert again.status_code == 400 and error_code(again) == -32600
        assert again.json()["id"] == 7
        other = alpha.call(session, "lock_message", {"message": MESSAGE}, 8)        # another id goes through
        assert envelope(other)["ok"]
        service.release.set()
        assert envelope(first.result(30))["ok"]                                    # and the first is answered


def test_a_stalled_ledger_delays_only_the_calls_that_need_it(tmp_path, rulebook):
    """Ledger calls (held, as a stopped database would hold them) fill their lane; ping and the
    stateless tools, of the same principal or another, are answered meanwhile."""
    settings = ServerSettings(ledger_threads=2, calls_per_principal=4)
    service, server = serve(tmp_path, rulebook, settings, held=lambda tool, caller: tool == "query_findings")
    with server as url, ThreadPoolExecutor(4) as pool:
        alpha, beta = Wire(url, ALPHA), Wire(url, BETA)
        stalled = [pool.submit(w.call, None, "query_findings", {}) for w in (alpha, beta, alpha)]
        service.wait_arrived(settings.ledger_threads)
        session = beta.session()                                      # a new session opens meanwhile
        assert beta.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, session).json()["result"] == {}
        for wire in (alpha, beta):
            assert envelope(wire.call(None, "lock_message", {"message": MESSAGE}))["ok"]
        assert not any(f.done() for f in stalled)
        service.release.set()
        assert all(envelope(f.result(30))["ok"] for f in stalled)


def test_one_principal_cannot_take_every_worker(tmp_path, rulebook):
    settings = ServerSettings(ledger_threads=4, calls_per_principal=2)
    service, server = serve(tmp_path, rulebook, settings,
                            held=lambda tool, caller: caller.principal == "agent-a")
    with server as url, ThreadPoolExecutor(8) as pool:
        alpha, beta = Wire(url, ALPHA), Wire(url, BETA)
        flood = [pool.submit(alpha.call, None, "query_findings", {}) for _ in range(6)]
        service.wait_arrived(settings.calls_per_principal)
        assert not service.arrived.acquire(timeout=0.5)            # the rest of alpha's calls wait their turn
        assert envelope(beta.call(None, "query_findings", {}))["ok"]
        service.release.set()
        assert all(envelope(f.result(30))["ok"] for f in flood)


# ------------------------------------------------------------------------------ held to the stdio rules

BAD_MESSAGES = {
    "id true": {"jsonrpc": "2.0", "id": True, "method": "ping"},
    "id list": {"jsonrpc": "2.0", "id": [], "method": "ping"},
    "id object": {"jsonrpc": "2.0", "id": {}, "method": "ping"},
    "id fraction": {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
    "id null": {"jsonrpc": "2.0", "id": None, "method": "ping"},
    "id too long": {"jsonrpc": "2.0", "id": "x" * 10_000, "method": "ping"},
    "no method": {"jsonrpc": "2.0", "id": 1},
    "batch": [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
    "not an object": "ping",
    "too deep": {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"a": json.loads("[" * 70 + "]" * 70)}},
}
RAW = {"huge integer id": '{"jsonrpc":"2.0","id":' + "9" * 4300 + ',"method":"ping"}',
       "not JSON": "{oops", "NaN": '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}'}


@pytest.fixture(scope="module")
def shared(rulebook, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shared")
    service, server = serve(tmp, rulebook, ServerSettings(header_timeout_s=0.5, body_timeout_s=0.5))
    with server as url:
        yield url, service


@pytest.mark.parametrize("name", sorted(BAD_MESSAGES) + sorted(RAW))
def test_every_bad_message_is_answered_with_the_stdio_error(shared, name):
    url, _ = shared
    body = RAW[name] if name in RAW else json.dumps(BAD_MESSAGES[name])
    response = Wire(url, ALPHA).post(body)
    assert response.status_code == 400
    answer = response.json()
    assert answer["jsonrpc"] == "2.0" and answer["error"]["code"] in (-32600, -32700)
    assert len(response.content) < 1000                           # nothing of the message echoed


@pytest.mark.parametrize("arguments", [[1], "x", 5, None], ids=repr)
@pytest.mark.parametrize("legacy", [True, False], ids=["session", "sessionless"])
def test_arguments_that_are_not_an_object_get_the_registrys_envelope(shared, rulebook, arguments, legacy):
    url, service = shared
    wire = Wire(url, ALPHA)
    got = envelope(wire.call(wire.session() if legacy else None, "lock_message", arguments))
    expected = Service(rulebook).call("lock_message", arguments, Caller("agent-a", "agent", ("alpha",)))
    assert (got["ok"], got["error"]) == (False, expected["error"])
    assert got["error"]["code"] == "INVALID_ARGUMENT"


def test_a_request_head_that_trickles_in_is_cut_off(shared):
    url, _ = shared
    port = int(url.split(":")[2].split("/")[0])
    conns = []
    for _ in range(20):
        conn = socket.create_connection((HOST, port), timeout=10)
        conn.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")       # and never the rest
        conns.append(conn)
    for conn in conns:
        assert conn.recv(100) == b""                                   # closed by the server, not by us
        conn.close()


def test_a_body_that_stalls_is_answered_408_and_closed(shared):
    url, _ = shared
    port = int(url.split(":")[2].split("/")[0])
    token = "tok-alpha"
    with socket.create_connection((HOST, port), timeout=10) as conn:
        conn.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
                     b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                     b"Content-Length: 100\r\n\r\n{\"jsonrpc\"" % (port, token.encode()))
        answer = b""
        while chunk := conn.recv(4096):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 408")


def test_a_body_past_the_message_limit_is_refused_unread(shared, rulebook):
    url, _ = shared
    cap = rulebook.table("limits").wire["message_bytes"]
    response = Wire(url, ALPHA).post(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * cap + b'"}}')
    assert response.status_code == 413
