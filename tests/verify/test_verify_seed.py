"""Seed 002's examples, taken literally: the result and the error must equal the seed's JSON
after parsing."""
from __future__ import annotations

import pytest

from groundrules import GroundrulesError, load_rulebook
from groundrules.verification import repair_loop, verify
from verify_seed_examples import (CANDIDATE, MISSING_CANDIDATE, MISSING_ERROR, MISSING_REQUEST, REQUEST,
                                  RESULT, SCHEMA)
from verify_support import ROOT


def test_end_time_only_gives_the_seed_result(vbook):
    for schema in (SCHEMA, "meeting_time"):
        report = verify(REQUEST, schema, CANDIDATE, vbook)
        assert report["ok"] is True
        assert report["data"] == RESULT
        assert report["error"] is None and report["warnings"] == []


def test_start_time_is_quoted_but_never_returned(vbook):
    report = verify(REQUEST, SCHEMA, CANDIDATE, vbook)
    assert "startTime" not in report["data"]["data"]
    quoted = [g for g in report["grounding"] if g["path"].startswith("/extraction/descriptionChecks")]
    assert quoted[0]["quote"] == "开始时间09:00，结束时间10:00" and quoted[0]["start"] is not None


def test_missing_root_check_is_repairable_model_output(vbook):
    candidate = {"intent": CANDIDATE["intent"], "extraction": dict(CANDIDATE["extraction"], descriptionChecks=[])}
    report = verify(REQUEST, SCHEMA, candidate, vbook)
    assert report["ok"] is False and report["repairable"] is True
    assert report["error"]["code"] == "MODEL_OUTPUT_INVALID"
    assert [(i["code"], i["path"]) for i in report["error"]["issues"]] == [("DESCRIPTION_CHECK_MISSING", "/data")]
    assert "partialResult" not in report["error"]


def test_missing_start_time_gives_the_seed_error(vbook):
    for schema in (SCHEMA, "meeting_time"):
        report = verify(MISSING_REQUEST, schema, MISSING_CANDIDATE, vbook)
        assert report["ok"] is False and report["data"] is None
        assert report["error"] == MISSING_ERROR
        assert report["repairable"] is False


def test_missing_material_stops_the_repair_loop_at_once(vbook):
    calls = []

    def propose(request, schema, feedback):
        calls.append(feedback)
        return MISSING_CANDIDATE

    out = repair_loop(MISSING_REQUEST, "meeting_time", propose, max_attempts=5, rulebook=vbook)
    assert (out["ok"], out["stopped"], out["attempts"]) == (False, "not_repairable", 1)
    assert out["final"]["error"] == MISSING_ERROR and calls == [[]]


def test_the_bundled_rulebook_verifies_the_seed():
    assert verify(REQUEST, "meeting_time", CANDIDATE)["data"] == RESULT
    assert verify(MISSING_REQUEST, "meeting_time", MISSING_CANDIDATE)["error"] == MISSING_ERROR


def test_a_rulebook_without_the_verify_tables_is_refused():
    instances_only = load_rulebook(ROOT, files=[ROOT / "rules" / "instances"])
    for bad in (instances_only, "rules/"):
        with pytest.raises(GroundrulesError) as info:
            verify(REQUEST, "meeting_time", CANDIDATE, bad)
        assert info.value.code == "INVALID_ARGUMENT" and info.value.field == "rulebook"
