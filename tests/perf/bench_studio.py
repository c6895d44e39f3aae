"""The studio's simulator on a corpus case, against a plain trace of the same value.

    .venv/bin/python tests/perf/bench_studio.py [--rounds N] [--cases N] [--tiny]

Baseline: `table.evaluate(value, trace=True)` on the case's value (what `groundrules eval --trace`
computes), the value already read. Measured: `Workspace.simulate(file, table, {"case": name})` with
one unsaved edit in the workspace, as the page asks it: the rulebook with the edited copy standing
in for its file (the workspace keeps it while nothing changes), the case looked up in the corpus,
the value checked against the table's contract, traced and located. Paired, interleaved rounds over
the first N cases of tests/cases/support_reason/; medians per call and their ratio. The issue's
target is 200 ms for the simulator; nothing here asserts it.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLE = "rules/support_reason.yaml"

from groundrules.analyst.studio import simulate, yamltext  # noqa: E402
from groundrules.analyst.studio.workspace import Workspace  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--cases", type=int, default=10)
    parser.add_argument("--tiny", action="store_true", help="every check, then two rounds of two cases")
    args = parser.parse_args()
    rounds, count = (2, 2) if args.tiny else (args.rounds, args.cases)
    with tempfile.TemporaryDirectory(prefix="bench-studio-") as tmp:
        for part in ("rules", "locks", "schemas", "tests/cases"):
            shutil.copytree(ROOT / part, Path(tmp) / part)
        ws = Workspace(Path(tmp))
        rows = yamltext.read(ws.text(TABLE))["rows"]
        i = next(n for n, r in enumerate(rows) if r["id"] == "no_usable_evidence.unreadable")
        ws.edit(TABLE, ["rows", i, "description"], "an unsaved edit", False)
        assert TABLE in ws.texts, "the workspace holds the edit"
        cases = next(t for t in ws.inputs(TABLE)["tables"] if t["table"] == "support_reason")["cases"][:count]
        book = ws._book()
        table = book.tables["support_reason"]
        values = dict(simulate.cases(ws.cases, book, "support_reason", "decision_table"))
        for name in cases:          # the check before timing: both answer the same rows
            simulated = [f["row"] for f in ws.simulate(TABLE, "support_reason", {"case": name})["fired"]]
            assert simulated == [f.row.id for f in table.evaluate(values[name], trace=True).fired], name
        times: dict[str, list] = {"baseline: evaluate(trace=True)": [], "studio: simulate a corpus case": []}
        for _ in range(rounds):
            for name in cases:
                start = time.perf_counter()
                table.evaluate(values[name], trace=True)
                times["baseline: evaluate(trace=True)"].append(time.perf_counter() - start)
                start = time.perf_counter()
                ws.simulate(TABLE, "support_reason", {"case": name})
                times["studio: simulate a corpus case"].append(time.perf_counter() - start)
    floor = statistics.median(times["baseline: evaluate(trace=True)"])
    print(f"{rounds} paired rounds x {len(cases)} cases, medians per call (python {sys.version.split()[0]}, "
          f"load {os.getloadavg()[0]:.1f})")
    for name, values_ in times.items():
        median = statistics.median(values_)
        print(f"  {name:34} {median * 1000:9.3f} ms   {median / floor:8.1f}x baseline")


if __name__ == "__main__":
    main()
