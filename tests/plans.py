"""Reading query plans (issue 19, item 5): every lookup a write makes must find its rows through an
index on its whole key, so that a call costs the same in a large project as in a small one.

`capture(store)` records the statements the store sends while the block runs (SQLite: the
connection's trace callback; PostgreSQL: every statement a write batches and every one a read
executes, as the server receives them). `problems(store, statements)` explains each lookup
(SELECT, WITH, UPDATE) on the store's database and says what reads more than the call's own rows: a
full scan of a table, or an index searched on the project alone.
"""
from __future__ import annotations

import json
import re
from contextlib import contextmanager
from typing import Iterator

LOOKUPS = ("SELECT", "WITH", "UPDATE")


def is_postgres(store) -> bool:
    return hasattr(store, "pool")


@contextmanager
def capture(store, monkeypatch) -> Iterator[list[str]]:
    seen: list[str] = []
    if not is_postgres(store):
        store.conn.set_trace_callback(seen.append)
        try:
            yield seen
        finally:
            store.conn.set_trace_callback(None)
        return
    import psycopg
    from groundrules.store.postgres_base import Statements
    real_send, real_execute = Statements.send, psycopg.Connection.execute

    def send(self, sql, params=None):
        seen.append(self._cursor.mogrify(sql, params) if params else sql)
        return real_send(self, sql, params)

    def execute(self, sql, params=None, **kw):
        seen.append(psycopg.ClientCursor(self).mogrify(sql, params) if params else sql)
        return real_execute(self, sql, params, **kw)
    monkeypatch.setattr(Statements, "send", send)
    monkeypatch.setattr(psycopg.Connection, "execute", execute)
    try:
        yield seen
    finally:
        monkeypatch.undo()


def lookups(statements: list[str]) -> list[str]:
    return [s for s in statements if s.split(None, 1)[0].upper() in LOOKUPS]


def problems(store, statements: list[str], tables: set[str]) -> list[str]:
    """What each lookup among `statements` reads beyond its key, as 'statement: plan line'."""
    found = []
    for sql in lookups(statements):
        for line in (_pg_plan(store, sql) if is_postgres(store) else _sqlite_plan(store, sql)):
            bad = _pg_problem(line, tables) if is_postgres(store) else _sqlite_problem(line, tables)
            if bad:
                found.append(f"{sql[:160]} -> {bad}")
    return found


# -- SQLite ---------------------------------------------------------------------------------------

def _sqlite_plan(store, sql: str) -> list[str]:
    return [row[3] for row in store.conn.execute("EXPLAIN QUERY PLAN " + sql)]


def _sqlite_problem(line: str, tables: set[str]) -> str | None:
    scan = re.match(r"SCAN (\w+)", line)
    if scan and scan.group(1) in tables:
        return line                                        # every row of the table
    search = re.match(r"SEARCH (\w+) USING .*INDEX \w+ \((.*)\)", line)
    if search and search.group(2).strip() == "project=?":
        return line                                        # every row of the project
    return None


# -- PostgreSQL -----------------------------------------------------------------------------------

def _pg_plan(store, sql: str) -> list[dict]:
    with store.pool.connection() as conn:
        with conn.transaction(force_rollback=True):        # an UPDATE is explained, never run
            rows = conn.execute("EXPLAIN (FORMAT JSON) " + sql).fetchall()
    plan = rows[0]["QUERY PLAN"] if isinstance(rows[0], dict) else rows[0][0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    nodes, todo = [], [plan[0]["Plan"]]
    while todo:
        node = todo.pop()
        nodes.append(node)
        todo += node.get("Plans", [])
    return nodes


def _pg_problem(node: dict, tables: set[str]) -> str | None:
    relation = node.get("Relation Name")
    if relation not in tables:
        return None
    if node["Node Type"] == "Seq Scan":
        return f"Seq Scan on {relation}"
    condition = node.get("Index Cond", "")
    if "Index" in node["Node Type"] and re.fullmatch(r"\(\(?(\w+\.)?project = [^()]*\)?\)", condition):
        return f"{node['Node Type']} on {relation} by ({condition}) alone"
    if "Bitmap" in node["Node Type"] and re.fullmatch(r"\(\(?(\w+\.)?project = [^()]*\)?\)", condition):
        return f"{node['Node Type']} on {relation} by ({condition}) alone"
    return None


def analyze(store) -> None:
    """Fresh planner statistics, as a database in use has them."""
    if is_postgres(store):
        with store.pool.connection() as conn:
            conn.execute("ANALYZE")
    else:
        store.conn.execute("ANALYZE")
