"""The finding ledger's persistence operations, written once for both backends.

The statements are in SQLite's placeholder style (`?`); the PostgreSQL transaction converts them.
A backend's transaction class supplies the primitives of store/sql.py, the two statements that differ in kind (`add_finding`, `search`) and three words of
dialect (`ALL_ROWS`, `TEXT_C`, `JOIN_IN_ORDER`); everything else is here.

Every lookup a write makes finds its rows through an index on the lookup's whole key, so that a
write costs the same in a project of a thousand rows as in one of a million
(tests/findings/test_query_plans.py reads the plans on both backends).

A transaction also remembers what it wrote itself, which no other transaction can see or touch
before it commits: the evidence it added (so a second lookup of the same source needs no query)
and the findings and evidence it created (so a link to one of them cannot exist already, and
inserting it needs no answer from the database). On PostgreSQL that saves round trips; on
SQLite it changes nothing observable.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Iterator, overload

from .sql import Primitives

FINDING_COLUMNS = ("id", "project", "claim_kind", "statement", "details", "epistemic_state", "lifecycle_state",
                   "retrieval_policy", "version", "created_at", "updated_at", "last_validated_at")
SELECT_FINDING = "f.seq, f.scope_json, " + ", ".join(f"f.{c}" for c in FINDING_COLUMNS)
INSERT_FINDING = ("INSERT INTO findings (id, project, claim_kind, statement, details, epistemic_state, "
                  "lifecycle_state, scope_json, retrieval_policy, version, created_at, updated_at, last_validated_at")
LINK_ORDER = "ORDER BY fe.created_at, e.seq, fe.relation"
EVIDENCE_SOURCE_COLUMNS = "seq, id, source_kind, revision, content_hash, excerpt"
EVIDENCE_COLUMNS = ("id", "project", "source_kind", "source_ref", "locator", "revision", "content_hash", "excerpt",
                    "created_at", "first_of_source")
INSERT_EVIDENCE = f"INSERT INTO evidence ({', '.join(EVIDENCE_COLUMNS)})"
# Who wrote a link or event before writers were stamped: nobody the tables can trust.
UNKNOWN_WRITER = {"principal": None, "role": None, "auth": {"method": "unknown"}}
UNKNOWN_WRITER_JSON = json.dumps(UNKNOWN_WRITER, separators=(",", ":"))
LINK_COLUMNS = "fe.relation, fe.method, fe.writer_json, fe.finding_version, fe.source_check"


def canonical_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def finding_values(record: dict) -> tuple:
    """The values of INSERT_FINDING's columns (version 1, updated when created) for `record`."""
    return (record["id"], record["project"], record["claim_kind"], record["statement"], record["details"],
            record["epistemic_state"], record["lifecycle_state"], canonical_json(record["scope"]),
            record["retrieval_policy"], 1, record["created_at"], record["created_at"], record["last_validated_at"])


@overload
def finding_row(row: dict) -> dict: ...
@overload
def finding_row(row: None) -> None: ...
def finding_row(row: dict | None) -> dict | None:
    if row is None:
        return None
    out = {k: row[k] for k in FINDING_COLUMNS}
    out["seq"] = row["seq"]
    out["scope"] = json.loads(row["scope_json"])
    return out


