"""The evidence ledger's persistence operations, written once for both SQL backends (as
findings_sql is for the finding ledger): one transaction within one project, in the shapes of
evidence_rows (filed records in, records with their JSON read out).

The statements are in SQLite's placeholder style (`?`); a backend's transaction class supplies the
primitives of store/sql.py (PostgreSQL converts the placeholders, matches a list as one array, and
holds back statements whose answer nobody reads until the next that is read). Every lookup
searches an index on its whole key (tests/evidence/test_evidence_plans.py reads the plans on both
backends).
"""
from __future__ import annotations

from typing import Sequence

from . import evidence_rows as layout
from .sql import Primitives, marks

SELECT = layout.SELECT
INSERT_RECORD = (f"INSERT INTO ledger_records (project, {', '.join(layout.INSERTED)}) "
                 f"VALUES ({marks(1 + len(layout.INSERTED))})")
SELECT_INTERPRETATION = "SELECT seq, id, recorded_at, body, redaction_id FROM ledger_interpretations"
SELECT_REDACTION = "SELECT id, record_id, event FROM ledger_redactions"
# the interpretations stored before their keys were (the keys migration), and the end of that wait
UNKEYED = ("SELECT project, seq, body FROM ledger_interpretations WHERE seq <= "
           "(SELECT MAX(through) FROM ledger_keys_pending) ORDER BY seq")
KEYED_ALL = "UPDATE ledger_keys_pending SET through = 0"


