"""Seed 000 §3: engine_degraded 永远不参与决定 support_status. A diagnostic code is never primary;
when no status code explains the status, primary is `unknown` (the context is inconsistent) and
the diagnostics stay in reasons[]."""
from __future__ import annotations

import copy
import json
from pathlib import Path

from groundrules import load_rulebook
from groundrules.support_reason import explain

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "tests" / "cases" / "support_reason" / "engine-degraded-only-partial-xingce-score.json"


def _book():
    return load_rulebook(ROOT)


def test_seed000_engine_degraded_never_decides_the_status():
    book = _book()
    table = book.table("support_reason")
    roles = {code: attrs.get("role") for code, attrs in table.codes.items()}
    ctx = json.loads(CASE.read_text(encoding="utf-8"))
    assert ctx["support_status"] == "partial" and ctx["missing"] == []   # nothing explains partial
    got = explain(copy.deepcopy(ctx), book)
    assert roles[got["primary"]] != "diagnostic"
    assert got["primary"] == table.default.code
    assert [r["code"] for r in got["reasons"]] == ["engine_degraded", table.default.code]
    detail = got["reasons"][1]["detail"]
    assert "partial" in detail and "不一致" in detail
    assert "wiki_recall" in got["reasons"][0]["detail"]


def test_seed000_no_diagnostic_is_ever_primary():
    """Every diagnostic alone, on a status nothing explains: primary is the table's default."""
    book = _book()
    table = book.table("support_reason")
    diagnostics = [c for c, a in table.codes.items() if a.get("role") == "diagnostic"]
    assert diagnostics
    for stem in sorted(p.stem for p in CASE.parent.glob("*.json")):
        got = explain(json.loads((CASE.parent / f"{stem}.json").read_text(encoding="utf-8")), book)
        assert got["primary"] not in diagnostics, stem


def test_seed000_a_status_code_stays_primary_beside_engine_degraded():
    """§6 item 3: wiki_recall error + search.py ok with a slot missing: primary stays the coverage."""
    ctx = json.loads(CASE.read_text(encoding="utf-8"))
    ctx["required_slots"].append({"slot": "count", "label": "题量"})
    ctx["missing"] = [{"slot": "count", "label": "题量", "reason": "not_covered"}]
    got = explain(ctx, _book())
    assert got["primary"] == "partial_slot_coverage"
    assert "engine_degraded" in [r["code"] for r in got["reasons"]]