class FindingOps(Primitives):
    """The operations of one transaction; rows come back as plain dicts."""

    ALL_ROWS: int | None = -1           # the LIMIT that means no limit
    TEXT_C = ""                         # makes a text literal sort bytewise
    JOIN_IN_ORDER = "CROSS JOIN"        # a join whose left side drives (SQLite keeps a CROSS JOIN's order)
    # each backend's own keyword search (its full-text machinery differs): (project, *, keyword, tags,
    # lifecycles, epistemic) -> the findings newest first, or None when the keyword has nothing to search
    search: Callable[..., "Iterator[dict] | None"]
    add_finding: Callable[[dict, list[str]], int]     # (record, tags) -> its row id, however the backend returns it

    def __init__(self) -> None:
        self._sources: dict[tuple, list[dict]] = {}     # evidence_by_source answers, with this tx's additions
        self._new_findings: set[int] = set()
        self._new_evidence: set[int] = set()
        self._new_links: set[tuple] = set()

    # -- findings ---------------------------------------------------------------------------------
    def finding(self, project: str, finding_id: str) -> dict | None:
        return finding_row(self._one(f"SELECT {SELECT_FINDING} FROM findings f WHERE f.id = ? AND f.project = ?",
                                     (finding_id, project)))

    def _created_finding(self, seq: int) -> int:
        self._new_findings.add(seq)
        return seq

    def update_finding(self, seq: int, version: int, at: str, columns: dict) -> bool:
        """Set `columns` and version+1 if the finding is still at `version` (no lost update)."""
        values = dict(columns)
        if "scope" in values:
            values["scope_json"] = canonical_json(values.pop("scope"))
        sets = "".join(f", {name} = ?" for name in values)
        return self._changed(f"UPDATE findings SET version = ?, updated_at = ?{sets} WHERE seq = ? AND version = ?",
                             (version + 1, at, *values.values(), seq, version))

    def tags(self, seq: int) -> list[str]:
        return [r["tag"] for r in self._all("SELECT tag FROM finding_tags WHERE finding_seq = ? ORDER BY tag", (seq,))]

    # -- evidence ---------------------------------------------------------------------------------
    def evidence(self, project: str, evidence_id: str) -> dict | None:
        return self._one("SELECT seq, id, source_kind, source_ref, locator, revision, excerpt FROM evidence "
                         "WHERE id = ? AND project = ?", (evidence_id, project))

    def evidence_by_source(self, project: str, source_ref: str, locator: str) -> list[dict]:
        """Evidence with this source_ref and locator, oldest first."""
        key = (project, source_ref, locator)
        if key not in self._sources:
            self._sources[key] = self._all(f"SELECT {EVIDENCE_SOURCE_COLUMNS} FROM evidence WHERE project = ? "
                                           "AND source_ref = ? AND locator = ? ORDER BY seq", key)
        return [dict(row) for row in self._sources[key]]

    def evidence_by_sources(self, project: str, sources: list[tuple[str, str]]) -> None:
        """Ask for the evidence of several (source_ref, locator) pairs in one query; the answers
        are kept for evidence_by_source."""
        todo = [key for key in dict.fromkeys((project, ref, locator) for ref, locator in sources)
                if key not in self._sources]
        if len(todo) < 2:
            for key in todo:
                self.evidence_by_source(*key)
            return
        # the pairs drive the join: each is one search of the (project, source_ref, locator) index
        # (a row-value IN (VALUES ...) is planned as a search on project alone: every evidence row)
        pairs = ", ".join("(?, ?)" for _ in todo)
        rows = self._all(f"WITH wanted(source_ref, locator) AS (VALUES {pairs}) "
                         f"SELECT e.seq, e.id, e.source_kind, e.revision, e.content_hash, e.excerpt, e.source_ref, "
                         f"e.locator FROM wanted {self.JOIN_IN_ORDER} evidence e ON e.project = ? "
                         "AND e.source_ref = wanted.source_ref AND e.locator = wanted.locator ORDER BY e.seq",
                         (*(value for key in todo for value in key[1:]), project))
        for key in todo:
            self._sources[key] = []
        for row in rows:
            self._sources[(project, row.pop("source_ref"), row.pop("locator"))].append(row)

    def add_evidence(self, record: dict) -> int:
        """Insert an evidence record; the first of its (source_ref, locator) says so, and a unique
        index lets only one record be first (a concurrent second one is refused and retried)."""
        values = self._evidence_values(record)
        seq = self._insert(f"{INSERT_EVIDENCE} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values)
        self._added_evidence(record)["seq"] = seq
        self._new_evidence.add(seq)
        return seq

    def add_finding_with_evidence(self, record: dict, tags: list[str], evidence: list[dict]) -> tuple[int, list[int]]:
        """add_finding, then add_evidence for each record in order: (the finding's seq, the
        records' seqs). A backend may send them together."""
        return self.add_finding(record, tags), [self.add_evidence(r) for r in evidence]

    def _evidence_values(self, record: dict) -> tuple:
        first = not self.evidence_by_source(record["project"], record["source_ref"], record["locator"])
        return tuple(record[k] for k in EVIDENCE_COLUMNS[:-1]) + (first,)

    def _added_evidence(self, record: dict) -> dict:
        """Remember a record this transaction writes (its seq is filled in once known)."""
        row = {"seq": None, "id": record["id"], "source_kind": record["source_kind"], "revision": record["revision"],
               "content_hash": record["content_hash"], "excerpt": record["excerpt"]}
        self._sources[(record["project"], record["source_ref"], record["locator"])].append(row)
        return row

    def link_evidence(self, finding_seq: int, evidence_seq: int, link: dict, at: str) -> bool:
        """Link evidence to a finding (`link`: relation, method, rationale, its writer, the finding's
        version it was linked at and what the source check found); False when that exact link
        exists already."""
        sql = ("INSERT INTO finding_evidence (finding_seq, evidence_seq, relation, method, rationale, created_at, "
               "writer_json, finding_version, source_check) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
        params = (finding_seq, evidence_seq, link["relation"], link["method"], link["rationale"], at,
                  canonical_json(link["writer"]), link["finding_version"], link["source_check"])
        if finding_seq in self._new_findings or evidence_seq in self._new_evidence:
            # one end is this transaction's own row: only this transaction can have linked it
            if params[:3] in self._new_links:
                return False
            self._new_links.add(params[:3])
            self._send(sql, params)
            return True
        return self._changed(sql, params)

    def links(self, finding_seq: int) -> list[dict]:
        rows = self._all(f"SELECT e.id, e.source_kind, {LINK_COLUMNS} FROM finding_evidence fe "
                         f"JOIN evidence e ON e.seq = fe.evidence_seq WHERE fe.finding_seq = ? {LINK_ORDER}",
                         (finding_seq,))
        return [{"evidence_id": r["id"], "relation": r["relation"], "method": r["method"],
                 "source_kind": r["source_kind"], "writer": json.loads(r["writer_json"]),
                 "finding_version": r["finding_version"], "source_check": r["source_check"]} for r in rows]

    def linked_evidence(self, finding_seq: int, relation: str | None = None, *, limit: int = -1,
                        offset: int = 0) -> list[dict]:
        """The evidence records linked to the finding with their link (relation, method, rationale,
        linked_at), in link order; only one relation's when given; a page of `limit` from `offset`
        (-1: all)."""
        sql = ("SELECT e.id, e.source_kind, e.source_ref, e.locator, e.revision, e.content_hash, e.excerpt, "
               f"{LINK_COLUMNS}, fe.rationale, fe.created_at AS linked_at "
               "FROM finding_evidence fe JOIN evidence e ON e.seq = fe.evidence_seq WHERE fe.finding_seq = ? "
               + ("AND fe.relation = ? " if relation else "") + f"{LINK_ORDER} LIMIT ? OFFSET ?")
        params = ((finding_seq, relation) if relation else (finding_seq,))
        rows = self._all(sql, params + (self.ALL_ROWS if limit < 0 else limit, offset))
        for row in rows:
            row["writer"] = json.loads(row.pop("writer_json"))
        return rows

    def evidence_links(self, finding_seq: int) -> int:
        """How many evidence links the finding has."""
        return self._how_many("SELECT COUNT(*) AS n FROM finding_evidence WHERE finding_seq = ?", (finding_seq,))

    # -- relations between findings ---------------------------------------------------------------
    def reaches(self, start_seq: int, relation: str, goal_seq: int) -> bool:
        """Does a chain of `relation` links lead from start to goal?"""
        return self._one(
            "WITH RECURSIVE reach(seq) AS (SELECT CAST(? AS BIGINT) UNION SELECT r.to_seq FROM finding_relations r "
            "JOIN reach ON r.from_seq = reach.seq WHERE r.relation = ?) SELECT 1 AS hit FROM reach "
            "WHERE seq = ? LIMIT 1", (start_seq, relation, goal_seq)) is not None

    def add_relation(self, from_seq: int, relation: str, to_seq: int, note: str, at: str) -> bool:
        return self._changed("INSERT INTO finding_relations (from_seq, relation, to_seq, note, created_at) "
                             "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", (from_seq, relation, to_seq, note, at))

    def relations(self, seq: int) -> list[dict]:
        return self._all(
            f"SELECT CAST('outgoing' AS TEXT){self.TEXT_C} AS direction, r.relation, f.id, f.statement, "
            "f.epistemic_state, f.lifecycle_state, r.note, r.created_at FROM finding_relations r "
            "JOIN findings f ON f.seq = r.to_seq WHERE r.from_seq = ? UNION ALL SELECT 'incoming', r.relation, f.id, "
            "f.statement, f.epistemic_state, f.lifecycle_state, r.note, r.created_at FROM finding_relations r "
            "JOIN findings f ON f.seq = r.from_seq WHERE r.to_seq = ? ORDER BY 8, 1, 2, 3", (seq, seq))

    # -- events -----------------------------------------------------------------------------------
    def add_event(self, record: dict) -> None:
        self._send(
            "INSERT INTO finding_events (id, finding_seq, kind, tool, from_state, to_state, reason, payload_json, "
            "version, at, writer_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (record["id"], record["finding_seq"], record["kind"], record["tool"], record["from_state"],
             record["to_state"], record["reason"], canonical_json(record["payload"]), record["version"],
             record["at"], canonical_json(record["writer"])))

    def events(self, seq: int, limit: int) -> tuple[list[dict], int]:
        """The last `limit` events of a finding, oldest first, and how many it has in all."""
        rows = self._all("SELECT * FROM (SELECT * FROM finding_events WHERE finding_seq = ? ORDER BY seq DESC "
                         "LIMIT ?) last ORDER BY seq", (seq, limit))
        for event in rows:
            event["payload"] = json.loads(event.pop("payload_json"))
            event["writer"] = json.loads(event.pop("writer_json"))
        total = self._how_many("SELECT COUNT(*) AS n FROM finding_events WHERE finding_seq = ?", (seq,))
        return rows, total

    def state_moves(self, seq: int) -> list[dict]:
        """Every event of a finding that moved a state (from_state, to_state, version), oldest first."""
        return self._all("SELECT from_state, to_state, version FROM finding_events WHERE finding_seq = ? "
                         "AND from_state IS NOT NULL AND to_state IS NOT NULL ORDER BY seq", (seq,))

    # -- documents and rule proposals -------------------------------------------------------------
    def add_document_link(self, record: dict) -> bool:
        return self._changed(
            "INSERT INTO document_links (id, finding_seq, target_kind, target, relation, note, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (finding_seq, target_kind, target, relation) DO NOTHING",
            (record["id"], record["finding_seq"], record["target_kind"], record["target"], record["relation"],
             record["note"], record["created_at"]))

    def documents(self, seq: int) -> list[dict]:
        return self._all("SELECT * FROM document_links WHERE finding_seq = ? ORDER BY seq", (seq,))

    def add_proposal(self, record: dict) -> None:
        self._send(
            "INSERT INTO rule_proposals (id, project, finding_seq, rule_text, target_path, rationale, status, version, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?)",
            (record["id"], record["project"], record["finding_seq"], record["rule_text"], record["target_path"],
             record["rationale"], record["status"], record["created_at"]))

    def proposal(self, project: str, proposal_id: str) -> dict | None:
        return self._one("SELECT p.*, f.id AS finding_id, f.version AS finding_version FROM rule_proposals p "
                         "JOIN findings f ON f.seq = p.finding_seq WHERE p.id = ? AND p.project = ?",
                         (proposal_id, project))

    def proposals(self, seq: int) -> list[dict]:
        return self._all("SELECT * FROM rule_proposals WHERE finding_seq = ? ORDER BY seq", (seq,))

    def decide_proposal(self, seq: int, version: int, status: str, at: str, by: str, note: str) -> bool:
        return self._changed("UPDATE rule_proposals SET status = ?, version = version + 1, decided_at = ?, "
                             "decided_by = ?, decision_note = ? WHERE seq = ? AND version = ?",
                             (status, at, by, note, seq, version))

    # -- idempotency ------------------------------------------------------------------------------
    def remembered(self, project: str, key: str) -> dict | None:
        row = self._one("SELECT tool, payload_hash, response FROM idempotency_keys WHERE project = ? AND key = ?",
                        (project, key))
        return None if row is None else {"tool": row["tool"], "payload_hash": row["payload_hash"],
                                         "response": json.loads(row["response"])}

    def remember(self, project: str, key: str, tool: str, payload_hash: str, response: dict, at: str) -> None:
        self._send("INSERT INTO idempotency_keys (project, key, tool, payload_hash, response, created_at) "
                   "VALUES (?, ?, ?, ?, ?, ?)", (project, key, tool, payload_hash, canonical_json(response), at))
