"""Benchmark of the finding ledger, measured through the tool API (Service.call / MCP), with baselines
measured in the same run:

1. committed log_finding/s from one writer, two evidence links each, vs a raw-SQL INSERT of the
   same rows (one transaction per finding, same pragmas);
2. query_findings median at 1k, 10k and 100k findings for a fixed mix (a two-character Chinese
   keyword, a tag, a state filter, a scope_context, all four together), and the 100k/10k ratio;
3. get_finding round trip over MCP stdio vs the same call in process;
4. with --db postgresql://… (or --db throwaway: a cluster started as the tests do): committed
   log_finding/s with 1 and 4 concurrent writer processes on PostgreSQL and on SQLite, each against
   raw INSERTs of the same rows by as many processes (the floor), in paired, interleaved rounds;
   query_findings medians at 10k and 100k findings on PostgreSQL.

Run: .venv/bin/python tests/perf/bench_ledger.py [--quick|--tiny] [--db postgresql://…|throwaway] [--only-postgres]
     [--recovery]  (with --db: only the recovery comparison of bench_ledger_hosts, issue 19)
(--quick: smaller sizes, still a measurement; --tiny: a few rows each, proves the script runs.)
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "engine"))

from groundrules import Caller, FindingLedger, Service, load_rulebook  # noqa: E402
from groundrules.findings import tools  # noqa: E402
from groundrules.findings.evidence_items import content_hash  # noqa: E402
from groundrules.store.cjk_search import grams  # noqa: E402
from groundrules.store.findings_sqlite import SqliteFindingStore as Store  # noqa: E402


class Ledger:
    """The finding ledger as an agent reaches it: every call through the tool registry."""

    def __init__(self, path: Path | str, project: str, rulebook):
        self.ledger = FindingLedger(path, rulebook=rulebook)
        self.store, self.service = self.ledger.store, Service(rulebook, findings=self.ledger)
        self.caller = Caller("bench", "agent", (project,))

    def call(self, tool: str, arguments: dict) -> dict:
        return self.service.call(tool, arguments, self.caller)

    def close(self) -> None:
        self.ledger.close()

TABLES = [ROOT / "rules" / n for n in ("finding_states.yaml", "findings_vocabulary.yaml", "applicability.yaml",
                                       "findings_material_change.yaml", "findings_warnings.yaml", "independent_support.yaml",
                                       "support_reason.yaml", "roles.yaml", "rule_targets.yaml", "finding_provenance.yaml")]
# The raw-INSERT floor writes what log_finding writes: links and events name their writer.
WRITER = '{"auth":{"method":"token"},"principal":"bench","role":"runner"}'
LINK_SQL = ("INSERT INTO finding_evidence (finding_seq, evidence_seq, relation, method, rationale, created_at, "
            "writer_json, finding_version, source_check) VALUES (?, ?, ?, ?, '', 't', ?, 1, 'unchecked')")
EVENT_SQL = ("INSERT INTO finding_events (id, finding_seq, kind, tool, version, at, writer_json) "
             "VALUES (?, ?, 'created', 'log_finding', 1, 't', ?)")
SUBJECTS = ["温度漂移", "批大小", "采样温度", "显存碎片", "KV 缓存", "量化误差", "调度延迟", "off-by-one", "随机种子", "内核融合"]
VERBS = ["导致", "不影响", "放大了", "掩盖了", "部分解释了"]
OBJECTS = ["logits 误差", "吞吐下降", "首 token 延迟", "结果不一致", "内存泄漏"]
TAGS = [f"tag{n}" for n in range(20)] + ["gpu"]
BACKENDS = ["vLLM", "sglang", "trt-llm"]
MIX = {
    "keyword": {"keyword": "漂移"},
    "tag": {"tags": ["gpu"]},
    "state": {"epistemic_state": "provisional"},
    "scope": {"scope_context": {"runtime": {"backend": "vLLM"}, "commit": "c0"}},
    "all four": {"keyword": "漂移", "tags": ["gpu"], "epistemic_state": "provisional",
                 "scope_context": {"runtime": {"backend": "vLLM"}, "commit": "c0"}},
}


def args_for(n: int, rng: random.Random) -> dict:
    statement = f"{rng.choice(SUBJECTS)}{rng.choice(VERBS)}{rng.choice(OBJECTS)}（第 {n} 次观察）"
    return {"claim_kind": "observation", "statement": statement, "epistemic_state": rng.choice(["unassessed", "provisional"]),
            "scope": {"match": {"runtime.backend": rng.choice(BACKENDS)}, "context": {"commit": f"c{n % 3}"},
                      "revalidate_on": ["code_change"]},
            "tags": rng.sample(TAGS, 2),
            "evidence": [{"source_kind": "experiment_run", "source_ref": f"run:{n}", "excerpt": f"指标 {n}",
                          "relation": "supports", "method": "experiment"},
                         {"source_kind": "log", "source_ref": f"log:{n}", "excerpt": f"日志 {n}",
                          "relation": "context", "method": "log_inspection"}]}


def bench_writes(book, folder: Path, n: int) -> None:
    rng = random.Random(1)
    ledger = Ledger(folder / "writes.db", project="bench", rulebook=book)
    calls = [args_for(i, rng) for i in range(n)]
    start = time.perf_counter()
    for a in calls:
        assert ledger.call("log_finding", a)["ok"]
    tool_rate = n / (time.perf_counter() - start)
    ledger.close()

    store = Store(folder / "raw.db")
    conn = store.conn
    start = time.perf_counter()
    for i, a in enumerate(calls):
        with store.write():
            seq = conn.execute(
                "INSERT INTO findings (id, project, claim_kind, statement, details, epistemic_state, lifecycle_state, "
                "scope_json, retrieval_policy, version, created_at, updated_at) VALUES (?, 'bench', ?, ?, '', ?, "
                "'active', '{}', 'relevant', 1, 't', 't')",
                (f"F-{i}", a["claim_kind"], a["statement"], a["epistemic_state"])).lastrowid
            conn.executemany("INSERT INTO finding_tags VALUES (?, ?)", [(seq, t) for t in a["tags"]])
            conn.execute("INSERT INTO findings_search (rowid, grams) VALUES (?, ?)", (seq, grams(a["statement"])))
            for j, e in enumerate(a["evidence"]):
                ev = conn.execute("INSERT INTO evidence (id, project, source_kind, source_ref, content_hash, excerpt, "
                                  "created_at) VALUES (?, 'bench', ?, ?, ?, ?, 't')",
                                  (f"E-{i}-{j}", e["source_kind"], e["source_ref"], content_hash(e["excerpt"]),
                                   e["excerpt"])).lastrowid
                conn.execute(LINK_SQL, (seq, ev, e["relation"], e["method"], WRITER))
            conn.execute(EVENT_SQL, (f"EV-{i}", seq, WRITER))
    raw_rate = n / (time.perf_counter() - start)
    store.close()
    print(f"log_finding (2 evidence links each), {n} calls, one commit per call:")
    print(f"  through the tool API: {tool_rate:8.0f} committed/s")
    print(f"  raw INSERT baseline:  {raw_rate:8.0f} committed/s   (tool/raw = {tool_rate / raw_rate:.2f})")


def fill(ledger: Ledger, start: int, stop: int, rng: random.Random) -> None:
    """Grow the ledger with the real log_finding code, 2,000 findings per transaction (filling only)."""
    inner = ledger.ledger
    for lo in range(start, stop, 2000):
        with ledger.store.write() as tx:
            call = inner._call(tx, "log_finding", ledger.caller.projects[0], "bench")
            for i in range(lo, min(stop, lo + 2000)):
                tools.log_finding(call, args_for(i, rng))


def median_ms(ledger: Ledger, args: dict, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        env = ledger.call("query_findings", args)
        times.append(time.perf_counter() - start)
        assert env["ok"], env
    return statistics.median(times) * 1000


def bench_queries(book, db, sizes: list[int], repeat: int, filler=None) -> None:
    """`db`: a SQLite path or a postgresql:// URI; `filler(ledger, start, stop, rng)` grows it
    (default: the real log_finding code)."""
    filler = filler or fill
    rng = random.Random(2)
    ledger = Ledger(db, project="bench", rulebook=book)
    print(f"query_findings median (ms, {repeat} runs each; limit 20):")
    print("  size     " + "".join(f"{name:>11}" for name in MIX) + "   mix median")
    results = {}
    done = 0
    for size in sizes:
        filler(ledger, done, size, rng)
        done = size
        row = {name: median_ms(ledger, args, repeat) for name, args in MIX.items()}
        results[size] = row
        print(f"  {size:>7,}  " + "".join(f"{v:11.2f}" for v in row.values())
              + f"   {statistics.median(row.values()):8.2f}")
    if len(sizes) >= 2:
        big, small = sizes[-1], sizes[-2]
        ratios = {k: results[big][k] / results[small][k] for k in MIX}
        print(f"  ratio {big:,}/{small:,}: " + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items())
              + f"; mix median {statistics.median(results[big].values()) / statistics.median(results[small].values()):.2f}x")
    ledger.close()


def bench_mcp(book, folder: Path, repeat: int) -> None:
    from mcp import Client, StdioServerParameters
    db = folder / "mcp.db"
    ledger = Ledger(db, project="bench", rulebook=book)
    fid = ledger.call("log_finding", args_for(0, random.Random(3)))["data"]["finding_id"]
    local = []
    for _ in range(repeat):
        start = time.perf_counter()
        ledger.call("get_finding", {"finding_id": fid})
        local.append(time.perf_counter() - start)
    ledger.close()
    params = StdioServerParameters(command=sys.executable, args=["-m", "groundrules.cli.main", "serve", "--db", str(db),
                                                                 "--project", "bench"])
    remote = []

    async def go():
        async with Client(params) as client:
            await client.call_tool("get_finding", {"finding_id": fid})
            for _ in range(repeat):
                start = time.perf_counter()
                result = await client.call_tool("get_finding", {"finding_id": fid})
                remote.append(time.perf_counter() - start)
                assert not result.is_error
    anyio.run(go)
    lm, rm = statistics.median(local) * 1000, statistics.median(remote) * 1000
    print(f"get_finding, {repeat} calls:")
    print(f"  over MCP stdio: median {rm:.2f} ms   in process: median {lm:.3f} ms   (stdio/in-process = {rm / lm:.0f}x)")


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="smaller sizes, still a measurement")
    size.add_argument("--tiny", action="store_true", help="a few small rounds, every check still made: proves the script runs")
    parser.add_argument("--db", help="postgresql://… or 'throwaway' (a cluster started as the tests do): "
                        "the PostgreSQL benchmarks too")
    parser.add_argument("--only-postgres", action="store_true", help="with --db: only the PostgreSQL benchmarks")
    parser.add_argument("--recovery", action="store_true", help="with --db: only the recovery comparison")
    parser.add_argument("--queries-only", action="store_true", help="with --db: no concurrent writers")
    return parser.parse_args()


def main() -> None:
    args = arguments()
    tiny = args.tiny
    quick = tiny or args.quick
    db = args.db
    book = load_rulebook(ROOT, TABLES)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if not args.only_postgres:
            bench_writes(book, folder, 20 if tiny else 500 if quick else 3000)
            sizes = [50, 100] if tiny else [1000, 10_000] if quick else [1000, 10_000, 100_000]
            bench_queries(book, folder / "queries.db", sizes, 2 if tiny else 15 if quick else 31)
            bench_mcp(book, folder, 3 if tiny else 50 if quick else 200)
        if db is not None:
            from bench_ledger_hosts import with_postgres
            with_postgres(db, book, folder, "tiny" if tiny else quick, bench_queries, recovery=args.recovery,
                          queries_only=args.queries_only)


if __name__ == "__main__":
    main()
