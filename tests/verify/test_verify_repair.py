"""The repair loop: feeds the issues back, stops on success, on an unrepairable error or after N
attempts, and records every attempt, including a candidate function that raised."""
from __future__ import annotations

import copy

import pytest

from groundrules import GroundrulesError
from groundrules.verification import repair_loop
from verify_seed_examples import CANDIDATE, MISSING_CANDIDATE, MISSING_ERROR, MISSING_REQUEST, REQUEST, RESULT

BROKEN = copy.deepcopy(CANDIDATE)
BROKEN["extraction"]["descriptionChecks"] = []          # the root check is missing: repairable


def scripted(*outcomes):
    """A propose function answering from a script; an exception in the script is raised."""
    calls = []

    def propose(request, schema, feedback):
        calls.append([i["code"] for i in feedback])
        outcome = outcomes[min(len(calls), len(outcomes)) - 1]
        if isinstance(outcome, Exception):
            raise outcome
        return copy.deepcopy(outcome)
    return propose, calls


def test_feedback_leads_to_a_verified_candidate(vbook):
    propose, calls = scripted(BROKEN, CANDIDATE)
    out = repair_loop(REQUEST, "meeting_time", propose, max_attempts=3, rulebook=vbook)
    assert (out["ok"], out["stopped"], out["attempts"]) == (True, "verified", 2)
    assert calls == [[], ["DESCRIPTION_CHECK_MISSING"]]
    assert out["final"]["data"] == RESULT
    assert [h["report"]["ok"] for h in out["history"]] == [False, True]
    assert out["history"][1]["feedback"][0]["path"] == "/data"


def test_stops_after_max_attempts_keeping_each(vbook):
    propose, calls = scripted(BROKEN)
    out = repair_loop(REQUEST, "meeting_time", propose, max_attempts=3, rulebook=vbook)
    assert (out["ok"], out["stopped"], out["attempts"]) == (False, "max_attempts", 3)
    assert len(calls) == 3 and [h["attempt"] for h in out["history"]] == [1, 2, 3]


def test_a_raising_propose_is_a_failed_attempt_not_a_crash(vbook):
    propose, calls = scripted(TimeoutError("model timed out"), CANDIDATE)
    out = repair_loop(REQUEST, "meeting_time", propose, max_attempts=2, rulebook=vbook)
    first = out["history"][0]
    assert first["candidate"] is None
    assert first["report"]["error"]["code"] == "MODEL_OUTPUT_INVALID"
    assert [i["code"] for i in first["report"]["error"]["issues"]] == ["CANDIDATE_UNAVAILABLE"]
    assert "TimeoutError" in first["report"]["error"]["issues"][0]["message"]
    assert "timed out" not in first["report"]["error"]["issues"][0]["message"]
    assert (out["ok"], out["attempts"]) == (True, 2)


def test_a_non_candidate_is_repairable_model_output(vbook):
    propose, calls = scripted("不是 JSON 对象", CANDIDATE)
    out = repair_loop(REQUEST, "meeting_time", propose, max_attempts=2, rulebook=vbook)
    assert [i["code"] for i in out["history"][0]["report"]["error"]["issues"]] == ["CANDIDATE_SHAPE_INVALID"]
    assert out["ok"] is True


def test_business_information_is_never_repaired(vbook):
    propose, calls = scripted(MISSING_CANDIDATE, CANDIDATE)
    out = repair_loop(MISSING_REQUEST, "meeting_time", propose, max_attempts=4, rulebook=vbook)
    assert (out["stopped"], out["attempts"], len(calls)) == ("not_repairable", 1, 1)
    assert out["final"]["error"] == MISSING_ERROR


def test_the_loop_result_follows_the_contract(vbook):
    propose, _ = scripted(ValueError("x"), BROKEN, CANDIDATE)
    out = repair_loop(REQUEST, "meeting_time", propose, max_attempts=3, rulebook=vbook)
    assert vbook.schemas.validator({"$ref": "verify.v1.schema.json#/$defs/repair"}).is_valid(out)


@pytest.mark.parametrize("kwargs", [{"propose": "not callable"}, {"max_attempts": 0}, {"max_attempts": 1.5},
                                    {"max_attempts": True}])
def test_bad_loop_arguments_are_refused_before_any_call(vbook, kwargs):
    propose, calls = scripted(CANDIDATE)
    args = {"propose": propose, "max_attempts": 2, **kwargs}
    with pytest.raises(GroundrulesError) as info:
        repair_loop(REQUEST, "meeting_time", args["propose"], max_attempts=args["max_attempts"], rulebook=vbook)
    assert info.value.code == "INVALID_ARGUMENT" and calls == []


def test_an_unknown_field_is_refused_before_any_call(vbook):
    propose, calls = scripted(CANDIDATE)
    with pytest.raises(GroundrulesError):
        repair_loop({"input": "x", "fields": ["start"]}, "meeting_time", propose, rulebook=vbook)
    assert calls == []


def test_history_keeps_each_candidate_as_it_was_verified(vbook):
    """A host that fixes one candidate object in place between attempts must not rewrite history."""
    cand = copy.deepcopy(BROKEN)

    def propose(request, schema, feedback):
        if feedback:
            cand["extraction"]["descriptionChecks"] = copy.deepcopy(CANDIDATE["extraction"]["descriptionChecks"])
        return cand

    out = repair_loop(REQUEST, "meeting_time", propose, max_attempts=3, rulebook=vbook)
    assert (out["stopped"], out["attempts"]) == ("verified", 2)
    assert out["history"][0]["candidate"] == BROKEN
    assert out["history"][1]["candidate"] == CANDIDATE


def test_a_propose_returning_garbage_every_time_stops_after_max_attempts(vbook):
    garbage = [None, 42, "候选", [], {"intent": {}}, {"intent": float("nan"), "extraction": {}}, {1: 2}]
    propose, calls = scripted(*garbage)
    out = repair_loop(REQUEST, "meeting_time", propose, max_attempts=len(garbage), rulebook=vbook)
    assert (out["ok"], out["stopped"], out["attempts"]) == (False, "max_attempts", len(garbage))
    for entry in out["history"]:
        assert [i["code"] for i in entry["report"]["error"]["issues"]][:1] == ["CANDIDATE_SHAPE_INVALID"]
    assert all(codes and set(codes) == {"CANDIDATE_SHAPE_INVALID"} for codes in calls[1:])
    assert vbook.schemas.validator({"$ref": "verify.v1.schema.json#/$defs/repair"}).is_valid(
        {**out, "history": [{**h, "candidate": None} for h in out["history"]]})
