"""Several hosts, one PostgreSQL database (issue 10, deliverable 5): each host is its own Python
process serving the tool registry over a line protocol (one JSON request in, one envelope out) on
the library, as a server process would. Racing state changes (one wins), an idempotent retry landing
on the other host, hosts appending findings on the same sources at once (none lost, no record
twice), a host SIGKILLed mid-stream, a connection dropped mid-call.

PostgreSQL only by nature: SQLite cannot be shared across hosts. Subprocesses are killed by id."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from urllib.parse import quote

import psycopg
import pytest

from findings_support import COUNTER, EXPERIMENT, TABLES, finding

# real processes per case (a stdio server, host processes): run after the default suite
pytestmark = pytest.mark.extended

PRELUDE = textwrap.dedent(f"""
    import json, sys
    from pathlib import Path
    from groundrules import Caller, FindingLedger, Service, load_rulebook
    TABLES = [Path(p) for p in {json.dumps([str(t) for t in TABLES])}]
    book = load_rulebook(Path(TABLES[0]).parents[1], TABLES)
    service = Service(book, findings=FindingLedger(sys.argv[1], rulebook=book))
    caller = Caller(sys.argv[2], "reviewer", ("p1",))
""")

HOST = PRELUDE + textwrap.dedent("""
    print("ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps(service.call(request["tool"], request["arguments"], caller), ensure_ascii=False), flush=True)
""")

WRITER = PRELUDE + textwrap.dedent("""
    n = 0
    while True:
        n += 1
        env = service.call("log_finding", {
            "claim_kind": "observation", "statement": f"{sys.argv[2]} 第 {n} 次测量的温度漂移", "tags": ["fault"],
            "evidence": [
                {"source_kind": "experiment_run", "source_ref": f"run:{sys.argv[2]}:{n}", "excerpt": "漂移 0.3", "relation": "supports",
                 "method": "experiment"},
                {"source_kind": "log", "source_ref": f"log:{sys.argv[2]}:{n}", "excerpt": "温度 81℃", "relation": "supports",
                 "method": "log_inspection"}]}, caller)
        assert env["ok"], env
        print(env["data"]["finding_id"], flush=True)
""")


SHARED_WRITER = PRELUDE + textwrap.dedent("""
    print("ready", flush=True)
    sys.stdin.readline()                        # all hosts start together
    for n in range(int(sys.argv[3])):           # every host cites the same sources, in the same order
        env = service.call("log_finding", {
            "claim_kind": "observation", "statement": f"{sys.argv[2]} 看到第 {n} 次运行的漂移", "evidence": [
                {"source_kind": "experiment_run", "source_ref": f"run:{n}", "excerpt": f"漂移 {n}",
                 "relation": "supports", "method": "experiment"},
                {"source_kind": "log", "source_ref": f"log:{n}", "excerpt": f"日志 {n}", "relation": "context",
                 "method": "log_inspection"}]}, caller)
        assert env["ok"], env
        print(env["data"]["finding_id"], " ".join(env["data"]["evidence_ids"]), flush=True)
""")


class Host:
    def __init__(self, script: str, db: str, name: str, *args: str):
        self.proc = subprocess.Popen([sys.executable, "-c", script, db, name, *args], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8")

    def ready(self) -> "Host":
        assert self.proc.stdout.readline().strip() == "ready", self.proc.stderr.read()
        return self

    def send(self, tool: str, arguments: dict) -> None:
        self.proc.stdin.write(json.dumps({"tool": tool, "arguments": arguments}, ensure_ascii=False) + "\n")
        self.proc.stdin.flush()

    def answer(self) -> dict:
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read()
        return json.loads(line)

    def call(self, tool: str, arguments: dict) -> dict:
        self.send(tool, arguments)
        return self.answer()

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


@pytest.fixture
def hosts(pg_db):
    started: list[Host] = []

    def start(script: str = HOST, db: str = pg_db, name: str = "host", *args: str) -> Host:
        host = Host(script, db, f"{name}{len(started)}", *args)
        started.append(host)
        return host.ready() if script == HOST else host
    yield start
    for host in started:
        host.stop()


def scalar(db: str, query: str, *params):
    with psycopg.connect(db) as conn:
        return conn.execute(query, params).fetchone()[0]


def test_hosts_racing_on_one_finding_one_wins_every_time(hosts, pg_db):
    a, b = hosts(), hosts()
    for round_ in range(6):
        fid = a.call("log_finding", finding(statement=f"第 {round_} 轮", evidence=[EXPERIMENT, COUNTER]))["data"]["finding_id"]
        for host, target in ((a, "supported"), (b, "contested")):
            host.send("set_finding_state", {"finding_id": fid, "epistemic_state": target, "reason": target,
                                            "expected_version": 1})
        results = [a.answer(), b.answer()]
        assert sorted((r["ok"], (r["error"] or {}).get("code", "")) for r in results) == [
            (False, "CONCURRENT_MODIFICATION"), (True, "")]
        winner = ["supported", "contested"][[r["ok"] for r in results].index(True)]
        view = b.call("get_finding", {"finding_id": fid})["data"]
        assert (view["finding"]["epistemic_state"], view["finding"]["version"]) == (winner, 2)
        assert [e["kind"] for e in view["events"]] == ["created", "state_changed"]


def test_an_idempotent_retry_on_the_other_host_returns_the_first_result(hosts, pg_db):
    a, b = hosts(), hosts()
    args = finding(statement="只写一次", idempotency_key="once")
    first = a.call("log_finding", args)
    assert first["ok"] and b.call("log_finding", args)["data"] == first["data"]
    # both hosts at the same moment, with a key neither has seen: one finding, one answer for both
    both = finding(statement="同时重试", idempotency_key="twice")
    a.send("log_finding", both)
    b.send("log_finding", both)
    answers = [a.answer(), b.answer()]
    assert answers[0]["ok"] and answers[0]["data"] == answers[1]["data"], answers
    assert scalar(pg_db, "SELECT COUNT(*) FROM findings") == 2
    assert scalar(pg_db, "SELECT COUNT(*) FROM idempotency_keys") == 2


def test_hosts_citing_the_same_sources_at_once_lose_no_finding_and_duplicate_no_record(hosts, pg_db):
    """Appends run side by side (REPEATABLE READ): the unique keys make the hosts share each source's
    one record instead of writing it twice, and every finding is kept."""
    count = 40
    writers = [hosts(SHARED_WRITER, pg_db, "shared", str(count)) for _ in range(3)]
    for w in writers:
        w.ready()
    for w in writers:
        w.proc.stdin.write("go\n")
        w.proc.stdin.flush()
    lines = [[w.proc.stdout.readline().split() for _ in range(count)] for w in writers]
    assert all(all(len(line) == 3 for line in host) for host in lines), [w.proc.stderr.read() for w in writers]
    for n in range(count):                      # every host got the same two records for run n
        assert len({tuple(host[n][1:]) for host in lines}) == 1
    assert scalar(pg_db, "SELECT COUNT(*) FROM findings") == 3 * count
    assert scalar(pg_db, "SELECT COUNT(*) FROM evidence") == 2 * count
    assert scalar(pg_db, "SELECT COUNT(*) FROM finding_evidence") == 6 * count
    assert scalar(pg_db, "SELECT COUNT(*) FROM evidence WHERE first_of_source") == 2 * count


def test_a_host_killed_mid_stream_loses_no_acknowledged_write_and_leaves_nothing_half_written(hosts, pg_db):
    writer, other = hosts(WRITER, name="killed"), hosts(WRITER, name="alive")
    acknowledged = []
    while len(acknowledged) < 40:
        line = writer.proc.stdout.readline()
        assert line, writer.proc.stderr.read()
        acknowledged.append(line.strip())
    writer.proc.send_signal(signal.SIGKILL)
    writer.proc.wait(timeout=10)
    for _ in range(10):                             # the other host goes on writing after the kill
        assert other.proc.stdout.readline().strip(), other.proc.stderr.read()
    other.stop()
    with psycopg.connect(pg_db) as conn:
        ids = {r[0] for r in conn.execute("SELECT id FROM findings WHERE statement LIKE 'killed%%'")}
        assert set(acknowledged) <= ids
        assert len(ids) <= len(acknowledged) + 2    # at most what was committed but not yet printed
        per_finding = conn.execute(
            "SELECT f.id, (SELECT COUNT(*) FROM finding_evidence e WHERE e.finding_seq = f.seq), "
            "(SELECT COUNT(*) FROM finding_events e WHERE e.finding_seq = f.seq AND e.kind = 'created'), "
            "(SELECT COUNT(*) FROM finding_tags t WHERE t.finding_seq = f.seq) FROM findings f").fetchall()
        assert per_finding and all(row[1:] == (2, 1, 1) for row in per_finding), per_finding
        total = conn.execute("SELECT COUNT(*) FROM findings").fetchone()[0]
        assert conn.execute("SELECT COUNT(*) FROM evidence").fetchone()[0] == 2 * total
        from groundrules.store.findings_postgres import tsquery_text
        assert conn.execute("SELECT COUNT(*) FROM findings WHERE search @@ %s::tsquery",
                            (tsquery_text("漂移"),)).fetchone()[0] == total


def test_a_connection_dropped_mid_call_is_a_storage_error_and_a_safe_retry(hosts, pg_db):
    with psycopg.connect(pg_db, autocommit=True) as conn:
        conn.execute("CREATE FUNCTION slow() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                     "PERFORM pg_sleep(60); RETURN NEW; END $$")
        conn.execute("CREATE TRIGGER slow BEFORE INSERT ON findings FOR EACH ROW "
                     "WHEN (current_setting('groundrules_test.slow', true) = 'on') EXECUTE FUNCTION slow()")
    slow_db = pg_db + "&options=" + quote("-c groundrules_test.slow=on")
    stalled, other = hosts(db=slow_db), hosts()
    args = finding(statement="断线重试", idempotency_key="dropped")
    stalled.send("log_finding", args)
    with psycopg.connect(pg_db, autocommit=True) as admin:
        deadline = time.monotonic() + 20
        while not admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                "WHERE query LIKE 'INSERT INTO findings%%' AND state = 'active'").fetchall():
            assert time.monotonic() < deadline, "the call never reached the database"
            time.sleep(0.05)
    dropped = stalled.answer()
    assert (dropped["ok"], dropped["error"]["code"]) == (False, "STORAGE_ERROR")
    assert "postgres" not in dropped["error"]["message"] and "/tmp" not in dropped["error"]["message"]
    assert scalar(pg_db, "SELECT COUNT(*) FROM findings") == 0        # nothing half-written
    retried = other.call("log_finding", args)                          # the retry, on the other host
    assert retried["ok"], retried["error"]
    assert other.call("log_finding", args)["data"] == retried["data"]
    assert scalar(pg_db, "SELECT COUNT(*) FROM findings") == 1
    # the host whose connection dropped serves again on a fresh one
    assert stalled.call("get_finding", {"finding_id": retried["data"]["finding_id"]})["ok"]
