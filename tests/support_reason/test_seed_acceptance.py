"""The seed's acceptance eval (seed 000 §6, "34/34"), one named assertion per check.

Groups 1-4 (what the support_reason table must decide) are stated in YAML,
rules/support_reason_acceptance.yaml, where an analyst's edit meets them through `groundrules test`;
here each of its checks and requirements is one test, read from the table. Groups 5-6 (stability,
no side effects) are properties of the engine and stay here. `pytest -v` lists every check by id;
`test_the_eval_has_at_least_34_assertions` keeps the count from shrinking.
"""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from typing import Callable, NamedTuple

import pytest

from groundrules import contract_text, default_rulebook, explain, load_rulebook
from groundrules.analyst import gate
from groundrules.core import canonical

from sr_cases import ROOT, case_path, corpus

CORPUS = corpus()
SEED_SAMPLE = "partial-engine-error-shenlun-count"          # the seed's 2024 重庆 申论 题量 sample
ACCEPTANCE = "support_reason.acceptance"
HASH_SEEDS = ("0", "1", "4242")


class Check(NamedTuple):
    group: int
    name: str
    run: Callable[[], None]


CHECKS: list[Check] = []


def check(group: int, name: str):
    def register(fn: Callable[[], None]) -> Callable[[], None]:
        CHECKS.append(Check(group, name, fn))
        return fn
    return register


def ctx(stem: str) -> dict:
    """A private copy of a corpus context (checks may vary it)."""
    return copy.deepcopy(CORPUS[stem])


def reason(stem_or_ctx) -> dict:
    value = ctx(stem_or_ctx) if isinstance(stem_or_ctx, str) else stem_or_ctx
    return explain(value, default_rulebook())


# === 5. stability ===============================================================================

def _cli(args: list[str], hash_seed: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, "-m", "groundrules.cli.main", *args], capture_output=True,
                          env=env, cwd=ROOT, timeout=60)


@check(5, "two-explain-runs-are-byte-identical")
def _():
    for stem in CORPUS:
        assert canonical.dumps(reason(stem)) == canonical.dumps(reason(stem)), stem


@check(5, "two-contract-text-runs-are-identical")
def _():
    book = default_rulebook()
    for stem in CORPUS:
        assert contract_text(ctx(stem), book) == contract_text(ctx(stem), book), stem


@check(5, "cli-output-is-byte-identical-across-three-hash-seeds")
def _():
    path = str(case_path("support_reason", "insufficient-many-reasons-in-order"))
    runs = [_cli(["explain", path], seed) for seed in HASH_SEEDS]
    assert all(r.returncode == 0 and r.stderr == b"" for r in runs)
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout
    assert json.loads(runs[0].stdout)["data"] == reason("insufficient-many-reasons-in-order")


@check(5, "whole-corpus-is-byte-identical-across-three-hash-seeds")
def _():
    script = ("import json,sys; from groundrules import explain; from groundrules.core import canonical; "
              "print(canonical.dumps({p: explain(json.load(open(p, encoding='utf-8'))) for p in sys.argv[1:]}))")
    paths = [str(case_path("support_reason", s)) for s in CORPUS]
    env_runs = []
    for seed in HASH_SEEDS:
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONIOENCODING="utf-8")
        env_runs.append(subprocess.run([sys.executable, "-c", script, *paths], capture_output=True, env=env,
                                       cwd=ROOT, timeout=60))
    assert all(r.returncode == 0 for r in env_runs)
    assert env_runs[0].stdout == env_runs[1].stdout == env_runs[2].stdout
    here = canonical.dumps({p: reason(s) for p, s in zip(paths, CORPUS)}) + "\n"
    assert env_runs[0].stdout.decode("utf-8") == here


@check(5, "rerun-on-a-built-context-equals-the-reason-build-wrote")
def _():
    c = ctx("existing-support-reason-from-build-cq-shenlun")
    assert canonical.dumps(reason(c)) == canonical.dumps(c["support_reason"])


@check(5, "an-existing-support-reason-is-recomputed-not-copied")
def _():
    c = ctx("existing-support-reason-stale")
    r = reason(c)
    assert r != c["support_reason"]
    without = {k: v for k, v in c.items() if k != "support_reason"}
    assert r == reason(without)


@check(5, "an-independently-loaded-rulebook-gives-the-same-bytes")
def _():
    fresh = load_rulebook(ROOT)
    for stem in CORPUS:
        assert canonical.dumps(explain(ctx(stem), fresh)) == canonical.dumps(reason(stem)), stem


# === 6. no side effects =========================================================================

def _unchanged(key: str) -> None:
    book = default_rulebook()
    for stem in CORPUS:
        c = ctx(stem)
        before = json.dumps(c.get(key), ensure_ascii=False, sort_keys=True)
        explain(c, book)
        contract_text(c, book)
        assert json.dumps(c.get(key), ensure_ascii=False, sort_keys=True) == before, stem


@check(6, "support-status-is-unchanged")
def _():
    _unchanged("support_status")


@check(6, "evidence-is-unchanged")
def _():
    _unchanged("evidence")


@check(6, "provenance-is-unchanged")
def _():
    _unchanged("provenance")


@check(6, "answer-policy-is-unchanged")
def _():
    _unchanged("answer_policy")


@check(6, "an-existing-support-reason-is-not-overwritten")
def _():
    _unchanged("support_reason")
    c = ctx("existing-support-reason-stale")
    kept = copy.deepcopy(c["support_reason"])
    explain(c, default_rulebook())
    assert c["support_reason"] == kept


@check(6, "whole-context-deep-equal-after-explain")
def _():
    for stem in CORPUS:
        c = ctx(stem)
        before = copy.deepcopy(c)
        explain(c, default_rulebook())
        assert c == before and list(c) == list(before), stem


@check(6, "explain-never-writes-support-reason-into-the-context")
def _():
    c = ctx(SEED_SAMPLE)
    assert "support_reason" not in c
    explain(c, default_rulebook())
    contract_text(c, default_rulebook())
    assert "support_reason" not in c


# === the eval itself ============================================================================

@pytest.mark.parametrize("check", CHECKS, ids=[f"g{c.group}-{c.name}" for c in CHECKS])
def test_seed_acceptance(check: Check):
    check.run()


STATED = {o.id.split(":", 1)[1]: o for o in gate.run(default_rulebook(), [ACCEPTANCE])}


@pytest.mark.parametrize("check_id", list(STATED))
def test_seed_acceptance_stated_in_yaml(check_id: str):
    outcome = STATED[check_id]
    assert outcome.ok, f"{outcome.where}: {outcome.message}"


def test_the_eval_has_at_least_34_assertions():
    table = default_rulebook().table(ACCEPTANCE)
    stated = [c.id for c in table.checks]
    names = stated + [f"g{c.group}-{c.name}" for c in CHECKS]
    assert len(names) == len(set(names))
    assert len(names) >= 34
    groups = {c.group for c in table.checks if c.group is not None} | {c.group for c in CHECKS}
    assert sorted(groups) == sorted(table.groups) == [1, 2, 3, 4, 5, 6]
