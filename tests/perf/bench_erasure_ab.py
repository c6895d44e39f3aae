"""A/B benchmark: the evidence ledger's append and fold with personal values sealed under data keys
(this checkout) against an earlier commit's, which kept them in the clear (issue 35, item 7).

Run: .venv/bin/python tests/perf/bench_erasure_ab.py [--base REV] [--messages 300] [--rounds 7] [--tiny]
(--tiny: 20 messages, one round: proves the script runs; with --base HEAD it needs no other branch.)

The base commit's engine and tables are exported (`git archive`) into a temporary folder. Each
round runs one fresh process of each checkout, in turn (which goes first alternates), on a SQLite
ledger of its own in /tmp (the production settings: WAL, synchronous FULL; this checkout's key
store beside it): it appends --messages user messages one call each (a mobile number and a WeChat
id: three records, two of them locks) and an interpretation dismissing its locks, timing the
median of each; then it reopens the ledger
(the data keys read from the key store, not a warm cache) and times the first fold of the whole
project, and the median of three more. It prints each median and the median of the per-round
ratios new/base, with the machine's load average.
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
CHILD = """
import gc, json, os, statistics, sys, tempfile, time
root, messages = sys.argv[1], int(sys.argv[2])
sys.path[:0] = [root + "/engine"]
from groundrules import EvidenceLedger, load_rulebook
book = load_rulebook(root)
folder = tempfile.mkdtemp(prefix="bench-erasure.")
path = os.path.join(folder, "ledger.db")
count = iter(range(1, 10**9))
def ledger():
    return EvidenceLedger(path, ids=lambda: f"R{next(count)}", clock=lambda: "2030-01-01T00:00:00Z", rulebook=book)
led = ledger()
appends, interpretations = [], []
for n in range(messages):
    message = {"id": f"m{n}", "type": "message", "role": "user", "state": "sent",
               "content": f"第 {n} 位：手机 139 {n:04d} {n * 7 % 10000:04d}，微信 wx_bench{n:05d}"}
    t = time.perf_counter()
    stored = led.append_message(message)
    appends.append(time.perf_counter() - t)
    assert len(stored) == 3, stored
    interpretation = {"id": f"I{n}", "events": [],
                      "dispositions": [{"lock": r["id"], "dismissed": "bench"} for r in stored[1:]]}
    t = time.perf_counter()
    led.append_interpretation(interpretation)
    interpretations.append(time.perf_counter() - t)
led.close()
led = ledger()
folds = []
for _ in range(4):
    gc.collect(); gc.disable()
    t = time.perf_counter()
    folded = led.fold(None, "2030-01-02T00:00:00Z")
    folds.append(time.perf_counter() - t)
    gc.enable()
assert len(folded["evidence"]) == 3 * messages
led.close()
import shutil; shutil.rmtree(folder)
print(json.dumps([statistics.median(appends), statistics.median(interpretations), folds[0], statistics.median(folds[1:])]))
"""
LABELS = ("append_message (median)", "append_interpretation (median)", "fold, ledger just opened",
          "fold again (median of 3)")


def export(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "engine", "rules", "locks", "schemas"],
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def once(root: Path, messages: int) -> list[float]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(root), str(messages)], check=True, capture_output=True,
                         text=True, cwd=tempfile.gettempdir()).stdout
    return json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main")
    parser.add_argument("--messages", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tiny", action="store_true", help="20 messages, one round: proves the script runs")
    args = parser.parse_args()
    if args.tiny:
        args.messages, args.rounds = 20, 1
    load = os.getloadavg()
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        base = export(args.base, Path(tmp))
        for n in range(args.rounds):
            if n % 2 == 0:
                b = once(base, args.messages)
                rounds.append((b, once(ROOT, args.messages)))
            else:
                new = once(ROOT, args.messages)
                rounds.append((once(base, args.messages), new))
    for k, label in enumerate(LABELS):
        b = statistics.median(r[0][k] for r in rounds) * 1e3
        new = statistics.median(r[1][k] for r in rounds) * 1e3
        ratio = statistics.median(r[1][k] / r[0][k] for r in rounds)
        print(f"{label}: base {args.base} {b:.2f} ms, this checkout {new:.2f} ms, median ratio new/base "
              f"{ratio:.2f} ({args.rounds} rounds, {args.messages} messages)")
    print(f"load average before: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; after: "
          + " ".join(f"{v:.1f}" for v in os.getloadavg()))


if __name__ == "__main__":
    main()
