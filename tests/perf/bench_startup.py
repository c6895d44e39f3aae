"""Whole-process start-up of `groundrules explain FILE` and `groundrules lock FILE`, against
`python -c pass`, in paired, interleaved rounds.

    .venv/bin/python tests/perf/bench_startup.py [ROUNDS] [--tiny]

Each round runs every command once, the order rotating from round to round, so a burst of load on
this shared machine hits all of them alike; each ratio is the median of the per-round ratios to
`python -c pass` of the same round. The commands run on the bundled tables with the verdict cache
warm (a fresh cache folder, filled by one run before timing), and once more with the cache off
(GROUNDRULES_CACHE=off), which is what every call would cost without it. Target: explain and lock
within 12x `python -c pass`.

The commands run with bytecode written and read (PYTHONDONTWRITEBYTECODE is dropped from their
environment; the first run writes it), as in any installed copy: pip compiles a wheel's modules
when it installs them. Without it every process compiles every module it imports from source.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXPLAIN_INPUT = ROOT / "schemas" / "examples" / "support_reason" / "cq-shenlun-partial.json"
LOCK_INPUT = ROOT / "schemas" / "examples" / "locks" / "decline_phone_give_wechat.json"


def groundrules_command() -> list[str]:
    """The installed console script beside this interpreter, as a user runs it."""
    script = Path(sys.executable).with_name("groundrules")
    return [str(script)] if script.exists() else [sys.executable, "-m", "groundrules.cli.main"]


def run_ms(argv: list[str], env: dict) -> float:
    t0 = time.perf_counter_ns()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter_ns() - t0) / 1e6
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode(errors='replace')[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rounds", nargs="?", type=int, default=21, help="paired rounds (default 21)")
    parser.add_argument("--tiny", action="store_true", help="a few small rounds, every check still made: proves the script runs")
    args = parser.parse_args()
    rounds = 1 if args.tiny else args.rounds
    gr = groundrules_command()
    base_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as cache:
        warm = dict(base_env, GROUNDRULES_CACHE=cache)
        cold = dict(base_env, GROUNDRULES_CACHE="off")
        commands = {
            "python -c pass": ([sys.executable, "-c", "pass"], warm),
            "explain": (gr + ["explain", str(EXPLAIN_INPUT)], warm),
            "lock": (gr + ["lock", str(LOCK_INPUT)], warm),
            "explain, no cache": (gr + ["explain", str(EXPLAIN_INPUT)], cold),
            "lock, no cache": (gr + ["lock", str(LOCK_INPUT)], cold),
        }
        for argv, env in commands.values():          # fills the cache, warms the OS file cache
            run_ms(argv, env)
        names = list(commands)
        times: dict = {name: [] for name in names}
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                times[name].append(run_ms(*commands[name]))
    base = times["python -c pass"]
    print(f"{rounds} paired rounds; {' '.join(gr)}; load average {os.getloadavg()[0]:.2f}")
    print(f"{'command':22s} {'median ms':>10s} {'x python -c pass':>17s}")
    for name in names:
        ratio = statistics.median(t / b for t, b in zip(times[name], base))
        print(f"{name:22s} {statistics.median(times[name]):10.1f} {ratio:16.1f}x")
    print("target: explain and lock (cache warm) within 12x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
