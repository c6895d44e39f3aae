"""Issue 19, item 5: every lookup a finding-ledger write makes uses an index on its whole key. The
project already holds thousands of findings and evidence records (with fresh planner statistics,
so the planner's choice is the one a database in use makes); every write tool is called, and the
plan of every statement it sent is read on SQLite (EXPLAIN QUERY PLAN) and PostgreSQL (EXPLAIN):
none may scan a table or search an index on the project alone."""
from __future__ import annotations

import pytest

from plans import analyze, capture, is_postgres, problems
from findings_support import COUNTER, EXPERIMENT, finding, ok

ROWS = 3000                          # findings (and as many evidence records) already in the project
TABLES = {"findings", "finding_tags", "evidence", "finding_evidence", "finding_relations", "finding_events",
          "document_links", "rule_proposals", "idempotency_keys"}

# the other tables a write reads, filled alongside (a tiny table is scanned whatever its indexes)
EXTRA = (
    "INSERT INTO finding_relations (from_seq, relation, to_seq, created_at) SELECT seq, 'related_to', seq + 1, "
    "'2025-01-01' FROM findings WHERE id LIKE 'F-bulk-%' AND seq < (SELECT MAX(seq) FROM findings)",
    "INSERT INTO document_links (id, finding_seq, target_kind, target, relation, created_at) SELECT 'D-' || id, "
    "seq, 'document', 'docs/' || id || '.md', 'documented_in', '2025-01-01' FROM findings WHERE id LIKE 'F-bulk-%'",
    "INSERT INTO rule_proposals (id, project, finding_seq, rule_text, target_path, rationale, status, version, "
    "created_at) SELECT 'RP-' || id, project, seq, '- r', 'AGENTS.md', 'r', 'rejected', 2, '2025-01-01' "
    "FROM findings WHERE id LIKE 'F-bulk-%'",
    "INSERT INTO idempotency_keys (project, key, tool, payload_hash, response, created_at) SELECT project, "
    "'key-' || id, 'log_finding', 'h', '{}', '2025-01-01' FROM findings WHERE id LIKE 'F-bulk-%'",
)


def fill(store, project: str, rows: int) -> None:
    """`rows` findings of `project`, each with one evidence record, link, tag and event (raw SQL:
    the rows the tools write, without a call per row)."""
    if is_postgres(store):
        statements = [
            "INSERT INTO findings (id, project, claim_kind, statement, epistemic_state, lifecycle_state, scope_json, "
            "retrieval_policy, version, created_at, updated_at, search) SELECT 'F-bulk-' || n, %(p)s, 'observation', "
            "'bulk ' || n, 'unassessed', 'active', '{}', 'relevant', 1, '2025-01-01', '2025-01-01', ''::tsvector "
            "FROM generate_series(1, %(n)s) n",
            "INSERT INTO evidence (id, project, source_kind, source_ref, content_hash, created_at, first_of_source) "
            "SELECT 'E-bulk-' || n, %(p)s, 'log', 'log:bulk-' || n, 'h' || n, '2025-01-01', true "
            "FROM generate_series(1, %(n)s) n"]
        links = ("INSERT INTO finding_evidence (finding_seq, evidence_seq, relation, method, created_at) "
                 "SELECT f.seq, e.seq, 'supports', 'log_inspection', '2025-01-01' FROM findings f JOIN evidence e "
                 "ON e.id = 'E-bulk-' || substr(f.id, 8) WHERE f.id LIKE 'F-bulk-%%'")
        with store.pool.connection() as conn:
            for sql in statements:
                conn.execute(sql, {"p": project, "n": rows})
            conn.execute(links)
            conn.execute("INSERT INTO finding_tags (finding_seq, tag) SELECT seq, 'bulk' FROM findings "
                         "WHERE id LIKE 'F-bulk-%%'")
            conn.execute("INSERT INTO finding_events (id, finding_seq, kind, tool, version, at) SELECT 'EV-' || id, "
                         "seq, 'created', 'log_finding', 1, '2025-01-01' FROM findings WHERE id LIKE 'F-bulk-%%'")
            for sql in EXTRA:
                conn.execute(sql.replace("%", "%%"))
        return
    conn = store.conn
    series = f"WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < {int(rows)}) "
    conn.execute("BEGIN")
    conn.execute(series + "INSERT INTO findings (id, project, claim_kind, statement, epistemic_state, lifecycle_state, "
                 "scope_json, retrieval_policy, version, created_at, updated_at) SELECT 'F-bulk-' || n, ?, "
                 "'observation', 'bulk ' || n, 'unassessed', 'active', '{}', 'relevant', 1, '2025-01-01', "
                 "'2025-01-01' FROM s", (project,))
    conn.execute(series + "INSERT INTO evidence (id, project, source_kind, source_ref, content_hash, created_at, "
                 "first_of_source) SELECT 'E-bulk-' || n, ?, 'log', 'log:bulk-' || n, 'h' || n, '2025-01-01', 1 "
                 "FROM s", (project,))
    conn.execute("INSERT INTO finding_evidence (finding_seq, evidence_seq, relation, method, created_at) "
                 "SELECT f.seq, e.seq, 'supports', 'log_inspection', '2025-01-01' FROM findings f JOIN evidence e "
                 "ON e.id = 'E-bulk-' || substr(f.id, 8) WHERE f.id LIKE 'F-bulk-%'")
    conn.execute("INSERT INTO finding_tags (finding_seq, tag) SELECT seq, 'bulk' FROM findings WHERE id LIKE 'F-bulk-%'")
    conn.execute("INSERT INTO finding_events (id, finding_seq, kind, tool, version, at) SELECT 'EV-' || id, seq, "
                 "'created', 'log_finding', 1, '2025-01-01' FROM findings WHERE id LIKE 'F-bulk-%'")
    for sql in EXTRA:
        conn.execute(sql)
    conn.execute("COMMIT")


