"""Benchmark of the decision log, with its baselines measured in the same run:

1. the cost of logging per call: explain_support, lock_message and get_finding through
   `Service.call`, logged and unlogged, in paired, interleaved rounds (one batch of each per round,
   the order alternating); per round the median per-call time of each, and the logged/unlogged
   ratio; the figure is the median of the per-round ratios. Beside it, the whole cost with the
   writer's work (sealing, masking, appending) included: each batch timed until the log has
   committed it (flush), the writer thread sharing the interpreter with the calls.
2. replay throughput: N logged calls (default 100,000; half explain_support, half lock_message)
   replayed under the rulebook that logged them, on one core (one thread), every answer compared
   byte for byte, in paired rounds with its baseline (the same N calls answered afresh by
   Service.call, unlogged), the order alternating: calls/s of CPU time and of wall time, the
   replay/direct ratio of CPU time per call, the load average, and the share that reproduced.

Run: .venv/bin/python tests/perf/bench_decisions.py [--rounds R] [--batch B] [--calls N] [--replay-rounds R]
     [--part all|cost|replay] [--tiny]
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
from groundrules.decision_log import replay  # noqa: E402
from groundrules.decision_log.crypto import DecisionKey  # noqa: E402
from groundrules.decision_log.log import DecisionLog  # noqa: E402

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


def traffic(n: int) -> tuple[str, dict]:
    """The n-th call of the replay benchmark's traffic: half explain_support, half lock_message."""
    if n % 2:
        return "explain_support", {"context": CONTEXT}
    content = f"不方便接电话，微信 wx_wang{n % 97:02d}，手机 138 {n % 10000:04d} {(n * 7) % 10000:04d}"
    return "lock_message", {"message": {"id": f"m{n}", "role": "user", "content": content}}


def throughput(book, folder: Path, calls: int, rounds: int) -> None:
    db = folder / "replay.db"
    log = DecisionLog(db, key=DecisionKey(os.urandom(32)), rulebook=book, purge_every_s=None)
    service = Service(book, decisions=log)
    start = time.perf_counter()
    for n in range(calls):
        service.call(*traffic(n), AGENT)
    log.flush()
    logging_s = time.perf_counter() - start
    print(f"2. replay of {calls:,} logged calls (half explain_support, half lock_message); logging them took "
          f"{logging_s:.1f} s ({calls / logging_s:,.0f} calls/s, {db.stat().st_size / 1e6:.0f} MB)")
    print(f"   {rounds} paired rounds, order alternating: the replay (read, decrypt, re-run, compare every answer) "
          f"and, as its baseline, the same {calls:,} calls answered afresh by Service.call, unlogged; one thread")
    plain = Service(book)

    def direct() -> None:
        for n in range(calls):
            plain.call(*traffic(n), AGENT)

    figures: dict = {"replay": [], "direct": []}
    loads = [os.getloadavg()[0]]
    result = None
    for r in range(rounds):
        order = ["replay", "direct"] if r % 2 == 0 else ["direct", "replay"]
        for label in order:
            wall, cpu = time.perf_counter(), time.process_time()
            if label == "replay":
                result = replay.replay(log, book, examples=0)
            else:
                direct()
            figures[label].append((time.perf_counter() - wall, time.process_time() - cpu))
            loads.append(os.getloadavg()[0])
    share = result["unchanged"] / result["replayed"] if result["replayed"] else 0.0
    ratios = [rp[1] / d[1] for rp, d in zip(figures["replay"], figures["direct"])]
    for label in ("replay", "direct"):
        wall = statistics.median(w for w, _ in figures[label])
        cpu = statistics.median(c for _, c in figures[label])
        print(f"   {label:<7} median {calls / cpu:>7,.0f} calls/s CPU, {calls / wall:>7,.0f} calls/s wall")
    print(f"   replay / direct CPU per call: median {statistics.median(ratios):.3f} (per round: "
          f"{', '.join(f'{x:.3f}' for x in ratios)}); load average {min(loads):.1f}-{max(loads):.1f}")
    print(f"   reproduced {share:.2%} ({result['not_reproduced']} not reproduced, {result['replayed']:,} replayed)")
    log.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--batch", type=int, default=400)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--replay-rounds", type=int, default=3)
    parser.add_argument("--part", choices=("all", "cost", "replay"), default="all")
    parser.add_argument("--tiny", action="store_true", help="one round of a few calls: proves the script runs")
    args = parser.parse_args()
    if args.tiny:
        args.rounds, args.batch, args.calls, args.replay_rounds = 1, 5, 50, 1
    book = load_rulebook(ROOT, cache=False)
    with tempfile.TemporaryDirectory() as tmp:
        if args.part in ("all", "cost"):
            cost(book, Path(tmp), args.rounds, args.batch)
        if args.part in ("all", "replay"):
            throughput(book, Path(tmp), args.calls, args.replay_rounds)


if __name__ == "__main__":
    main()
