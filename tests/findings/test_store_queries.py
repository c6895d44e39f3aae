"""The store operations written once for both backends (store/findings_sql.py), on each backend:
the evidence of several sources asked for at once answers what asking one by one answers, and a
transaction sees the evidence and links it wrote itself."""
from __future__ import annotations

from groundrules.store import open_finding_store

SOURCES = [("run:1", ""), ("run:1", "L2"), ("log:7", ""), ("run:9", "")]     # run:9 has no evidence


def _evidence(n: int, ref: str, locator: str, project: str = "p1") -> dict:
    return {"id": f"E-{n}", "project": project, "source_kind": "log", "source_ref": ref, "locator": locator,
            "revision": f"r{n}", "content_hash": f"sha256:{n}", "excerpt": f"摘录 {n}", "created_at": "t"}


def _fill(store) -> None:
    rows = [(1, "run:1", ""), (2, "log:7", ""), (3, "run:1", ""), (4, "run:1", "L2"), (5, "log:7", "")]
    store.run_write(lambda tx: [tx.add_evidence(_evidence(n, ref, loc)) for n, ref, loc in rows]
                    + [tx.add_evidence(_evidence(9, "run:9", "", project="p2"))])


def test_sources_asked_at_once_answer_as_asked_one_by_one(db):
    store = open_finding_store(db)
    _fill(store)
    one_by_one = store.run_write(lambda tx: [tx.evidence_by_source("p1", ref, loc) for ref, loc in SOURCES])

    def at_once(tx):
        tx.evidence_by_sources("p1", SOURCES + SOURCES[:1])
        return [tx.evidence_by_source("p1", ref, loc) for ref, loc in SOURCES]
    assert store.run_write(at_once) == one_by_one
    assert [[r["id"] for r in rows] for rows in one_by_one] == [["E-1", "E-3"], ["E-4"], ["E-2", "E-5"], []]
    store.close()


def test_a_transaction_sees_the_evidence_it_added_after_asking_for_its_source(db):
    store = open_finding_store(db)
    _fill(store)

    def body(tx):
        before = [r["id"] for r in tx.evidence_by_source("p1", "run:1", "")]
        seq = tx.add_evidence(_evidence(6, "run:1", ""))
        after = tx.evidence_by_source("p1", "run:1", "")
        return before, [r["id"] for r in after], after[-1]["seq"] == seq
    assert store.run_write(body) == (["E-1", "E-3"], ["E-1", "E-3", "E-6"], True)
    with store.read() as tx:
        assert [r["id"] for r in tx.evidence_by_source("p1", "run:1", "")] == ["E-1", "E-3", "E-6"]
    store.close()


def test_a_link_to_a_row_this_transaction_created_is_made_once(db):
    store = open_finding_store(db)
    record = {"id": "F-1", "project": "p1", "claim_kind": "observation", "statement": "温度漂移", "details": "",
              "epistemic_state": "unassessed", "lifecycle_state": "active", "scope": {}, "retrieval_policy": "relevant",
              "created_at": "t", "last_validated_at": None}

    def body(tx):
        seq = tx.add_finding(record, ["gpu"])
        evidence = tx.add_evidence(_evidence(1, "run:1", ""))
        made = [tx.link_evidence(seq, evidence, _link(relation), "t") for relation in ("supports", "supports", "context")]
        return seq, made
    seq, made = store.run_write(body)
    assert made == [True, False, True]
    with store.read() as tx:
        links = [(link["evidence_id"], link["relation"]) for link in tx.links(seq)]
        assert links == [("E-1", "context"), ("E-1", "supports")]
        assert tx.evidence_links(seq) == 2 and tx.tags(seq) == ["gpu"]
    # the same link from a later transaction (neither end new) is found existing by the database
    assert store.run_write(lambda tx: tx.link_evidence(seq, tx.evidence("p1", "E-1")["seq"],
                                                       _link("supports"), "t")) is False
    store.close()


def _link(relation: str) -> dict:
    return {"relation": relation, "method": "experiment", "rationale": "", "finding_version": 1,
            "source_check": "unchecked", "writer": {"principal": "t", "role": "runner", "auth": {"method": "local"}}}
