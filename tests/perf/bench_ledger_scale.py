"""Cost per call against the size of the project (issue 19, item 5), on SQLite and on PostgreSQL
(a throwaway cluster, started as the tests start theirs, with production settings).

Projects of 1k, 10k and 100k records: the same subject (13 records: five messages with a lock each,
three without, and its interpretations) in every one, the rest other subjects' messages, locks and
interpretations, and as many findings and evidence records in the finding ledger. Every round calls,
through Service.call, in each project in turn (the order alternating between rounds):
fold_ledger for the subject (its stored interpretations; `given`: the subject's interpretations
passed as `interpretations`), append_interpretation of one more
interpretation of the subject, append_evidence of a message of a new subject, and log_finding
citing two new sources. Medians per project, and the ratio of each larger project's median to the
1k project's, measured in the same run (the target: within 2x at 100k).

    .venv/bin/python tests/perf/bench_ledger_scale.py [--quick|--tiny] [--only sqlite|postgres] [--root <checkout>]

(--tiny: projects of 30, 60 and 90 records, one round: proves the script runs.)

`--root` measures another checkout's engine (e.g. `git worktree add /tmp/before main~N`) with this
script, for a before/after comparison (run both in turn: they are separate processes).
"""
from __future__ import annotations

import argparse
import functools
import inspect
import itertools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="9 rounds instead of 31")
    size.add_argument("--tiny", action="store_true", help="projects of 30, 60 and 90 records, one round: "
                      "proves the script runs")
    parser.add_argument("--only", choices=("sqlite", "postgres"), help="one backend only")
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="measure another checkout's engine (an earlier commit, say) with this script")
    return parser.parse_args()


ARGS = arguments()
ENGINE = ARGS.root
sys.path.insert(0, str(ENGINE / "engine"))
sys.path.insert(0, str(ROOT / "tests"))

from groundrules import Caller, EvidenceLedger, FindingLedger, Service, default_rulebook  # noqa: E402
from groundrules.evidence import locking  # noqa: E402

SIZES = (30, 60, 90) if ARGS.tiny else (1_000, 10_000, 100_000)
TOOLS = ("fold_ledger", "fold_ledger given", "append_interpretation", "append_evidence", "log_finding")
CALLER = Caller("bench", "agent", ("p1",))
NOW = "2030-06-01T00:00:00+08:00"
SUBJECT = "demand_bench"


class Project:
    """Both ledgers of one project of `size` records, on one database, and the calls of a round."""

    def __init__(self, db: str, size: int, book):
        n = itertools.count()
        self.size = size
        keys = None if not db.startswith("postgres") else Path(tempfile.mkdtemp(prefix="bench-keys.")) / "keys"
        self.evidence = EvidenceLedger(db, ids=lambda: f"R{next(n)}", clock=lambda: "2030-05-01T00:00:00+08:00",
                                       rulebook=book, project="p1", keys=keys)
        self.findings = FindingLedger(db, rulebook=book)
        self.service = Service(book, findings=self.findings, evidence=self.evidence)
        self.round = 0
        self.mine: list[dict] = []                  # the subject's interpretations, as appended
        fill_evidence(self.evidence, size - 13)
        fill_findings(self.findings.store, size)
        self.locks = self._subject()
        analyze(self.evidence.store)

    def _subject(self) -> list[str]:
        """The subject's 13 records and three interpretations, appended as a host appends them."""
        locks = []
        for m in range(5):
            stored = self.evidence.append_message({"id": f"s{m}", "type": "message", "role": "user", "state": "sent",
                                                   "subject": SUBJECT, "content": f"第 {m} 次：微信 wx_bench{m}"})
            locks += [r["id"] for r in stored[1:]]
        for m in range(3):
            self.evidence.append({"id": f"t{m}", "type": "message", "role": "user", "state": "sent",
                                  "subject": SUBJECT, "content": "明天再说"})
        self._interpret({"id": "I-open", "events": [
            {"id": "o-s", "type": "new_scope", "scope": SUBJECT, "evidence": ["s0"]}], "dispositions": []})
        for m in range(3):
            self._interpret({"id": f"I-s{m}", "events": [
                {"id": f"e-s{m}", "type": "set", "slot": "wechat", "value": f"wx_bench{m}", "evidence": [locks[m]]}],
                "dispositions": [{"lock": locks[m], "slot": "wechat"}]})
        for m in range(3, 5):
            self._interpret({"id": f"I-s{m}", "events": [],
                                                 "dispositions": [{"lock": locks[m], "dismissed": "repeated"}]})
        return locks

    def _interpret(self, interpretation: dict) -> None:
        self.evidence.append_interpretation(interpretation)
        self.mine.append(interpretation)

    def arguments(self, tool: str) -> dict:
        r = self.round
        if tool == "fold_ledger":
            return {"now": NOW, "subject": SUBJECT}
        if tool == "fold_ledger given":
            return {"now": NOW, "subject": SUBJECT, "interpretations": self.mine}
        if tool == "append_interpretation":
            return {"interpretation": {"id": f"I-r{r}", "events": [
                {"id": f"e-r{r}", "type": "decline", "slot": "phone", "evidence": [f"t{r % 3}"]}], "dispositions": []}}
        if tool == "append_evidence":
            return {"record": {"id": f"n{r}", "type": "message", "role": "user", "state": "sent",
                               "subject": f"new_{r}", "content": f"手机 139{r:08d}"}}
        return {"claim_kind": "observation", "statement": f"第 {r} 次观察", "epistemic_state": "unassessed",
                "scope": {"match": {"runtime.backend": "vLLM"}}, "tags": ["bench"],
                "evidence": [{"source_kind": "experiment_run", "source_ref": f"run:new-{r}", "excerpt": "x",
                              "relation": "supports", "method": "experiment"},
                             {"source_kind": "log", "source_ref": f"log:new-{r}", "excerpt": "y",
                              "relation": "context", "method": "log_inspection"}]}

    def call(self, tool: str) -> float | None:
        """Seconds the call took; None when it was refused (an earlier engine's fold_ledger of the
        stored interpretations refuses a project with other subjects)."""
        arguments = self.arguments(tool)
        started = time.perf_counter()
        envelope = self.service.call(tool.split()[0], arguments, CALLER)
        elapsed = time.perf_counter() - started
        if not envelope["ok"]:
            if ENGINE == ROOT:
                raise SystemExit(f"{tool} at {self.size}: {envelope['error']}")
            return None
        if tool == "append_interpretation":
            self.mine.append(arguments["interpretation"])
        return elapsed

    def close(self) -> None:
        self.evidence.close()
        self.findings.close()


