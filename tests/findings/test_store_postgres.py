"""The PostgreSQL store's own machinery (issue 10): SERIALIZABLE writes, serialization failures
retried inside the call and bounded, migrations, errors that leak no connection string, faults
injected inside a real transaction, and the tsvector keyword search.

Tied to PostgreSQL by nature (hence the file name): the same guarantees on SQLite are tested by
the contract suite and the `_sqlite_` tests."""
from __future__ import annotations

import threading

import psycopg
import pytest

from findings_support import EXPERIMENT, counts, finding, ok, open_client, refused, sql
from groundrules.core.errors import StorageFailure
from groundrules.findings import SequentialIds, StepClock
from groundrules.store.findings_postgres import LATEST, MIGRATIONS, PostgresFindingStore, tsquery_text, tsvector_text

FID = "F-000001"


def test_postgres_writes_are_serializable_appends_repeatable_read_and_reads_one_snapshot(pg_db):
    store = PostgresFindingStore(pg_db)
    assert store.run_write(lambda tx: tx.conn.execute("SHOW transaction_isolation").fetchone()) == {
        "transaction_isolation": "serializable"}
    assert store.run_write(lambda tx: tx.conn.execute("SHOW transaction_isolation").fetchone(),
                           appends_only=True) == {"transaction_isolation": "repeatable read"}
    with store.read() as tx:
        assert tx.conn.execute("SHOW transaction_isolation").fetchone()["transaction_isolation"] == "repeatable read"
        assert tx.conn.execute("SHOW transaction_read_only").fetchone()["transaction_read_only"] == "on"
    store.close()


def _conflicting_body(pg_db: str, attempts: list, conflicts: int):
    """A body that reads the finding, lets another session change it, then writes: under
    SERIALIZABLE the first `conflicts` attempts cannot commit."""
    def body(tx):
        attempts.append(1)
        version = tx.conn.execute("SELECT version FROM findings WHERE id = 'F-000001'").fetchone()["version"]
        if len(attempts) <= conflicts:
            with psycopg.connect(pg_db, autocommit=True) as other:
                other.execute("UPDATE findings SET lifecycle_state = lifecycle_state WHERE id = 'F-000001'")
        tx.conn.execute("UPDATE findings SET last_validated_at = 'x' WHERE id = 'F-000001' AND version = %s", (version,))
        return version
    return body


@pytest.fixture
def one_finding(pg_db, book):
    client = open_client(pg_db, "p1", rulebook=book, ids=SequentialIds(), clock=StepClock())
    assert ok(client.call("log_finding", finding()))["finding_id"] == FID
    yield client
    client.close()


def test_postgres_serialization_failures_are_retried_inside_the_call(pg_db, one_finding):
    store, attempts = PostgresFindingStore(pg_db), []
    assert store.run_write(_conflicting_body(pg_db, attempts, conflicts=2)) == 1
    assert len(attempts) == 3                                  # two aborted by PostgreSQL, the third committed
    assert sql(store, "SELECT last_validated_at FROM findings") == [("x",)]
    store.close()


def test_postgres_retries_are_bounded_and_end_as_a_storage_failure(pg_db, one_finding):
    store, attempts = PostgresFindingStore(pg_db, retries=1), []
    with pytest.raises(StorageFailure) as info:
        store.run_write(_conflicting_body(pg_db, attempts, conflicts=5))
    assert (info.value.kind, info.value.code, len(attempts)) == ("SerializationFailure", "STORAGE_ERROR", 2)
    assert sql(store, "SELECT last_validated_at FROM findings") == [(None,)]
    store.close()


