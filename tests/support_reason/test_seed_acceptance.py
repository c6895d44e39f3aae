"""The seed's acceptance eval (seed 000 §6, "34/34"), one named assertion per check.

The six groups of §6, each a list of named checks over corpus contexts (tests/cases/support_reason)
or small inline variants of them. `pytest -v` lists every check by id (`g3-names-who-failed`...);
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

from groundrules import canonical, contract_text, default_rulebook, explain, load_rulebook

import sr_cases
from sr_cases import ROOT, case_path, corpus

CORPUS = corpus()
SEED_SAMPLE = "partial-engine-error-shenlun-count"          # the seed's 2024 重庆 申论 题量 sample
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


def codes(r: dict) -> list[str]:
    return [item["code"] for item in r["reasons"]]


def item(r: dict, code: str) -> dict:
    found = [i for i in r["reasons"] if i["code"] == code]
    assert len(found) == 1, f"{code} not exactly once in {codes(r)}"
    return found[0]


def status_codes() -> set:
    return set(sr_cases.status_codes(default_rulebook()))


# === 1. each of the four statuses gets its right reasons ======================================

@check(1, "sufficient-primary-is-all-required-slots-supported")
def _():
    assert reason("sufficient-shenlun-count-duration")["primary"] == "all_required_slots_supported"


@check(1, "sufficient-has-no-other-status-reason")
def _():
    assert codes(reason("sufficient-shenlun-count-duration")) == ["all_required_slots_supported"]


@check(1, "sufficient-detail-names-every-required-slot-label")
def _():
    r = item(reason("sufficient-shenlun-count-duration"), "all_required_slots_supported")
    assert "题量" in r["detail"] and "时长" in r["detail"]
    assert r["slots"] == ["numeric", "duration"]


@check(1, "sufficient-ignores-conditional-support")
def _():
    assert "conditional_evidence_only" not in codes(reason("sufficient-conditional-support-not-reported"))


@check(1, "partial-primary-is-partial-slot-coverage")
def _():
    assert reason(SEED_SAMPLE)["primary"] == "partial_slot_coverage"


@check(1, "partial-detail-names-the-missing-slot")
def _():
    r = item(reason(SEED_SAMPLE), "partial_slot_coverage")
    assert "题量" in r["detail"] and r["slots"] == ["numeric"]


@check(1, "partial-is-not-required-slots-missing")
def _():
    assert "required_slots_missing" not in codes(reason(SEED_SAMPLE))


@check(1, "partial-with-only-conditional-evidence-is-conditional-evidence-only")
def _():
    r = reason("partial-conditional-only-mianshi-score")
    assert r["primary"] == "conditional_evidence_only"
    assert item(r, "conditional_evidence_only")["slots"] == ["score"]


@check(1, "insufficient-with-evidence-primary-is-required-slots-missing")
def _():
    r = reason("insufficient-slots-missing-with-evidence-shengkao-subjects")
    assert r["primary"] == "required_slots_missing"
    assert "时长" in item(r, "required_slots_missing")["detail"]


@check(1, "insufficient-is-not-partial-slot-coverage")
def _():
    assert "partial_slot_coverage" not in codes(reason("insufficient-slots-missing-with-evidence-shengkao-subjects"))


@check(1, "conflicting-primary-is-conflicting-evidence-naming-the-slot")
def _():
    r = reason("conflicting-shenlun-count")
    assert r["primary"] == "conflicting_evidence"
    assert "题量" in item(r, "conflicting_evidence")["detail"]
    assert item(r, "conflicting_evidence")["slots"] == ["numeric"]


@check(1, "conflicting-evidence-outranks-everything")
def _():
    for stem in ("conflicting-score-twice-and-missing-subjects", "conflicting-two-slots-kb-vector-timeout"):
        r = reason(stem)
        assert codes(r)[0] == "conflicting_evidence" and r["primary"] == "conflicting_evidence", stem
        assert len(codes(r)) > 1, stem


# === 2. the kinds of "insufficient" are told apart ============================================

@check(2, "no-candidates-primary-is-no-candidates")
def _():
    r = reason("insufficient-no-candidates-out-of-library")
    assert r["primary"] == "no_candidates"
    assert "no_usable_evidence" not in codes(r)


@check(2, "unreadable-pages-primary-is-no-usable-evidence")
def _():
    r = reason("insufficient-pages-unreadable")
    assert r["primary"] == "no_usable_evidence"
    assert "no_candidates" not in codes(r)
    assert "readable_count = 0" in item(r, "no_usable_evidence")["detail"]


@check(2, "readable-without-evidence-primary-is-no-usable-evidence")
def _():
    r = reason("insufficient-readable-no-evidence")
    assert r["primary"] == "no_usable_evidence"
    assert "evidence_count = 0" in item(r, "no_usable_evidence")["detail"]


@check(2, "unreadable-and-no-evidence-details-differ")
def _():
    a = item(reason("insufficient-pages-unreadable"), "no_usable_evidence")["detail"]
    b = item(reason("insufficient-readable-no-evidence"), "no_usable_evidence")["detail"]
    assert a != b
    assert "evidence_count = 0" not in a and "readable_count = 0" not in b


@check(2, "unreadable-detail-counts-the-candidates")
def _():
    assert "4" in item(reason("insufficient-pages-unreadable"), "no_usable_evidence")["detail"]


@check(2, "slots-missing-with-evidence-is-required-slots-missing-alone")
def _():
    r = reason("insufficient-slots-missing-with-evidence-shengkao-subjects")
    assert codes(r) == ["required_slots_missing"]


@check(2, "out-of-library-keeps-required-slots-missing-after-no-candidates")
def _():
    r = reason("insufficient-no-candidates-out-of-library")
    assert codes(r)[:2] == ["no_candidates", "required_slots_missing"]
    assert "体能测评项目" in item(r, "required_slots_missing")["detail"]


@check(2, "recorded-unresolved-is-not-required-slots-missing")
def _():
    r = reason("partial-recorded-unresolved-shenlun-score")
    assert r["primary"] == "recorded_unresolved"
    assert "required_slots_missing" not in codes(r) and "partial_slot_coverage" not in codes(r)


@check(2, "root-causes-precede-missing-slots")
def _():
    for stem in ("insufficient-no-candidates-out-of-library", "insufficient-pages-unreadable",
                 "insufficient-readable-no-evidence", "insufficient-recorded-unresolved-and-missing"):
        r = reason(stem)
        assert codes(r).index(r["primary"]) < codes(r).index("required_slots_missing"), stem


# === 3. engine error while another engine still answers =======================================

@check(3, "engine-error-gives-engine-degraded")
def _():
    assert "engine_degraded" in codes(reason(SEED_SAMPLE))


@check(3, "engine-degraded-names-who-failed-with-its-error")
def _():
    c = ctx(SEED_SAMPLE)
    error = next(e["error"] for e in c["engines"] if e["name"] == "wiki_recall")
    detail = item(reason(c), "engine_degraded")["detail"]
    assert "wiki_recall error" in detail and error in detail


@check(3, "engine-degraded-names-who-still-answered")
def _():
    detail = item(reason(SEED_SAMPLE), "engine_degraded")["detail"]
    assert "search.py" in detail and "仍返回了结果" in detail


@check(3, "engine-degraded-lists-only-the-failed-engine")
def _():
    assert item(reason(SEED_SAMPLE), "engine_degraded")["engines"] == ["wiki_recall"]


@check(3, "engine-error-leaves-primary-with-coverage")
def _():
    for stem in (SEED_SAMPLE, "partial-timeout-xingce-count-other-answered", "sufficient-xingce-duration-kb-vector-timeout",
                 "insufficient-unreadable-kb-vector-timeout"):
        r = reason(stem)
        assert r["primary"] != "engine_degraded" and r["primary"] in status_codes(), stem


@check(3, "engine-timeout-is-degraded-too")
def _():
    detail = item(reason("partial-timeout-xingce-count-other-answered"), "engine_degraded")["detail"]
    assert "wiki_recall timeout" in detail and "TimeoutError" in detail and "search.py" in detail


@check(3, "no-engine-answering-is-said-and-nobody-claimed-alive")
def _():
    detail = item(reason("insufficient-no-candidates-no-engine-answered"), "engine_degraded")["detail"]
    assert "没有其他引擎返回结果" in detail and "仍返回了结果" not in detail
    assert "wiki_recall error" in detail and "search.py timeout" in detail


@check(3, "engine-degraded-follows-the-engine-field-not-the-status")
def _():
    c = ctx(SEED_SAMPLE)
    c["engines"][0] = {"name": "wiki_recall", "status": "ok", "result_count": 1}
    r = reason(c)
    assert "engine_degraded" not in codes(r)
    assert r["primary"] == reason(SEED_SAMPLE)["primary"]


# === 4. not misjudged: incomparable and candidate are never conflicts ==========================

@check(4, "incomparable-only-gives-scope-gap")
def _():
    assert "scope_gap" in codes(reason("scope-gap-sufficient-incomparable-years"))


@check(4, "incomparable-only-never-gives-conflicting-evidence")
def _():
    for stem in ("scope-gap-sufficient-incomparable-years", "scope-gap-only-partial-mianshi-score"):
        assert "conflicting_evidence" not in codes(reason(stem)), stem


@check(4, "scope-gap-does-not-take-primary-from-a-status-code")
def _():
    assert reason("scope-gap-sufficient-incomparable-years")["primary"] == "all_required_slots_supported"


@check(4, "scope-gap-detail-names-the-slot-and-says-not-a-conflict")
def _():
    detail = item(reason("scope-gap-sufficient-incomparable-years"), "scope_gap")["detail"]
    assert "题量" in detail and "不是冲突" in detail


@check(4, "candidate-only-gives-conflict-candidate")
def _():
    assert "conflict_candidate" in codes(reason("conflict-candidate-sufficient-shenlun-duration"))


@check(4, "candidate-wording-says-not-yet-confirmed")
def _():
    r = item(reason("conflict-candidate-sufficient-shenlun-duration"), "conflict_candidate")
    assert "尚未确认" in r["detail"]


@check(4, "candidate-only-never-gives-conflicting-evidence")
def _():
    for stem in ("conflict-candidate-sufficient-shenlun-duration", "conflict-candidate-only-partial-xingce-count"):
        assert "conflicting_evidence" not in codes(reason(stem)), stem


@check(4, "conflict-candidate-does-not-take-primary-from-a-status-code")
def _():
    assert reason("conflict-candidate-sufficient-shenlun-duration")["primary"] == "all_required_slots_supported"


@check(4, "diagnostics-are-never-primary-even-when-no-status-code-matched")
def _():
    for stem, diagnostic in (("scope-gap-only-partial-mianshi-score", "scope_gap"),
                             ("conflict-candidate-only-partial-xingce-count", "conflict_candidate"),
                             ("engine-degraded-only-partial-xingce-score", "engine_degraded")):
        got = reason(stem)
        assert (got["primary"], codes(got)) == ("unknown", [diagnostic, "unknown"]), stem


@check(4, "conflicting-status-without-recorded-conflicts-is-not-conflicting-evidence")
def _():
    assert "conflicting_evidence" not in codes(reason("unexplained-conflicting-without-recorded-conflicts"))


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
    script = ("import json,sys; from groundrules import canonical, explain; "
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


def test_the_eval_has_at_least_34_assertions():
    names = [c.name for c in CHECKS]
    assert len(names) == len(set(names))
    assert len(CHECKS) >= 34
    assert sorted({c.group for c in CHECKS}) == [1, 2, 3, 4, 5, 6]
