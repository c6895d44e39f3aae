"""Benchmark: how much time one counted step of locks/cost.py's bound really takes, on the texts most
likely to make a lock regex work hard, against the STEP_S the bound is turned into seconds with.

Run: .venv/bin/python tests/perf/bench_lock_bounds.py [--repeat 3] [--tiny]
(--tiny: one repeat over two texts a pattern: proves the script runs.)

For every pattern of the default lock tables that has a bound: the lint probe's adversarial texts
(regexprobe: a pumped character or pair, 5000 long, with a prefix from the pattern and a suffix
that fails late) and pumps of the tables' own digits, numerals and separators; each searched to the
end (finditer), by this process's CPU time, the median of the repeats. Printed: the bound, the
worst time per counted step and per character, and how far STEP_S lies above the worst (the
margin by which a text the scan reads without the clock stays inside its budget).
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from groundrules import load_rulebook
from groundrules.locks import cost
from groundrules.analyst.regexprobe import _probes

ROOT = Path(__file__).resolve().parents[2]
PUMPS = ["1", "1 ", "13", "86 ", "(1", "1-", "0", "0 1", "1\n", "1.", "一", "一 ", "幺三"]


def texts(pattern: str) -> list[str]:
    out = [s.prefix + s.pump * s.repeat + s.suffix for s in _probes(pattern) if s.repeat >= 1000]
    return out + [pump * (5000 // len(pump)) for pump in PUMPS]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tiny", action="store_true", help="one repeat over short texts: proves the script runs")
    args = ap.parse_args()
    if args.tiny:
        args.repeat = 1
    book = load_rulebook(ROOT, files=[ROOT / "locks"])
    print(f"STEP_S = {cost.STEP_S * 1e9:.0f} ns per counted step")
    print(f"  {'pattern':28s} {'bound':>6s} {'worst ns/step':>13s} {'ns/char':>8s} {'margin':>7s}  worst text")
    for table in book.of_kind("lock_patterns"):
        for p in table.patterns:
            steps = cost.attempt_steps(p.regex.pattern)
            if steps is None:
                print(f"  {p.id:28s} {'none':>6s}  (always scanned with the clock)")
                continue
            worst, which = 0.0, ""
            for text in texts(p.regex.pattern)[:2 if args.tiny else None]:
                runs = []
                for _ in range(args.repeat):
                    t0 = time.process_time()
                    for _ in p.regex.finditer(text):
                        pass
                    runs.append(time.process_time() - t0)
                per_char = statistics.median(runs) / (len(text) + 1)
                if per_char / steps > worst:
                    worst, which = per_char / steps, text[:12]
            print(f"  {p.id:28s} {steps:6d} {worst * 1e9:13.3f} {worst * steps * 1e9:8.1f} "
                  f"{cost.STEP_S / max(worst, 1e-12):6.0f}x  {which!r}")


if __name__ == "__main__":
    main()
