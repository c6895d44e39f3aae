"""The case corpus (tests/cases/verify/<group>/*.json), one snapshot per group, plus what must
hold for every case: the contract's shapes, byte-identical reruns, every issue code exercised."""
from __future__ import annotations

import pytest

from groundrules.core import canonical
from groundrules.verification import repair_loop
from verify_support import tool, all_cases, case_groups, cases


def pinned(envelope: dict) -> dict:
    """The whole report (grounding offsets included); a refusal as its error. Never the rulebook
    version, so an edit to one table does not touch every snapshot."""
    if envelope["data"] is not None:
        return envelope["data"]
    return {"ok": envelope["ok"], "error": envelope["error"]}


@pytest.mark.parametrize("group", case_groups())
def test_corpus(group, vbook, snapshot_json):
    out = {name: pinned(tool(payload, vbook, report=True)) for name, payload in cases(group).items()}
    assert out == snapshot_json


def test_every_report_follows_the_contract(vbook):
    report = vbook.schemas.validator({"$ref": "verify.v1.schema.json#/$defs/report"})
    result = vbook.schemas.validator({"$ref": "verify.v1.schema.json#/$defs/result"})
    for name, payload in all_cases().items():
        envelope = tool(payload, vbook, report=True)
        if envelope["data"] is None:
            assert envelope["error"]["code"] == "INVALID_ARGUMENT", name
            continue
        assert report.is_valid(envelope["data"]), name
        short = tool(payload, vbook)
        assert short["data"] is None or result.is_valid(short["data"]), name
        assert short["error"] == envelope["data"]["error"] and short["warnings"] == envelope["data"]["warnings"]


def test_reruns_are_byte_identical(vbook):
    for name, payload in all_cases().items():
        first = canonical.dumps(tool(payload, vbook, report=True))
        assert canonical.dumps(tool(payload, vbook, report=True)) == first, name


def test_verify_leaves_its_arguments_untouched(vbook):
    for name, payload in all_cases().items():
        before = canonical.dumps(payload)
        tool(payload, vbook, report=True)
        assert canonical.dumps(payload) == before, name


def test_every_catalogue_code_is_exercised(vbook):
    seen = set()
    for payload in all_cases().values():
        envelope = tool(payload, vbook)
        issues = (envelope["error"] or {}).get("issues", []) + envelope["warnings"]
        seen |= {i["code"] for i in issues}

    def fails(request, schema, feedback):
        raise RuntimeError("model unavailable")

    loop = repair_loop({"input": "x", "fields": []}, "order_note", fails, max_attempts=1, rulebook=vbook)
    seen |= {i["code"] for i in loop["final"]["error"]["issues"]}

    def malformed(request, schema, feedback):          # the registry refuses this shape before verifying
        return {"intent": {}}                          # (issue 32); a host's raw model output gets the verdict

    loop = repair_loop({"input": "x", "fields": []}, "order_note", malformed, max_attempts=1, rulebook=vbook)
    seen |= {i["code"] for i in loop["final"]["error"]["issues"]}
    assert seen == set(vbook.table("verify.issues").issues)
