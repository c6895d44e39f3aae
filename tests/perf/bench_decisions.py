"""Benchmark of the decision log, with its baselines measured in the same run:

1. the cost of logging per call: explain_support, lock_message and get_finding through
   `Service.call`, logged and unlogged, in paired, interleaved rounds (one batch of each per round,
   the order alternating); per round the median per-call time of each, and the logged/unlogged
   ratio; the figure is the median of the per-round ratios. Beside it, the whole cost with the
   writer's work (sealing, masking, appending) included: each batch timed until the log has
   committed it (flush), the writer thread sharing the interpreter with the calls.
2. replay throughput: N logged calls (default 100,000; half explain_support, half lock_message)
   replayed under the rulebook that logged them, on one core (one thread), every answer compared
   byte for byte; calls/s, and the share that reproduced.

Run: .venv/bin/python tests/perf/bench_decisions.py [--rounds R] [--batch B] [--calls N] [--tiny]
(--tiny: one round of a few calls: proves the script runs.)
Targets: logging <= 10% of the call (median, paired, per tool); replay >= 5,000 calls/s; 100%
reproduced.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "engine"))

from groundrules import Caller, FindingLedger, Service, load_rulebook  # noqa: E402
from groundrules.decisions import replay  # noqa: E402
from groundrules.decisions.crypto import DecisionKey  # noqa: E402
from groundrules.decisions.log import DecisionLog  # noqa: E402

CONTEXT = json.loads((ROOT / "tests" / "cases" / "support_reason" / "insufficient-many-reasons-in-order.json")
                     .read_text(encoding="utf-8"))
MESSAGE = {"message": {"id": "m1", "role": "user", "content": "不方便接电话，微信 wx_wang01，手机 138 0000 1234"}}
AGENT = Caller("bench", "agent", ("p1",))


def per_call(service: Service, tool: str, arguments: dict, n: int) -> list[float]:
    out = []
    clock = time.perf_counter_ns
    for _ in range(n):
        t = clock()
        service.call(tool, arguments, AGENT)
        out.append((clock() - t) / 1000)
    return out


def cost(book, folder: Path, rounds: int, batch: int) -> None:
    db = folder / "cost.db"
    findings = FindingLedger(db, rulebook=book)
    plain = Service(book, findings=findings)
    log = DecisionLog(db, key=DecisionKey(os.urandom(32)), rulebook=book)
    logged = Service(book, findings=findings, decisions=log)
    fid = plain.call("log_finding", {"claim_kind": "diagnosis", "statement": "温度漂移导致误差", "tags": ["gpu"],
                                     "evidence": [{"source_kind": "log", "source_ref": "log:gpu",
                                                   "excerpt": "温度升高后误差翻倍", "relation": "supports",
                                                   "method": "log_inspection"}]}, AGENT)["data"]["finding_id"]
    cases = {"explain": ("explain_support", {"context": CONTEXT}), "lock": ("lock_message", MESSAGE),
             "get_finding": ("get_finding", {"finding_id": fid})}
    print(f"1. logging cost per call ({rounds} paired rounds of {batch} calls each, order alternating)")
    print(f"   {'tool':<12} {'unlogged µs':>12} {'logged µs':>10} {'ratio':>7}   {'whole cost incl. writer':>24}")
    for name, (tool, arguments) in cases.items():
        per_call(plain, tool, arguments, batch)
        per_call(logged, tool, arguments, batch)
        log.flush()
        ratios, whole, meds = [], [], {"plain": [], "logged": []}
        for r in range(rounds):
            order = [("plain", plain), ("logged", logged)]
            if r % 2:
                order.reverse()
            medians, totals = {}, {}
            for label, service in order:
                start = time.perf_counter()
                times = per_call(service, tool, arguments, batch)
                if label == "logged":
                    log.flush()
                totals[label] = time.perf_counter() - start
                medians[label] = statistics.median(times)
                meds[label].append(medians[label])
            ratios.append(medians["logged"] / medians["plain"])
            whole.append(totals["logged"] / totals["plain"])
        print(f"   {name:<12} {statistics.median(meds['plain']):>12.1f} {statistics.median(meds['logged']):>10.1f} "
              f"{statistics.median(ratios):>7.3f}   {statistics.median(whole):>24.3f}")
    log.close()
    findings.close()


def throughput(book, folder: Path, calls: int) -> None:
    db = folder / "replay.db"
    log = DecisionLog(db, key=DecisionKey(os.urandom(32)), rulebook=book, purge_every_s=None)
    service = Service(book, decisions=log)
    start = time.perf_counter()
    for n in range(calls):
        if n % 2:
            service.call("explain_support", {"context": CONTEXT}, AGENT)
        else:
            content = f"不方便接电话，微信 wx_wang{n % 97:02d}，手机 138 {n % 10000:04d} {(n * 7) % 10000:04d}"
            service.call("lock_message", {"message": {"id": f"m{n}", "role": "user", "content": content}}, AGENT)
    log.flush()
    logging_s = time.perf_counter() - start
    print(f"2. replay of {calls:,} logged calls (half explain_support, half lock_message); logging them took "
          f"{logging_s:.1f} s ({calls / logging_s:,.0f} calls/s, {db.stat().st_size / 1e6:.0f} MB)")
    runs = []
    for _ in range(3):
        start, cpu = time.perf_counter(), time.process_time()
        result = replay.replay(log, book, examples=0)
        runs.append((time.perf_counter() - start, time.process_time() - cpu, result))
    wall, cpu, result = sorted(runs, key=lambda r: r[0])[1]
    share = result["unchanged"] / result["replayed"] if result["replayed"] else 0.0
    print(f"   median of 3 runs: {result['replayed'] / wall:,.0f} calls/s wall, {result['replayed'] / cpu:,.0f} calls/s "
          f"CPU (one thread); reproduced {share:.2%} ({result['not_reproduced']} not reproduced)")
    log.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--batch", type=int, default=400)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--tiny", action="store_true", help="one round of a few calls: proves the script runs")
    args = parser.parse_args()
    if args.tiny:
        args.rounds, args.batch, args.calls = 1, 5, 50
    book = load_rulebook(ROOT, cache=False)
    with tempfile.TemporaryDirectory() as tmp:
        cost(book, Path(tmp), args.rounds, args.batch)
        throughput(book, Path(tmp), args.calls)


if __name__ == "__main__":
    main()
