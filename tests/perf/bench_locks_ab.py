"""A/B benchmark: the lock engine of this checkout against the one of an earlier commit, in one process.

Run: .venv/bin/python tests/perf/bench_locks_ab.py [--base REV] [--mb 5] [--repeat 7] [--tiny]
(--tiny: 0.05 MB, one round: proves the script runs; with --base HEAD it needs no history.)

The base commit's `engine/groundrules` is exported (`git archive`) into a temporary folder and
imported under another name beside this checkout's `groundrules`; both load this checkout's tables
(locks/), so only the engine differs. First every lock of both engines is compared byte for byte
(canonical JSON) on the throughput corpus of bench_locks.py, per message in three roles and over
the whole corpus as one text: a speed-up that changes one output is no speed-up. Then paired,
interleaved rounds (each round runs every measurement once, in the same order) time `lock()` per
message and all tables over the whole text, by wall clock and by this process's CPU time; it
prints medians and the median of the per-round ratios base/new. Load from other processes falls on
both alike, which is what makes a ratio on a shared machine worth quoting.
"""
from __future__ import annotations

import argparse
import importlib
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "perf"))
sys.path.insert(0, str(ROOT / "tests" / "locks"))
import bench_locks  # noqa: E402 - the sibling script: its throughput corpus
import chat_corpus  # noqa: E402

import groundrules  # noqa: E402
from groundrules.core import canonical  # noqa: E402

BASE_NAME = "groundrules_base"


def import_base(rev: str, into: Path):
    """The engine of commit `rev`, importable as BASE_NAME (its imports are relative)."""
    blob = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "engine/groundrules"], check=True,
                          capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(into, filter="data")
    (into / "engine" / "groundrules").rename(into / BASE_NAME)
    sys.path.insert(0, str(into))
    return importlib.import_module(BASE_NAME)


def engines(base) -> dict:
    """name -> (lock, scan, rulebook, whole-text patterns) for both engines, on this checkout's tables."""
    out = {}
    for name, pkg in (("base", base), ("new", groundrules)):
        book = pkg.load_rulebook(ROOT, files=[ROOT / "locks"])
        scan = importlib.import_module(f"{pkg.__name__}.locks.scan").scan
        patterns = tuple(replace(p, timeout=60.0) for t in book.of_kind("lock_patterns") for p in t.patterns)
        out[name] = (pkg.lock, scan, book, patterns)
    return out


def same_outputs(eng: dict, messages: list, whole: str) -> int:
    """Every lock of both engines, compared as canonical JSON; returns how many were compared."""
    n = 0
    for m in messages:
        for role in ("user", "assistant", "tool"):
            msg = dict(m, role=role)
            got = [canonical.dumps(lock(msg, book)) for lock, _, book, _ in eng.values()]
            assert got[0] == got[1], f"outputs differ on {msg['id']} as {role}"
            n += 1
    for role in ("user", "assistant"):
        got = [canonical.dumps(scan(ps, "c", role, "sent", whole)) for _, scan, _, ps in eng.values()]
        assert got[0] == got[1], f"whole-text outputs differ as {role}"
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="HEAD~1", help="the commit to compare with (default HEAD~1)")
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--tiny", action="store_true", help="0.05 MB, one round: proves the script runs")
    args = ap.parse_args()
    if args.tiny:
        args.mb, args.repeat = 0.05, 1
    with tempfile.TemporaryDirectory() as tmp:
        eng = engines(import_base(args.base, Path(tmp)))
        messages = bench_locks.corpus(args.mb, chat_corpus.load())
        whole = "\n".join(m["content"] for m in messages)
        mb = len(whole.encode("utf-8")) / 1e6
        n = same_outputs(eng, messages, whole)
        print(f"base {args.base} vs this checkout: {len(messages)} messages, {mb:.2f} MB; {n} lock() calls and "
              f"2 whole-text scans give byte-identical locks; {args.repeat} paired rounds, load average "
              f"{os.getloadavg()[0]:.1f}")
        runs = {}
        for name, (lock, scan, book, ps) in eng.items():
            runs[f"{name} lock"] = lambda lock=lock, book=book: [lock(m, book) for m in messages]
            runs[f"{name} whole"] = lambda scan=scan, ps=ps: [scan(ps, "c", r, "sent", whole) for r in ("user", "assistant")]
        wall, cpu = bench_locks.timed(runs, args.repeat)
        for what in ("lock", "whole"):
            label = "lock() per message" if what == "lock" else "all tables, whole text"
            for clock, times in (("wall", wall), ("CPU", cpu)):
                b, n_ = times[f"base {what}"], times[f"new {what}"]
                ratio = statistics.median(x / y for x, y in zip(b, n_))
                print(f"  {label:24s} {clock:4s}  base {mb / statistics.median(b):6.1f} MB/s  "
                      f"new {mb / statistics.median(n_):6.1f} MB/s  base/new {ratio:.2f}x")
        print(f"  load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
