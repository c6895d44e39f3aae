"""A/B benchmark: the 50-field verification of this checkout against an earlier commit's, each with
its own engine and tables (issue 31: throughput no worse than 1.2x before value derivation and the
context reading).

Run: .venv/bin/python tests/perf/bench_verify_ab.py [--base REV] [--rounds 9] [--tiny]
(--tiny: one round of a few verifications: proves the script runs; with --base HEAD it needs no
other branch.)

The base commit's engine, tables and the benchmark's helpers are exported (`git archive`) into a
temporary folder; each round runs bench_verify.py's 50-field case in a fresh process of each
checkout, alternating which goes first, every process timing its median verification (the cyclic
GC paused). Rounds are interleaved, so load from other processes falls on both alike; it prints
the median ms of each and the median of the per-round ratios new/base.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES = ["engine", "rules", "locks", "schemas", "tests/perf/bench_verify.py", "tests/verify/verify_support.py",
         "tests/verify/verify_seed_examples.py"]
CHILD = """
import gc, json, statistics, sys, time
root, repeat = sys.argv[1], int(sys.argv[2])
sys.path[:0] = [root + "/engine", root + "/tests/perf", root + "/tests/verify"]
from bench_verify import big_case
from verify_support import load_verify_book
from groundrules.verification import verify
book = load_verify_book()
text, request, schema, candidate, quotes = big_case()
assert verify(request, schema, candidate, book)["ok"]
wall, cpu = [], []
for _ in range(repeat):
    gc.collect(); gc.disable()
    t, c = time.perf_counter(), time.process_time()
    verify(request, schema, candidate, book)
    wall.append(time.perf_counter() - t); cpu.append(time.process_time() - c)
    gc.enable()
print(json.dumps([statistics.median(wall), statistics.median(cpu)]))
"""


def export(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, *FILES], check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def once(root: Path, repeat: int) -> list:
    env = dict(os.environ, PYTHONHASHSEED="0")
    out = subprocess.run([sys.executable, "-c", CHILD, str(root), str(repeat)], check=True, capture_output=True,
                         text=True, cwd=tempfile.gettempdir(), env=env).stdout
    return json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--tiny", action="store_true")
    args = parser.parse_args()
    rounds, repeat = (1, 5) if args.tiny else (args.rounds, 200)
    with tempfile.TemporaryDirectory() as tmp:
        base = export(args.base, Path(tmp) / "base")
        new = ROOT
        times: dict = {"base": [], "new": []}
        ratios: dict = {"wall": [], "cpu": []}
        for r in range(rounds):
            order = [("base", base), ("new", new)] if r % 2 == 0 else [("new", new), ("base", base)]
            got = {name: once(root, repeat) for name, root in order}
            for name in times:
                times[name].append(got[name])
            ratios["wall"].append(got["new"][0] / got["base"][0])
            ratios["cpu"].append(got["new"][1] / got["base"][1])
    for k, clock in enumerate(("wall", "cpu")):
        b = statistics.median(t[k] for t in times["base"])
        n = statistics.median(t[k] for t in times["new"])
        print(f"{clock:4s}: base {args.base} {b * 1e3:7.3f} ms, new (this checkout) {n * 1e3:7.3f} ms per 50-field "
              f"verification ({rounds} rounds of {repeat}); median of per-round ratios new/base "
              f"{statistics.median(ratios[clock]):.3f}x (rounds: {', '.join(f'{x:.2f}' for x in ratios[clock])})")
    print("target: new/base <= 1.2x")


if __name__ == "__main__":
    main()