def test_postgres_racing_threads_lose_no_update(pg_db, book, one_finding):
    """Eight callers on eight connections append evidence to one finding at once: every call
    answers, none is lost, and the version counts every change."""
    clients = [open_client(pg_db, "p1", rulebook=book, ids=SequentialIds(start=1000 * (n + 1))) for n in range(8)]
    results: list = []

    def add(client, n):
        results.append(client.call("add_evidence", {"finding_id": FID, "evidence": dict(
            EXPERIMENT, source_ref=f"run:{n}")}))
    threads = [threading.Thread(target=add, args=(c, n)) for n, c in enumerate(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r["ok"] for r in results] == [True] * 8, [r["error"] for r in results if not r["ok"]]
    view = ok(one_finding.call("get_finding", {"finding_id": FID}))
    assert len(view["evidence"]) == 8 + len(finding().get("evidence", []))
    for client in clients:
        client.close()


def _evidence(n: int, **overrides) -> dict:
    return dict({"id": f"E-{n}", "project": "p1", "source_kind": "log", "source_ref": "log:1", "locator": "",
                 "revision": "", "content_hash": "sha256:x", "excerpt": "x", "created_at": "t"}, **overrides)


def test_postgres_an_append_a_unique_key_refuses_is_rerun_and_sees_the_other_write(pg_db):
    """Two appends of the first record of one source: the second waits on the unique index until
    the first commits, is refused (23505), and its re-run finds the first one's record."""
    store, attempts, answer = PostgresFindingStore(pg_db), [], {}

    def second(tx):
        attempts.append(1)
        if tx.evidence_by_source("p1", "log:1", ""):
            return "reused"
        tx.add_evidence(_evidence(2))
        return "added"
    with store.write() as first:
        assert first.evidence_by_source("p1", "log:1", "") == []
        first.add_evidence(_evidence(1))
        thread = threading.Thread(target=lambda: answer.update(second=store.run_write(second, appends_only=True)))
        thread.start()
        with psycopg.connect(pg_db, autocommit=True) as admin:      # until the second waits on the index
            while not admin.execute("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND "
                                    "query LIKE 'INSERT INTO evidence%%'").fetchall():
                assert thread.is_alive(), answer
    thread.join(timeout=30)
    assert (answer["second"], len(attempts)) == ("reused", 2)
    assert sql(store, "SELECT id, first_of_source FROM evidence") == [("E-1", True)]
    store.close()


def test_postgres_evidence_is_unique_per_source_and_content_and_first_per_source(pg_db):
    store = PostgresFindingStore(pg_db)
    with store.write() as tx:
        tx.add_evidence(_evidence(1))
        tx.add_evidence(_evidence(2, content_hash="sha256:y"))      # another content: a second record
    assert sql(store, "SELECT id, first_of_source FROM evidence ORDER BY seq") == [("E-1", True), ("E-2", False)]
    for duplicate in (_evidence(3), _evidence(4, content_hash="sha256:z", source_kind="experiment_run")):
        with pytest.raises(StorageFailure) as info, store.write() as tx:
            tx._send("INSERT INTO evidence (id, project, source_kind, source_ref, locator, revision, content_hash, "
                     "excerpt, created_at, first_of_source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, true)",
                     tuple(duplicate[k] for k in ("id", "project", "source_kind", "source_ref", "locator", "revision",
                                                  "content_hash", "excerpt", "created_at")))
        assert info.value.kind == "UniqueViolation"
    store.close()


def test_postgres_migrations_are_versioned_and_rerun_as_no_ops(pg_db):
    first, second = PostgresFindingStore(pg_db), PostgresFindingStore(pg_db)
    assert sql(first, "SELECT version FROM schema_migrations ORDER BY version") == [(v,) for v, _, _ in MIGRATIONS]
    with psycopg.connect(pg_db, autocommit=True) as conn:
        assert second.migrate(conn) == LATEST
    first.close()
    second.close()


def test_postgres_connection_errors_name_no_host_user_or_password(tmp_path):
    uri = f"postgresql://alice:hunter2@/nodb?host={tmp_path}/secret-socket-dir&connect_timeout=2"
    with pytest.raises(StorageFailure) as info:
        PostgresFindingStore(uri)
    text = str(info.value) + repr(info.value.as_dict())
    for needle in ("hunter2", "alice", "secret-socket-dir", "nodb", str(tmp_path)):
        assert needle not in text
    assert info.value.kind == "OperationalError"


# ------------------------------------------------------------------------------ faults inside a transaction

def _arm(pg_db: str, timing: str, event: str, when: str) -> None:
    """A real trigger that raises, only in sessions that set groundrules_test.fault = 'on'."""
    constraint = "CONSTRAINT " if timing == "AT COMMIT" else ""
    when_sql = f"AFTER {event}" if timing == "AT COMMIT" else f"BEFORE {event}"
    deferred = "DEFERRABLE INITIALLY DEFERRED " if timing == "AT COMMIT" else ""
    with psycopg.connect(pg_db, autocommit=True) as conn:
        conn.execute("CREATE FUNCTION injected() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                     "RAISE EXCEPTION 'injected /very/secret/path'; END $$")
        conn.execute(f"CREATE {constraint}TRIGGER injected {when_sql} {deferred}FOR EACH ROW "
                     f"WHEN (current_setting('groundrules_test.fault', true) = 'on' AND {when}) "
                     "EXECUTE FUNCTION injected()")


def _failing_client(pg_db, book, **kwargs):
    def on_connect(conn):
        conn.execute("SET groundrules_test.fault = 'on'")
    return open_client(PostgresFindingStore(pg_db, on_connect=on_connect), "p1", rulebook=book, clock=StepClock(),
                       ids=SequentialIds(start=500), **kwargs)


@pytest.mark.parametrize("timing, event, when", [
    ("DURING", "INSERT ON finding_relations", "true"),
    ("DURING", "UPDATE ON findings", "NEW.lifecycle_state <> OLD.lifecycle_state"),
    ("DURING", "INSERT ON finding_events", "NEW.kind = 'superseded'"),
    ("AT COMMIT", "INSERT ON finding_events", "NEW.kind = 'superseded'"),
])
def test_postgres_a_failure_inside_supersede_leaves_nothing(pg_db, book, one_finding, timing, event, when):
    before = counts(one_finding)
    _arm(pg_db, timing, event, when)
    failing = _failing_client(pg_db, book)
    error = refused(failing.call("supersede_finding", {"finding_id": FID, "reason": "r", "expected_version": 1,
                                                       "new": finding(statement="新的主张", evidence=[EXPERIMENT])}),
                    "STORAGE_ERROR")
    assert "secret" not in error["message"]
    assert counts(one_finding) == before
    view = ok(one_finding.call("get_finding", {"finding_id": FID}))
    assert (view["finding"]["lifecycle_state"], view["finding"]["version"], view["relations"]) == ("active", 1, [])
    assert ok(one_finding.call("query_findings", {"keyword": "新的主张"}))["findings"] == []
    # the failed transaction left no connection behind in a bad state: the same ledger still writes
    ok(failing.call("set_finding_state", {"finding_id": FID, "epistemic_state": "provisional", "reason": "r",
                                          "expected_version": 1}))
    failing.close()


# ------------------------------------------------------------------------------ keyword search

@pytest.mark.parametrize("keyword, hit", [
    ("漂移", True), ("温度漂移", True), ("漂", True), ("移导致", True), ("误差", True), ("GPU", True),
    ("漂温", False), ("致误", True), ("差导", False), ("gp", True), ("pu", False), ("漂移 误差", True),
    ("漂移 缓存", False),
])
def test_postgres_search_finds_two_character_words_as_substrings(pg_db, keyword, hit):
    store = PostgresFindingStore(pg_db)
    with psycopg.connect(pg_db) as conn:
        found = conn.execute("SELECT %s::tsvector @@ %s::tsquery", (tsvector_text("GPU 温度漂移导致误差"),
                                                                    tsquery_text(keyword))).fetchone()[0]
    assert found is hit
    store.close()


def test_postgres_search_is_an_index_lookup(pg_db, one_finding):
    with psycopg.connect(pg_db) as conn:
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(r[0] for r in conn.execute(
            "EXPLAIN SELECT seq FROM findings WHERE search @@ %s::tsquery", (tsquery_text("漂移"),)))
    assert "findings_search" in plan
