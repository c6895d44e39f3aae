"""The conversation corpus (tests/cases/fold/), one snapshot per group, and its contract."""
from __future__ import annotations

import pytest

from fold_support import GROUPS, group, outcome


@pytest.mark.parametrize("name", GROUPS)
def test_group_matches_snapshot(name, rulebook, snapshot_json):
    assert {case: outcome(p, rulebook) for case, p in group(name).items()} == snapshot_json


@pytest.mark.parametrize("name", GROUPS)
def test_output_satisfies_the_contract(name, rulebook):
    validator = rulebook.schemas.validator({"$ref": "evidence.v1.schema.json#/$defs/output"})
    for case, payload in group(name).items():
        result = outcome(payload, rulebook)
        if "data" in result:
            errors = [e.message for e in validator.iter_errors(result["data"])]
            assert errors == [], case


def test_refusal_cases_get_the_code_they_are_named_after(rulebook):
    for case, payload in group("refusals").items():
        result = outcome(payload, rulebook)
        assert "error" in result, case
        assert result["error"]["code"] == case.split(".")[0], case


def test_every_fold_refusal_code_has_a_corpus_case(rulebook):
    # the stores', and a lock table out of time (how long a scan takes is the machine's, not the payload's)
    store_only = {"ALREADY_REDACTED", "LEDGER_CORRUPT", "FOLD_INTERNAL", "LOCK_TIMEOUT"}
    # who wrote a record: the ledger's append judges it, fold() folds what it is handed
    store_only |= {"WRITER_GIVEN", "PROVENANCE_REFUSED", "SIGNATURE_INVALID", "SIGNER_UNKNOWN", "SIGNER_NOT_ALLOWED"}
    codes = set(rulebook.table("evidence_refusals").codes) - store_only
    named = {case.split(".")[0] for case in group("refusals")}
    assert codes - named == set()


def test_refusals_say_whether_to_recompute(rulebook):
    result = outcome(group("refusals")["LOCK_DROPPED.no_disposition"], rulebook)
    assert result["error"]["retry"] == "recompute"
    assert result["error"]["locks"] == ["L-m70-wechat"]
    result = outcome(group("refusals")["PAYLOAD_INVALID.missing_now"], rulebook)
    assert result["error"]["retry"] == "fix_input"