class EvidenceOps(Primitives):
    """The operations of one transaction within `project`."""

    def __init__(self, project: str):
        self.project = project

    def insert(self, filed: list[dict]) -> None:
        rows = (layout.row(f) for f in filed)
        self._send_many(INSERT_RECORD, [(self.project, *(r[k] for k in layout.INSERTED)) for r in rows])

    def rows(self) -> list[dict]:
        return [layout.record(r) for r in self._all(
            f"SELECT {SELECT} FROM ledger_records WHERE project = ? ORDER BY seq", (self.project,))]

    def row(self, record_id: str) -> dict | None:
        r = self._one(f"SELECT {SELECT} FROM ledger_records WHERE project = ? AND id = ?", (self.project, record_id))
        return layout.record(r) if r else None

    def rows_about(self, subject: str) -> list[dict]:
        """The records whose subject this is, in ledger order (each with its `seq`)."""
        return self._seq_rows("subject = ?", (subject,))

    def locks_inside(self, sources: list[str]) -> list[dict]:
        """The lock records inside these sources, in ledger order (each with its `seq`)."""
        return self._seq_rows_among("source_id IS NOT NULL AND ", "source_id", sources)

    def rows_named(self, ids: list[str]) -> list[dict]:
        """The records with these ids, in ledger order (each with its `seq`)."""
        return self._seq_rows_among("", "id", ids)

    def _seq_rows_among(self, where: str, column: str, values: list[str]) -> list[dict]:
        """`_seq_rows` of the rows whose `column` is one of `values`, a statement per chunk of them
        (a row has one value of the column, so none comes back twice)."""
        rows = []
        for chunk in self._lists(values):
            among, params = self._in(column, chunk)
            rows += self._seq_rows(where + among, params)
        return sorted(rows, key=lambda r: r["seq"])

    def observed_from(self, second: int) -> list[dict]:
        """The records observed in or after this second (UTC, since 1970), in ledger order (read in
        the index's order: there are few, and the project has many rows before them)."""
        return sorted((layout.record(r) for r in self._all(
            f"SELECT seq, {SELECT} FROM ledger_records WHERE project = ? AND observed_s >= ? ORDER BY observed_s",
            (self.project, second))), key=lambda r: r["seq"])

    def _seq_rows(self, where: str, params: tuple) -> list[dict]:
        return [layout.record(r) for r in self._all(
            f"SELECT seq, {SELECT} FROM ledger_records WHERE project = ? AND {where} ORDER BY seq",
            (self.project, *params))]

    def owner(self, name: str) -> str | None:
        """The id of the first record that answers to `name` (as record id, message id or lock id):
        three searches of their indexes, not one of the project's rows."""
        r = self._one(
            "SELECT id FROM (SELECT seq, id FROM ledger_records WHERE project = ? AND id = ? UNION ALL "
            "SELECT seq, id FROM ledger_records WHERE project = ? AND message_id = ? UNION ALL "
            "SELECT seq, id FROM ledger_records WHERE project = ? AND lock_id = ?) named ORDER BY seq LIMIT 1",
            (self.project, name) * 3)
        return r["id"] if r else None

    def redaction_rows(self) -> list[dict]:
        return [layout.redaction(r) for r in self._all(f"{SELECT_REDACTION} WHERE project = ? ORDER BY seq",
                                                       (self.project,))]

    def redaction(self, redaction_id: str) -> dict | None:
        r = self._one(f"{SELECT_REDACTION} WHERE project = ? AND id = ?", (self.project, redaction_id))
        return layout.redaction(r) if r else None

    def clear(self, events: list[dict]) -> None:
        """Record each redaction event and clear its record's personal fields."""
        for event in events:
            self._send("INSERT INTO ledger_redactions (project, id, record_id, event) VALUES (?, ?, ?, ?)",
                       (self.project, event["id"], event["record"], layout.dumps(event)))
            self._send("UPDATE ledger_records SET personal = NULL, redaction_id = ? WHERE project = ? AND id = ?",
                       (event["id"], self.project, event["record"]))

    def add_interpretation(self, interpretation: dict, recorded_at: str, keys: Sequence[str] = ()) -> None:
        """Store an interpretation and the keys it is found by (evidence.touches), without waiting
        for its seq (on PostgreSQL both travel in one message)."""
        self._send("INSERT INTO ledger_interpretations (project, id, recorded_at, body) VALUES (?, ?, ?, ?)",
                   (self.project, interpretation["id"], recorded_at, layout.dumps(interpretation)))
        for chunk in self._lists(keys):
            # WHERE true: SQLite reads ON CONFLICT after a join's ON as the join's constraint otherwise
            self._send(f"WITH wanted(key) AS (VALUES {', '.join(['(?)'] * len(chunk))}) "
                       "INSERT INTO ledger_interpretation_keys (project, key, interpretation_seq) "
                       "SELECT ?, wanted.key, i.seq FROM wanted JOIN ledger_interpretations i "
                       "ON i.project = ? AND i.id = ? WHERE true ON CONFLICT DO NOTHING",
                       (*chunk, self.project, self.project, interpretation["id"]))

    def add_keys(self, seq: int, keys: Sequence[str]) -> None:
        self._send_many("INSERT INTO ledger_interpretation_keys (project, key, interpretation_seq) VALUES (?, ?, ?) "
                        "ON CONFLICT DO NOTHING", [(self.project, k, seq) for k in keys])

    def interpretation_rows(self) -> list[dict]:
        return [layout.interpretation(r) for r in self._all(f"{SELECT_INTERPRETATION} WHERE project = ? ORDER BY seq",
                                                            (self.project,))]

    def keyed(self, keys: list[str]) -> list[int]:
        """The seqs of the stored interpretations found by any of these keys, in append order."""
        found: set[int] = set()
        for chunk in self._lists(keys):
            wanted, params = self._in("key", chunk)
            found.update(r["interpretation_seq"] for r in self._all(
                f"SELECT DISTINCT interpretation_seq FROM ledger_interpretation_keys WHERE project = ? AND {wanted}",
                (self.project, *params)))
        return sorted(found)

    def interpretations_at(self, seqs: list[int]) -> list[dict]:
        """These stored interpretations (withdrawn ones without their body) with their keys, in append order."""
        rows = []
        for chunk in self._lists(seqs):
            at, params = self._in("seq", chunk, "bigint")
            rows += self._all(f"{SELECT_INTERPRETATION} WHERE project = ? AND {at}", (self.project, *params))
        out = {r["seq"]: dict(layout.interpretation(r), keys=[]) for r in sorted(rows, key=lambda r: r["seq"])}
        for chunk in self._lists(out):
            of, params = self._in("interpretation_seq", chunk, "bigint")
            for r in self._all(f"SELECT interpretation_seq, key FROM ledger_interpretation_keys WHERE {of}", params):
                out[r["interpretation_seq"]]["keys"].append(r["key"])
        return list(out.values())

    def withdraw(self, ids: list[str], redaction_id: str) -> None:
        """Clear the bodies of these interpretations, pointing at the redaction that withdrew them."""
        self._send_many("UPDATE ledger_interpretations SET body = NULL, redaction_id = ? WHERE project = ? AND id = ?",
                        [(redaction_id, self.project, i) for i in ids])