def writes(ledger):
    """One call of every write tool (and the read a host makes between them), each valid, made as
    it comes (each knows the versions the calls before it left)."""
    first = ok(ledger.call("log_finding", finding(evidence=[EXPERIMENT, COUNTER])))["finding_id"]
    second = ok(ledger.call("log_finding", finding(statement="第二条")))["finding_id"]

    def version(fid: str) -> int:
        return ok(ledger.call("get_finding", {"finding_id": fid}))["finding"]["version"]
    yield "log_finding", lambda: finding(statement="两个新来源", evidence=[
        dict(EXPERIMENT, source_ref="run:new-1"), dict(COUNTER, source_ref="log:new-2")])
    yield "log_finding", lambda: finding(statement="一个旧来源", evidence=[EXPERIMENT], idempotency_key="k-1")
    yield "log_finding", lambda: finding(statement="一个旧来源", evidence=[EXPERIMENT], idempotency_key="k-1")
    yield "add_evidence", lambda: {"finding_id": second, "evidence": dict(COUNTER, source_ref="log:bulk-7"),
                                   "expected_version": version(second)}
    yield "set_finding_state", lambda: {"finding_id": first, "epistemic_state": "supported", "reason": "实验",
                                        "evidence_ids": ["E-000001"], "expected_version": version(first)}
    yield "link_finding", lambda: {"finding_id": first, "relation": "depends_on", "target": {"finding_id": second}}
    yield "link_finding", lambda: {"finding_id": first, "relation": "documented_in",
                                   "target": {"document": "docs/x.md"}}
    yield "refute_finding", lambda: {"finding_id": second, "reason": "反例", "evidence": [COUNTER],
                                     "expected_version": version(second)}
    yield "revalidate_finding", lambda: {"finding_id": first, "result": "insufficient", "reason": "复查",
                                         "expected_version": version(first)}
    yield "supersede_finding", lambda: {"finding_id": first, "reason": "更准确", "expected_version": version(first),
                                        "new": finding(statement="取代")}
    yield "propose_rule", lambda: {"finding_id": second, "rule_text": "- 记录温度", "target_path": "AGENTS.md",
                                   "rationale": "两次误判"}
    yield "reject_rule", lambda: {"proposal_id": "RP-000001", "note": "再议"}
    yield "get_finding", lambda: {"finding_id": first}


def test_every_lookup_of_a_write_uses_its_whole_key(ledger, monkeypatch):
    """Over an analyzed project, on both backends."""
    assert_whole_keys(ledger, monkeypatch, analyzed=True)


@pytest.mark.parametrize("db", ["sqlite"], indirect=True)
def test_every_lookup_of_a_write_uses_its_whole_key_before_any_analyze(ledger, monkeypatch):
    """SQLite plans without statistics until ANALYZE runs; PostgreSQL gathers its own (autovacuum),
    so the analyzed case is its case."""
    assert_whole_keys(ledger, monkeypatch, analyzed=False)


def assert_whole_keys(ledger, monkeypatch, analyzed: bool) -> None:
    fill(ledger.store, "p1", ROWS)
    if analyzed:
        analyze(ledger.store)
    found = []
    for tool, make in writes(ledger):
        arguments = make()
        with capture(ledger.store, monkeypatch) as sent:
            envelope = ledger.call(tool, arguments)
        assert envelope["ok"], (tool, envelope["error"])
        assert sent, tool
        found += [f"{tool}: {p}" for p in problems(ledger.store, sent, TABLES)]
    assert found == [], "\n".join(found)
