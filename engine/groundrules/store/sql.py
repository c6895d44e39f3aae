"""What the statements written once for both SQL backends (findings_sql, evidence_sql,
decisions_sql) run on: a backend's primitives.

The shared statements use SQLite's `?` placeholders; a backend runs them through these methods
(sqlite_base.SqliteStatements, postgres_base.PostgresTx), which convert what differs: the
placeholder style, how a written row's seq or count comes back, whether a statement waits to travel
with the next one, how a list of values is matched (`_in`: SQLite binds one placeholder per
value, PostgreSQL one array), and how long a list one statement carries (`_lists`).
"""
from __future__ import annotations

from typing import Iterable, Iterator, Sequence


class Primitives:
    """The statements' primitives; rows come back as plain dicts."""

    def _one(self, sql: str, params: Sequence = ()) -> dict | None:
        raise NotImplementedError

    def _all(self, sql: str, params: Sequence = ()) -> list[dict]:
        raise NotImplementedError

    def _how_many(self, sql: str, params: Sequence) -> int:
        """The `n` of a `SELECT COUNT(*) AS n ...`: an aggregate answers one row whatever matches."""
        row = self._one(sql, params)
        assert row is not None, "an aggregate answers one row"
        return row["n"]

    def _changed(self, sql: str, params: Sequence) -> bool:
        """Run an INSERT or UPDATE of at most one row: did it write it?"""
        raise NotImplementedError

    def _count(self, sql: str, params: Sequence) -> int:
        """Run an UPDATE or DELETE: how many rows it touched."""
        raise NotImplementedError

    def _send(self, sql: str, params: Sequence = ()) -> None:
        """Run a statement whose answer nobody reads (a backend may send it later, before COMMIT)."""
        raise NotImplementedError

    def _send_many(self, sql: str, rows: Iterable[Sequence]) -> None:
        """`_send` once per row of parameters."""
        raise NotImplementedError

    def _insert(self, sql: str, params: Sequence) -> int:
        """Run a one-row INSERT; the new row's seq."""
        raise NotImplementedError

    def _in(self, column: str, values: Sequence, kind: str = "text") -> tuple[str, tuple]:
        """A condition that `column` is one of `values` (of SQL type `kind`), and its parameters."""
        raise NotImplementedError

    def _lists(self, values: Iterable) -> Iterator[list]:
        """`values`, each once and in order, in the lists one statement may carry (in `_in`, or as
        VALUES rows): one statement per list."""
        raise NotImplementedError


def marks(n: int) -> str:
    """`n` placeholders, comma-separated."""
    return ", ".join("?" * n)


def distinct(values: Iterable) -> list:
    """`values` without repeats, in order."""
    return list(dict.fromkeys(values))