def fill_evidence(ledger: EvidenceLedger, records: int) -> None:
    """`records` records of other subjects (a message with its lock and a message without, an
    interpretation each), as the ledger writes them, in one transaction."""
    sample = {"id": "o", "type": "message", "role": "user", "state": "sent", "content": "微信 wx_other1"}
    (lock,) = locking.engine_locks(sample, ledger._catalogue, ledger._book)
    filed = hasattr(ledger, "_filed")            # an earlier commit's ledger wrote the rows itself (--root)
    file = ledger._filed if filed else ledger._to_row
    if filed and "project" in inspect.signature(ledger._filed).parameters:   # sealed under the project's keys
        file = functools.partial(ledger._filed, project="p1")
    rows, interpretations = [], []
    for s in range(records // 3):
        at = f"2029-{1 + s % 12:02d}-{1 + s % 28:02d}T{s % 24:02d}:{s % 60:02d}:00+08:00"
        record = dict(sample, id=f"o{s}", subject=f"other_{s}", observed_at=at, recorded_at=at)
        rows += [file(record), file(dict(record, id=f"o{s}b", content="明天再说")),
                 file({"id": f"L-o{s}", "type": "lock", "observed_at": at, "recorded_at": at,
                       "lock": dict(lock, id=f"L-o{s}", locator=dict(lock["locator"], message_id=f"o{s}"))})]
        interpretations.append({"id": f"I-o{s}", "events": [{"id": f"e-o{s}", "type": "set", "slot": "wechat",
                                                             "value": "wx_other1", "evidence": [f"L-o{s}"]}],
                                "dispositions": [{"lock": f"L-o{s}", "slot": "wechat"}]})
    keyed = hasattr(ledger, "_keys")             # an earlier commit's ledger keeps no keys (--root)
    recorded = "2030-01-01T00:00:00+08:00"
    with ledger.store.write("p1") as tx:
        tx.insert(rows)
        for i in interpretations:
            keys = [sorted(ledger._keys(tx, i))] if keyed else []
            if filed:
                tx.add_interpretation(i, recorded, *keys)
            else:
                tx.add_interpretation({"id": i["id"], "recorded_at": recorded, "body": json.dumps(i, ensure_ascii=False)},
                                      *keys)


def fill_findings(store, rows: int) -> None:
    """`rows` findings of the project, each with an evidence record, a link and a tag (raw SQL)."""
    sys.path.insert(0, str(ROOT / "tests" / "findings"))
    from test_query_plans import fill
    fill(store, "p1", rows)


def analyze(store) -> None:
    from plans import analyze as run
    run(store)


def bench(backend: str, dbs: list[str], rounds: int, book) -> None:
    print(f"{backend}: filling projects of {', '.join(f'{s:,}' for s in SIZES)} records ...", flush=True)
    projects = [Project(db, size, book) for db, size in zip(dbs, SIZES)]
    times = {(p.size, t): [] for p in projects for t in TOOLS}
    try:
        for r in range(rounds):
            order = projects if r % 2 == 0 else projects[::-1]
            for p in order:
                p.round = r
                for tool in TOOLS:
                    times[(p.size, tool)].append(p.call(tool))
    finally:
        for p in projects:
            p.close()
    print(f"{backend}: median ms per call, {rounds} interleaved rounds; ratio to the {SIZES[0]:,}-record project")
    print(f"  {'tool':22}" + "".join(f"{s:>12,}" for s in SIZES) + "".join(f"{f'{s // 1000}k/1k':>10}" for s in SIZES[1:]))
    for tool in TOOLS:
        if any(t is None for s in SIZES for t in times[(s, tool)]):
            print(f"  {tool:22}  refused")
            continue
        medians = [statistics.median(times[(s, tool)]) * 1000 for s in SIZES]
        print(f"  {tool:22}" + "".join(f"{m:12.2f}" for m in medians)
              + "".join(f"{m / medians[0]:10.2f}" for m in medians[1:]))


def main() -> None:
    only = ARGS.only
    rounds = 1 if ARGS.tiny else 9 if ARGS.quick else 31
    book = default_rulebook()
    if only in (None, "sqlite"):
        with tempfile.TemporaryDirectory() as folder:
            bench("sqlite", [str(Path(folder) / f"p{s}.db") for s in SIZES], rounds, book)
    if only in (None, "postgres"):
        from pg_cluster import start_cluster
        cluster = start_cluster()
        pg = next(cluster)
        try:
            bench("postgres", [pg.uri(pg.fresh_database()) for _ in SIZES], rounds, book)
        finally:
            cluster.close()


if __name__ == "__main__":
    main()
