"""Concurrent writers on PostgreSQL and on SQLite (issue 10), called by bench_ledger.py --db …

Each writer is its own process (as hosts are) with its own ledger; all start together on an event,
and the rate is every committed log_finding over the wall time from the start to the last commit.
Each writer cites sources of its own (`run:7@w3`), as hosts logging their own runs do, so the tool
writes exactly the rows the floor writes. The floor is raw INSERTs of the same rows (finding, tags,
search terms, two evidence records and links, the created event; one transaction per finding) by as
many processes on the same database. One more configuration, 4 writers citing one list of sources in
step (`shared`: each finding's new evidence raced by three other hosts), measures the contended
case, where the unique keys refuse and the calls re-run to reuse the winner's record.
Rounds interleave every configuration (backend x writers x tool/raw); medians and ratios are
printed. Then query_findings medians at 10k and 100k findings on PostgreSQL.

With --recovery (issue 19, item 3), only this: the two ways for a call to survive the pooled
connections a server restart ended, on PostgreSQL with 1 and 4 writers in interleaved rounds:
`tool` as the store does it (a transaction whose first message meets an ended connection runs again
on a fresh one: nothing before a call), `check` with psycopg_pool's check callback
(ConnectionPool.check_connection: an empty query before every call hands a connection out), and
get_finding's median latency both ways.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _with_pool_check(ledger) -> None:
    """psycopg_pool's check callback on the ledger's pool (the alternative measured by --recovery)."""
    from psycopg_pool import ConnectionPool
    ledger.store.pool._check = ConnectionPool.check_connection


def _writer(kind: str, db: str, project: str, n: int, seed: int, shared: bool, ready, go, out) -> None:
    sys.path.insert(0, str(ROOT / "engine"))
    from bench_ledger import TABLES, Ledger, args_for
    from groundrules import load_rulebook
    rng = random.Random(seed)
    calls = [args_for(i, rng) for i in range(n)]
    for a in calls:
        for e in a["evidence"]:
            e["source_ref"] += "" if shared else f"@w{seed}"
    tag = uuid.uuid4().hex[:8]
    if kind in ("tool", "check"):
        ledger = Ledger(db, project=project, rulebook=load_rulebook(ROOT, TABLES))
        if kind == "check":
            _with_pool_check(ledger)
        run = lambda a, i: ledger.call("log_finding", a)["ok"] or sys.exit("log_finding refused")  # noqa: E731
    else:
        run, ledger = _raw(db, project, tag)
    ready.put(1)
    go.wait()
    for i, a in enumerate(calls):
        run(a, i)
    out.put(time.monotonic())
    ledger.close()


def _raw(db: str, project: str, tag: str):
    """The raw-INSERT floor on `db`'s backend: the same rows, one transaction per finding."""
    from bench_ledger import EVENT_SQL, LINK_SQL, WRITER
    from groundrules.findings.evidence_items import content_hash
    from groundrules.store import open_finding_store
    from groundrules.store.cjk_search import grams
    store = open_finding_store(db)
    pg = db.startswith("postgresql://")
    if pg:
        from groundrules.store.findings_postgres import tsvector_text

    def run(a: dict, i: int) -> None:
        def body(tx):
            if pg:      # answers read where needed; the rest travels with the next statement read
                q = lambda sql, p: tx.conn.execute(sql.replace("?", "%s"), p)  # noqa: E731
                send = lambda sql, p: tx.conn.send(sql.replace("?", "%s"), p)  # noqa: E731
            else:
                q = send = tx.conn.execute
            fid = f"F-{tag}-{i}"
            row = q("INSERT INTO findings (id, project, claim_kind, statement, details, epistemic_state, "
                    "lifecycle_state, scope_json, retrieval_policy, version, created_at, updated_at"
                    + (", search" if pg else "") + ") VALUES (?, ?, ?, ?, '', ?, 'active', '{}', 'relevant', 1, 't', 't'"
                    + (", ?::tsvector) RETURNING seq" if pg else ")"),
                    (fid, project, a["claim_kind"], a["statement"], a["epistemic_state"])
                    + ((tsvector_text(a["statement"]),) if pg else ()))
            seq = row.fetchone()["seq"] if pg else row.lastrowid
            for t in a["tags"]:
                send("INSERT INTO finding_tags VALUES (?, ?)", (seq, t))
            if not pg:
                send("INSERT INTO findings_search (rowid, grams) VALUES (?, ?)", (seq, grams(a["statement"])))
            for j, e in enumerate(a["evidence"]):
                ev = q("INSERT INTO evidence (id, project, source_kind, source_ref, content_hash, excerpt, created_at) "
                       "VALUES (?, ?, ?, ?, ?, ?, 't')" + (" RETURNING seq" if pg else ""),
                       (f"E-{tag}-{i}-{j}", project, e["source_kind"], e["source_ref"], content_hash(e["excerpt"]),
                        e["excerpt"]))
                ev = ev.fetchone()["seq"] if pg else ev.lastrowid
                send(LINK_SQL, (seq, ev, e["relation"], e["method"], WRITER))
            send(EVENT_SQL, (f"EV-{tag}-{i}", seq, WRITER))
        store.run_write(body, appends_only=True)
    return run, store


