"""Loading the bundled tables again in a long-lived process (a host reloading, the studio, a test
worker), and reading the chat corpora, in paired, interleaved rounds against a baseline measured in
the same run.

    .venv/bin/python tests/perf/bench_reload.py [ROUNDS] [--tiny]

`reload`: `load_rulebook()` on a warm verdict cache, then every table read (compiled on first use).
The engine keeps what it compiled per process, so a second load of the same bytes compiles nothing;
the baseline, `reload, nothing kept`, forgets the process's compiled tables before each load, which
is what every load cost before they were kept (each table compiled again from the cache's parsed
form). `chat corpora` reads tests/cases/lock_chat*/*.yaml as lint's and the report's lock coverage
do, with libyaml's parser; its baseline parses the same texts with PyYAML's pure-Python parser.
Each round runs every measure once, the order rotating from round to round; each ratio is the
median of the per-round ratios to the round's baseline.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rounds", nargs="?", type=int, default=15, help="paired rounds (default 15)")
    parser.add_argument("--tiny", action="store_true", help="one round, every check still made: proves the script runs")
    args = parser.parse_args()
    rounds = 1 if args.tiny else args.rounds
    with tempfile.TemporaryDirectory() as cache:
        os.environ["GROUNDRULES_CACHE"] = cache
        import yaml

        from groundrules import load_rulebook
        from groundrules.analyst import corpus
        from groundrules.core import rulebook as rulebook_module

        def reload() -> None:
            book = load_rulebook(ROOT)
            for table_id in book.tables:
                book.tables[table_id]

        def reload_nothing_kept() -> None:
            rulebook_module._COMPILED = rulebook_module._Compiled()
            reload()

        texts = [p.read_text(encoding="utf-8") for folder in sorted(CASES.glob(corpus.CHATS))
                 for p in sorted(folder.glob("*.yaml"))]

        def chat_pure() -> list:
            return [yaml.load(text, Loader=yaml.SafeLoader) for text in texts]

        def chat_libyaml() -> list:
            return [yaml.load(text, Loader=yaml.CSafeLoader) for text in texts]

        cold = load_rulebook(ROOT)                   # fills the verdict cache
        warm = load_rulebook(ROOT)
        if warm.version != cold.version or sorted(warm.tables) != sorted(cold.tables):
            raise SystemExit("a warm load differs from the cold one")
        if chat_pure() != chat_libyaml():
            raise SystemExit("libyaml reads the chat corpora differently")
        if not texts or corpus.chat_cases(CASES) is None:
            raise SystemExit("no chat corpus found")
        pairs = {"reload": (reload, reload_nothing_kept), "chat corpora": (chat_libyaml, chat_pure)}
        measures = [(name, which, fn) for name, fns in pairs.items() for which, fn in zip(("new", "base"), fns)]
        times: dict = {(name, which): [] for name, which, _ in measures}
        for r in range(rounds):
            for name, which, fn in measures[r % len(measures):] + measures[:r % len(measures)]:
                t0 = time.perf_counter_ns()
                fn()
                times[(name, which)].append((time.perf_counter_ns() - t0) / 1e6)
    print(f"{rounds} paired rounds; {len(cold.tables)} tables, {len(texts)} chat files; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'measure':14s} {'median ms':>10s} {'baseline ms':>12s} {'speed-up':>9s}  baseline")
    for name, label in (("reload", "nothing kept"), ("chat corpora", "pure parser")):
        new, base = times[(name, "new")], times[(name, "base")]
        ratio = statistics.median(b / n for n, b in zip(new, base))
        print(f"{name:14s} {statistics.median(new):10.1f} {statistics.median(base):12.1f} {ratio:8.1f}x  {label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
