"""What the analyst waits for: `diff` over every corpus, and the report page, in one process.

    .venv/bin/python tests/perf/bench_report.py [--rounds N] [--tiny]

Baseline: running every corpus once with one rulebook (each decision table on its cases, the lock
tables on the conversations, the fold on its payloads) -- the work any comparison must do twice.
Measured in paired, interleaved rounds (baseline, diff, report, report --base), medians printed with
their ratio to the baseline. Both rulebooks are loaded once, before timing (an edited copy of the
bundled tables: two priorities swapped and a label changed, so the diff has something to show).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases"

from groundrules import GroundrulesError, fold, load_rulebook, lock_messages
from groundrules.analyst import report
from groundrules.analyst import corpus  # noqa: E402
from groundrules.analyst.corpus_diff import corpus_diff  # noqa: E402


def run_corpora(book) -> None:
    for ref in corpus.decision_tables(book):
        for _, value in corpus.table_cases(CASES, ref.id) or ():
            ref.table.evaluate(value)
    for _, messages in corpus.lock_cases(CASES) or ():
        lock_messages(messages, book)
    for _, payload in corpus.fold_cases(CASES) or ():
        try:
            fold(payload, book)
        except GroundrulesError:
            pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--tiny", action="store_true", help="one round: proves the script runs")
    args = parser.parse_args()
    rounds = 1 if args.tiny else args.rounds
    base = load_rulebook(ROOT)
    with tempfile.TemporaryDirectory() as tmp:
        for d in ("rules", "locks", "schemas"):
            shutil.copytree(ROOT / d, Path(tmp) / d)
        table = Path(tmp) / "rules" / "support_reason.yaml"
        text = table.read_text(encoding="utf-8")
        text = text.replace("  - scope_gap\n  - conflict_candidate\n", "  - conflict_candidate\n  - scope_gap\n")
        table.write_text(text.replace("label: 检索引擎降级", "label: 检索引擎部分失败"), encoding="utf-8")
        edited = load_rulebook(tmp)
    jobs = {
        "baseline: every corpus once": lambda: run_corpora(edited),
        "diff (corpus_diff)": lambda: corpus_diff(base, edited, CASES),
        "report (render)": lambda: report.render(edited, CASES),
        "report --base (render)": lambda: report.render(edited, CASES, base),
    }
    times: dict = {name: [] for name in jobs}
    for _ in range(rounds):
        for name, job in jobs.items():
            start = time.perf_counter()
            job()
            times[name].append(time.perf_counter() - start)
    floor = statistics.median(times["baseline: every corpus once"])
    print(f"{rounds} interleaved rounds, medians (python {sys.version.split()[0]})")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:30} {median * 1000:8.1f} ms   {median / floor:5.2f}x baseline")


if __name__ == "__main__":
    main()