def aborted_transactions(db: str) -> int:
    """PostgreSQL's count of rolled-back transactions in `db` (serialization failures retried by
    run_write are among them); 0 for SQLite."""
    if not db.startswith("postgresql://"):
        return 0
    import psycopg
    with psycopg.connect(db, autocommit=True) as conn:
        conn.execute("SELECT pg_stat_clear_snapshot()")
        return conn.execute("SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()"
                            ).fetchone()[0]


def committed_per_second(kind: str, db: str, writers: int, per_writer: int, round_: int,
                         shared: bool = False) -> tuple[float, int]:
    """(committed findings per second, transactions rolled back meanwhile)."""
    ctx = mp.get_context("spawn")
    ready, out, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    project = f"w{round_}-{kind}-{writers}-{uuid.uuid4().hex[:6]}"
    procs = [ctx.Process(target=_writer, args=(kind, db, project, per_writer, 100 * round_ + n, shared,
                                                        ready, go, out))
             for n in range(writers)]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=120)
    aborted = aborted_transactions(db)
    start = time.monotonic()
    go.set()
    ends = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        if p.exitcode != 0:
            raise SystemExit(f"a {kind} writer failed")
    time.sleep(1.0)         # the backends of the writers' connections report their statistics as they exit
    return writers * per_writer / (max(ends) - start), aborted_transactions(db) - aborted


