"""A/B benchmark: fold() of this checkout against an earlier commit's, each with its own tables.

Run: .venv/bin/python tests/perf/bench_fold_ab.py [--base REV] [--events 10000] [--rounds 5] [--tiny]
(--tiny: 100 events, one round: proves the script runs; with --base HEAD it needs no other branch.)

The base commit's engine, tables and bench_fold.py are exported (`git archive`) into a temporary
folder; each round folds bench_fold.py's payload of --events events once in a fresh process of
each checkout (base first, then new), every process timing its median of a few folds by wall
clock and by its own CPU time (the cyclic GC paused, as bench_fold does). Rounds are interleaved,
so load from other processes falls on both alike; it prints the median µs per event of each and
the median of the per-round ratios new/base.
"""
from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import gc, json, statistics, sys, time
root = sys.argv[1]
sys.path[:0] = [root + "/engine", root + "/tests/perf"]
from bench_fold import payload
from groundrules import fold, load_rulebook
book = load_rulebook(root)
data = payload(int(sys.argv[2]))
fold(data, book)
wall, cpu = [], []
for _ in range(3):
    gc.collect(); gc.disable()
    t, c = time.perf_counter(), time.process_time()
    fold(data, book)
    wall.append(time.perf_counter() - t); cpu.append(time.process_time() - c)
    gc.enable()
print(json.dumps([statistics.median(wall), statistics.median(cpu)]))
"""


def export(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "engine", "rules", "locks", "schemas",
                              "tests/perf/bench_fold.py"], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def once(root: Path, events: int) -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(root), str(events)], check=True, capture_output=True,
                         text=True, cwd=tempfile.gettempdir()).stdout
    wall, cpu = json.loads(out)
    return wall * 1e6 / events, cpu * 1e6 / events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main")
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tiny", action="store_true", help="100 events, one round: proves the script runs")
    args = parser.parse_args()
    if args.tiny:
        args.events, args.rounds = 100, 1
    with tempfile.TemporaryDirectory() as tmp:
        base = export(args.base, Path(tmp))
        rounds = [(once(base, args.events), once(ROOT, args.events)) for _ in range(args.rounds)]
    for n, label in ((0, "wall"), (1, "cpu")):
        b = statistics.median(r[0][n] for r in rounds)
        new = statistics.median(r[1][n] for r in rounds)
        ratio = statistics.median(r[1][n] / r[0][n] for r in rounds)
        print(f"{label}: base {args.base} {b:.1f} µs/event, this checkout {new:.1f} µs/event, "
              f"median ratio new/base {ratio:.2f} ({args.rounds} rounds, {args.events} events)")


if __name__ == "__main__":
    main()
