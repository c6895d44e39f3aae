"""Every benchmark runs: each script under tests/perf/ at its tiny size (`--tiny`: every check the
script makes before timing, a few rounds of little work), as the process a person starts, so a
benchmark that stops at its own check or no longer starts fails the suite instead of rotting.

The runs are real processes of seconds each (bench_http starts two servers, bench_ledger a
PostgreSQL cluster): extended, run by .ci/run after the default suite.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pg_cluster import IN_CI, missing_reason

PERF = Path(__file__).resolve().parent
ROOT = PERF.parents[1]
# script -> the extra arguments of each tiny run (one run per entry)
RUNS = {
    "bench_explain.py": [[]], "bench_fold.py": [[]], "bench_http.py": [[]], "bench_patterns.py": [[]],
    "bench_report.py": [[]], "bench_startup.py": [[]], "bench_verify.py": [[]], "bench_locks.py": [[]],
    "bench_locks_ab.py": [["--base", "HEAD"]],                  # against itself: needs no history
    "bench_ledger.py": [[], ["--db", "throwaway", "--only-postgres"]],
    "bench_decisions.py": [[]], "bench_oauth.py": [[]],
    "bench_fold_ab.py": [["--base", "HEAD"]],                  # against itself: needs no other branch
    "bench_erasure_ab.py": [["--base", "HEAD"]],               # against itself: needs no other branch
    "bench_verify_ab.py": [["--base", "HEAD"]],                # against itself: needs no other branch
    "bench_ledger_scale.py": [["--only", "sqlite"], ["--only", "postgres"]], "bench_lock_bounds.py": [[]],
    "bench_cost_sweep.py": [[]], "bench_provenance.py": [[]], "bench_batch.py": [[]], "bench_studio.py": [[]],
    "bench_reload.py": [[]],
}
# modules without a main of their own -> the run that reaches them
HELPERS = {"bench_ledger_hosts.py": ("bench_ledger.py", ["--db", "throwaway", "--only-postgres"])}
NEEDS_POSTGRES = {("bench_ledger.py", ("--db", "throwaway", "--only-postgres")),
                  ("bench_ledger_scale.py", ("--only", "postgres"))}


def test_every_script_under_perf_is_run_or_reached_by_a_run():
    scripts = {p.name: '__name__ == "__main__"' in p.read_text(encoding="utf-8")
               for p in PERF.glob("*.py") if p.name != Path(__file__).name}
    assert {name for name, runnable in scripts.items() if runnable} == set(RUNS)
    assert {name for name, runnable in scripts.items() if not runnable} == set(HELPERS)
    assert all(extra in RUNS[script] for script, extra in HELPERS.values())


@pytest.mark.extended
@pytest.mark.parametrize("script, extra", [(s, e) for s, runs in RUNS.items() for e in runs],
                         ids=[" ".join([s, *e]) for s, runs in RUNS.items() for e in runs])
def test_the_benchmark_runs_at_its_tiny_size(script, extra):
    if (script, tuple(extra)) in NEEDS_POSTGRES and missing_reason() and not IN_CI:
        pytest.skip(missing_reason())
    run = subprocess.run([sys.executable, str(PERF / script), "--tiny", *extra], cwd=ROOT, capture_output=True,
                         env=dict(os.environ, PYTHONIOENCODING="utf-8"), timeout=900)
    assert run.returncode == 0, run.stderr.decode("utf-8", errors="replace")[-3000:]
    assert run.stdout.strip(), "the benchmark printed nothing"


@pytest.mark.extended
@pytest.mark.parametrize("script", sorted(RUNS))
def test_the_benchmark_answers_help_and_runs_nothing(script, tmp_path):
    """`--help` says what the script measures and its options, then stops: no round count parsed
    from it, no ledger filled, no cluster started (a run in an empty folder leaves it empty)."""
    run = subprocess.run([sys.executable, str(PERF / script), "--help"], cwd=tmp_path, capture_output=True,
                         env=dict(os.environ, PYTHONIOENCODING="utf-8", TMPDIR=str(tmp_path)), timeout=120)
    assert run.returncode == 0, run.stderr.decode("utf-8", errors="replace")[-3000:]
    out = run.stdout.decode("utf-8")
    assert out.startswith(f"usage: {script}") and "--tiny" in out
    assert list(tmp_path.iterdir()) == []