def bench_concurrent_writes(pg: str, sqlite_path: str, per_writer: int, rounds: int) -> None:
    configs = [(backend, db, writers, kind) for backend, db in (("postgres", pg), ("sqlite", sqlite_path))
               for writers, kinds in ((1, ("tool", "raw")), (4, ("tool", "raw", "shared"))) for kind in kinds]
    rates: dict = {c[:1] + c[2:]: [] for c in configs}
    aborted: dict = {c[:1] + c[2:]: [] for c in configs}
    for r in range(rounds):
        order = configs if r % 2 == 0 else configs[::-1]          # interleaved, alternating direction
        for backend, db, writers, kind in order:
            rate, rolled_back = committed_per_second("tool" if kind == "shared" else kind, db, writers,
                                                     per_writer // writers, r, shared=kind == "shared")
            rates[(backend, writers, kind)].append(rate)
            aborted[(backend, writers, kind)].append(rolled_back)
    def retried(backend: str, writers: int) -> str:
        if backend != "postgres":
            return ""
        share = {kind: statistics.median(aborted[(backend, writers, kind)]) / per_writer * 100
                 for kind in ("tool", "raw", "shared") if (backend, writers, kind) in aborted}
        return "   rolled back per 100 commits: " + ", ".join(f"{k} {v:.1f}" for k, v in share.items())
    print(f"committed log_finding/s, {per_writer} findings per configuration, {rounds} interleaved rounds "
          "(median; tool/raw = share of the raw-INSERT floor):")
    for backend in ("postgres", "sqlite"):
        for writers in (1, 4):
            tool = statistics.median(rates[(backend, writers, "tool")])
            raw = statistics.median(rates[(backend, writers, "raw")])
            print(f"  {backend:8} {writers} writer{'s' if writers > 1 else ' '}: tool {tool:7.0f}/s   raw INSERT "
                  f"{raw:7.0f}/s   tool/raw {tool / raw:.2f}   (tool rounds: "
                  + ", ".join(f"{v:.0f}" for v in rates[(backend, writers, "tool")]) + ")" + retried(backend, writers))
            if (backend, writers, "shared") in rates:
                print(f"  {backend:8} {writers} writers citing the same sources: tool "
                      f"{statistics.median(rates[(backend, writers, 'shared')]):7.0f}/s")


def bench_recovery(pg: str, book, per_writer: int, rounds: int, cluster=None) -> None:
    """The store's recovery (nothing before a call) against psycopg_pool's check callback; with a
    throwaway cluster, also the first calls after a restart of the server, both ways."""
    rates: dict = {(w, k): [] for w in (1, 4) for k in ("tool", "check")}
    for r in range(rounds):
        order = list(rates) if r % 2 == 0 else list(rates)[::-1]
        for writers, kind in order:
            rates[(writers, kind)].append(committed_per_second(kind, pg, writers, per_writer // writers, r)[0])
    print(f"committed log_finding/s on PostgreSQL, {per_writer} findings per configuration, {rounds} interleaved "
          "rounds (median):")
    for writers in (1, 4):
        tool, check = (statistics.median(rates[(writers, k)]) for k in ("tool", "check"))
        print(f"  {writers} writer{'s' if writers > 1 else ' '}: as the store does it {tool:6.0f}/s   with the "
              f"pool's check callback {check:6.0f}/s   check/store {check / tool:.2f}")
    from bench_ledger import Ledger, args_for
    plain, checked = (Ledger(pg, project="reads", rulebook=book) for _ in range(2))
    _with_pool_check(checked)
    fid = plain.call("log_finding", args_for(0, random.Random(0)))["data"]["finding_id"]
    times: dict = {"store": [], "check": []}
    for n in range(400):
        for name, ledger in (("store", plain), ("check", checked)) if n % 2 == 0 else (("check", checked), ("store", plain)):
            t = time.perf_counter()
            assert ledger.call("get_finding", {"finding_id": fid})["ok"]
            times[name].append(time.perf_counter() - t)
    store, check = (statistics.median(times[k][50:]) * 1000 for k in ("store", "check"))
    print(f"get_finding median: as the store does it {store:.3f} ms, with the pool's check callback {check:.3f} ms, "
          f"check/store {check / store:.2f}")
    if cluster is not None:
        import threading
        for restart in range(rounds):
            for name, ledger in (("store", plain), ("check", checked)):
                threads = [threading.Thread(target=ledger.call, args=("get_finding", {"finding_id": fid}))
                           for _ in range(4)]            # as many pooled connections as a pool holds
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            cluster.restart("fast")
            for name, ledger in (("store", plain), ("check", checked)) if restart % 2 == 0 else (
                    ("check", checked), ("store", plain)):
                firsts = []
                for _ in range(4):
                    t = time.perf_counter()
                    answer = ledger.call("get_finding", {"finding_id": fid})
                    firsts.append(f"{(time.perf_counter() - t) * 1000:.0f} ms "
                                  + ("ok" if answer["ok"] else answer["error"]["message"]))
                print(f"after restart {restart + 1}, the first 4 get_finding {'as the store does it' if name == 'store' else 'with the check callback'}: "
                      + ", ".join(firsts))
    plain.close()
    checked.close()


def fill_postgres(ledger, start: int, stop: int, rng: random.Random) -> None:
    """Grow a PostgreSQL ledger fast: COPY the findings and tags log_finding would write for the same
    arguments (statement, states, scope, tags, search terms; not the evidence and events, which
    query_findings never reads). The real log_finding on 100k findings takes ~15 min on this machine."""
    from bench_ledger import args_for
    from groundrules.store.findings_postgres import tsvector_text
    project, rows = ledger.caller.projects[0], []
    for i in range(start, stop):
        a = args_for(i, rng)
        scope = json.dumps(a["scope"], ensure_ascii=False, separators=(",", ":"))
        rows.append((f"F-fill-{i}", project, a["claim_kind"], a["statement"], "", a["epistemic_state"], "active",
                     scope, "relevant", 1, "2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z",
                     tsvector_text(a["statement"]), a["tags"]))
    with ledger.store.pool.connection() as conn, conn.transaction():
        conn.execute("CREATE TEMP TABLE fill_tags (id text, tags text[]) ON COMMIT DROP")
        with conn.cursor().copy("COPY findings (id, project, claim_kind, statement, details, epistemic_state, "
                                "lifecycle_state, scope_json, retrieval_policy, version, created_at, updated_at, "
                                "search) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row[:-1])
        with conn.cursor().copy("COPY fill_tags (id, tags) FROM STDIN") as copy:
            for row in rows:
                copy.write_row((row[0], row[-1]))
        conn.execute("INSERT INTO finding_tags (finding_seq, tag) SELECT f.seq, unnest(t.tags) FROM fill_tags t "
                     "JOIN findings f ON f.id = t.id")
        conn.execute("ANALYZE findings")


def with_postgres(db: str, book, folder: Path, quick, bench_queries, *, recovery: bool = False,
                  queries_only: bool = False) -> None:
    """Run the PostgreSQL benchmarks on `db`, or on a throwaway cluster when db == 'throwaway';
    `quick` is True for smaller sizes, 'tiny' for a few rows (bench_ledger.py --tiny)."""
    sys.path.insert(0, str(ROOT / "tests"))
    cluster = None
    if db == "throwaway":
        from pg_cluster import start_cluster
        cluster = start_cluster()
        pg = next(cluster)
        db = pg.uri(pg.fresh_database())
    try:
        if recovery:
            bench_recovery(db, book, 400 if quick else 1000, 3 if quick else 5, pg if cluster is not None else None)
            return
        sqlite_path = str(folder / "writers.db")
        tiny = quick == "tiny"
        if not queries_only:
            bench_concurrent_writes(db, sqlite_path, 10 if tiny else 400 if quick else 1000, 1 if tiny else 3)
        sizes = [200] if tiny else [10_000] if quick else [10_000, 100_000]
        bench_queries(book, db, sizes, 2 if tiny else 15 if quick else 31, fill_postgres)
    finally:
        if cluster is not None:
            cluster.close()
