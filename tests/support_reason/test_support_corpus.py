"""The support_reason case corpus: pinned outputs, contract validity, purity, determinism, coverage.

Each group of `tests/cases/` is pinned as ONE snapshot `{file stem: support_reason}` so a change
to the table shows up as one reviewed diff. The coverage tests are computed from the corpus, so
deleting or editing a case cannot silently drop a reason code from the tests.
"""
from __future__ import annotations

import copy
import json

import pytest

from groundrules import contract_text, explain, explain_with_trace, load_rulebook
from groundrules.core import canonical

import sr_cases
from sr_cases import ROOT, corpus, malformed

CORPUS = corpus()
MALFORMED = malformed()
ALL = {**{f"support_reason/{k}": v for k, v in CORPUS.items()},
       **{f"support_reason_malformed/{k}": v for k, v in MALFORMED.items()}}


def _exact(value) -> str:
    """Type-exact text of a JSON value: 1, 1.0 and true differ here although they compare equal."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)


# --- pinned outputs --------------------------------------------------------------------------

def test_support_reason_corpus_snapshot(rulebook, snapshot_json):
    assert {stem: explain(ctx, rulebook) for stem, ctx in CORPUS.items()} == snapshot_json


def test_support_reason_malformed_snapshot(rulebook, snapshot_json):
    assert {stem: explain(ctx, rulebook) for stem, ctx in MALFORMED.items()} == snapshot_json


# --- the corpus is what it claims to be ------------------------------------------------------

def test_corpus_sizes():
    assert len(CORPUS) >= 28
    assert len(MALFORMED) >= 8


@pytest.mark.parametrize("stem", sorted(CORPUS))
def test_corpus_context_satisfies_the_contract(rulebook, stem):
    """A realistic case that broke the contract would only test the `unknown` path."""
    errors = [e.message for e in sr_cases.context_validator(rulebook).iter_errors(CORPUS[stem])]
    assert errors == []


@pytest.mark.parametrize("stem", sorted(MALFORMED))
def test_malformed_context_breaks_the_contract(rulebook, stem):
    assert not sr_cases.context_validator(rulebook).is_valid(MALFORMED[stem])


def _location(path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out or "(root)"


def _names_problem(detail: str, error) -> bool:
    """The detail names where the contract breaks and, for a missing key, which key."""
    if _location(error.absolute_path) not in detail:
        return False
    if error.validator == "required":
        absent = [k for k in error.validator_value if isinstance(error.instance, dict) and k not in error.instance]
        return any(f"'{k}'" in detail for k in absent)
    return True


@pytest.mark.parametrize("stem", sorted(MALFORMED))
def test_malformed_context_explains_as_unknown_naming_the_problem(rulebook, stem):
    ctx = MALFORMED[stem]
    reason = explain(ctx, rulebook)
    assert reason["primary"] == "unknown"
    assert [item["code"] for item in reason["reasons"]] == ["unknown"]
    detail = reason["reasons"][0]["detail"]
    errors = list(sr_cases.context_validator(rulebook).iter_errors(ctx))
    assert any(_names_problem(detail, e) for e in errors), detail


# --- every output honours the published contract ---------------------------------------------

@pytest.mark.parametrize("name", sorted(ALL))
def test_output_validates_against_support_reason_schema(rulebook, name):
    reason = explain(ALL[name], rulebook)
    errors = [e.message for e in sr_cases.reason_validator(rulebook).iter_errors(reason)]
    assert errors == []


def test_support_reason_schema_check_can_fail(rulebook):
    """The validator above really reads $defs.support_reason (an unknown code is refused)."""
    reason = explain(CORPUS["partial-engine-error-shenlun-count"], rulebook)
    reason["reasons"][0]["code"] = "looks_plausible"
    assert not sr_cases.reason_validator(rulebook).is_valid(reason)


@pytest.mark.parametrize("stem", sorted(CORPUS))
def test_primary_is_one_of_the_reasons_and_labels_come_from_the_table(rulebook, stem):
    reason = explain(CORPUS[stem], rulebook)
    table = rulebook.table("support_reason")
    codes = [item["code"] for item in reason["reasons"]]
    assert reason["primary"] in codes
    assert reason["primary_label"] == table.codes[reason["primary"]]["label"]
    assert all(item["label"] == table.codes[item["code"]]["label"] for item in reason["reasons"])
    assert len(codes) == len(set(codes))
    order = {code: i for i, code in enumerate(table.priority)}
    assert codes == sorted(codes, key=lambda c: order.get(c, len(order)))


# --- explain is pure -------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(ALL))
def test_explain_never_modifies_the_context(rulebook, name):
    ctx = ALL[name]
    before = copy.deepcopy(ctx)
    explain(ctx, rulebook)
    explain_with_trace(ctx, rulebook)
    contract_text(ctx, rulebook)
    assert ctx == before
    assert _exact(ctx) == _exact(before)
    if isinstance(ctx, dict):
        for key in ("support_status", "evidence", "provenance", "answer_policy", "support_reason"):
            assert _exact(ctx.get(key)) == _exact(before.get(key)), key


@pytest.mark.parametrize("name", sorted(ALL))
def test_reruns_are_byte_identical(rulebook, name):
    ctx = ALL[name]
    first = canonical.dumps(explain(ctx, rulebook))
    second = canonical.dumps(explain(copy.deepcopy(ctx), rulebook))
    assert first == second
    assert contract_text(ctx, rulebook) == contract_text(copy.deepcopy(ctx), rulebook)


def test_fresh_rulebook_gives_the_same_bytes(rulebook):
    """A second, independently compiled rulebook (same tables) explains every case identically."""
    fresh = load_rulebook(ROOT)
    assert fresh.version == rulebook.version
    for ctx in ALL.values():
        assert canonical.dumps(explain(ctx, fresh)) == canonical.dumps(explain(ctx, rulebook))


# --- contract text ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(ALL))
def test_contract_text_mentions_every_reason(rulebook, name):
    ctx = ALL[name]
    text = contract_text(ctx, rulebook)
    reason = explain(ctx, rulebook)
    assert "\n" not in text
    for item in reason["reasons"]:
        assert item["label"] in text, item["code"]
        assert item["detail"] in text, item["code"]
    if isinstance(ctx, dict) and isinstance(ctx.get("support_status"), str) and reason["primary"] != "unknown":
        assert ctx["support_status"] in text


# --- coverage, computed from the corpus ------------------------------------------------------

def _outputs(rulebook):
    return {stem: explain(ctx, rulebook) for stem, ctx in CORPUS.items()}


def test_every_status_code_is_primary_somewhere(rulebook):
    status = sr_cases.status_codes(rulebook)
    assert status, "the support_reason table marks no code as role: status"
    primaries = {out["primary"] for out in _outputs(rulebook).values()}
    assert [c for c in status if c not in primaries] == []


def test_every_reason_code_appears_in_some_reasons_list(rulebook):
    enum = rulebook.schemas.get(sr_cases.CONTRACT)["$defs"]["reason_code"]["enum"]
    table = rulebook.table("support_reason")
    reserved = {c for c in table.codes if table.codes[c].get("role") == "reserved"}
    codes = [c for c in enum if c not in reserved]
    assert sorted(codes) == sorted(set(table.codes) - reserved)     # the contract and the table agree
    seen = {item["code"] for out in _outputs(rulebook).values() for item in out["reasons"]}
    assert [c for c in codes if c not in seen] == []


def test_every_row_of_the_table_fires_on_some_case(rulebook):
    """Both branches of no_usable_evidence and of engine_degraded are exercised, not just the codes."""
    table = rulebook.table("support_reason")
    assert table.coverage(list(CORPUS.values())) == []


def test_diagnostic_codes_are_never_primary(rulebook):
    """Seed 000 §3: a diagnostic never decides the status; alone, it leaves the status unexplained."""
    status, diagnostic = set(sr_cases.status_codes(rulebook)), set(sr_cases.diagnostic_codes(rulebook))
    default = rulebook.table("support_reason").default.code
    diagnostics_alone = 0
    for stem, out in _outputs(rulebook).items():
        codes = {item["code"] for item in out["reasons"]}
        assert out["primary"] not in diagnostic, stem
        if codes & status:
            assert out["primary"] in status, stem
        else:
            assert out["primary"] == default, stem
            diagnostics_alone += bool(codes & diagnostic)
    assert diagnostics_alone >= 3    # scope_gap, conflict_candidate, engine_degraded each alone
