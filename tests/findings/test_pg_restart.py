"""Issue 19, item 3: after PostgreSQL restarts, no call fails once it answers again. The throwaway
cluster is restarted under ledgers whose pools hold connections the restart ended (a fast shutdown,
as an operator's restart; an immediate one, as a crash): the next call of every kind succeeds, on
one host and under a load of concurrent calls, which may fail only while the server is away, and
only with STORAGE_ERROR. The second restart keeps the server away for two seconds: a pool that
backed off its reconnection meanwhile would keep the calls after it waiting."""
from __future__ import annotations

import itertools
import threading
import time

import pytest

from groundrules import Caller, EvidenceLedger, FindingLedger, Service, default_rulebook

from findings_support import finding

NOW = "2030-01-02T00:00:00Z"


@pytest.fixture
def service(pg_db, tmp_path):
    book = default_rulebook()
    n = itertools.count()
    findings = FindingLedger(pg_db, rulebook=book)
    evidence = EvidenceLedger(pg_db, ids=lambda: f"R{next(n)}-{time.monotonic_ns()}",
                              clock=lambda: "2030-01-01T00:00:00Z", rulebook=book, keys=tmp_path / "keys")
    yield Service(book, findings=findings, evidence=evidence)
    findings.close()
    evidence.close()


CALLER = Caller("tester", "agent", ("p1",))


def calls(n: int) -> list[tuple[str, dict]]:
    """A write and a read of each ledger (the n-th of a run: its sources and ids are its own)."""
    return [("log_finding", finding(statement=f"重启后的第 {n} 条",
                                    evidence=[{"source_kind": "log", "source_ref": f"log:{n}", "excerpt": "x",
                                               "relation": "context", "method": "log_inspection"}])),
            ("query_findings", {"keyword": "重启"}),
            ("append_evidence", {"record": {"type": "tool_receipt", "tool": "crm", "request_id": f"q{n}",
                                            "body": "{}"}}),
            ("get_evidence", {}),
            ("fold_ledger", {"now": NOW, "interpretations": []})]


def fill_the_pools(service, width: int = 4) -> None:
    """Calls side by side, so that each pool holds as many connections as it may open."""
    threads = [threading.Thread(target=lambda k=k: [service.call(t, a, CALLER) for t, a in calls(1000 + k)])
               for k in range(width)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_the_first_calls_after_a_restart_succeed(service, pg_cluster, mode):
    fill_the_pools(service)
    pg_cluster.restart(mode)
    for n in range(3):                  # each pool's every stale connection is met in turn
        for tool, arguments in calls(n):
            envelope = service.call(tool, arguments, CALLER)
            assert envelope["ok"], (n, tool, envelope["error"])


def test_under_load_no_call_fails_once_the_server_answers(service, pg_cluster):
    fill_the_pools(service)
    outcomes: list[tuple[float, float, str, bool, str | None]] = []
    stop = threading.Event()
    counter = itertools.count(10_000)

    def client() -> None:
        while not stop.is_set():
            for tool, arguments in calls(next(counter)):
                started = time.monotonic()
                envelope = service.call(tool, arguments, CALLER)
                outcomes.append((started, time.monotonic(), tool, envelope["ok"],
                                 (envelope["error"] or {}).get("code")))

    clients = [threading.Thread(target=client) for _ in range(6)]
    for c in clients:
        c.start()
    try:
        time.sleep(0.5)
        back = [pg_cluster.restart("fast")]
        time.sleep(0.5)
        stopping = time.monotonic()
        back.append(pg_cluster.restart("immediate", down=2.0))     # long enough for a pool to back off
        time.sleep(1.5)
    finally:
        stop.set()
        for c in clients:
            c.join()
    after = [o for o in outcomes if o[0] >= back[-1]]
    assert len(after) > 20 and all(o[3] for o in after), [o for o in after if not o[3]][:5]
    between = [o for o in outcomes if back[0] <= o[0] and o[1] < stopping]     # between the restarts
    assert between and all(o[3] for o in between), [o for o in between if not o[3]][:5]
    assert {o[4] for o in outcomes if not o[3]} <= {"STORAGE_ERROR"}
