"""The verification tables: their inline examples pass, and an analyst's mistake in any of them
fails the load with a located, coded problem."""
from __future__ import annotations

import copy

import pytest
import yaml

from groundrules import RulesError, load_rulebook
from groundrules.core.examples import run_all
from verify_support import ROOT

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)     # libyaml's parser: the same data, 15x faster


def original(name: str) -> dict:
    return yaml.load((ROOT / "rules" / name).read_text(encoding="utf-8"), Loader=LOADER)


def problems(tmp_path, data: dict) -> list[tuple[str, str]]:
    path = tmp_path / "table.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    with pytest.raises(RulesError) as info:
        load_rulebook(ROOT, files=[path])
    return [(p.code, p.key) for p in info.value.problems if p.severity == "error"]


def test_every_inline_example_passes(vbook):
    outcomes = run_all(vbook)
    assert [o for o in outcomes if not o.ok] == []
    ids = {o.id.rsplit(":", 1)[0] for o in outcomes}
    assert {"verify.prohibition_phrases:zh.cancel", "verify.prohibition_phrases:zh.dont",
            "verify.prohibition_phrases:change", "verify.prohibition_phrases:restrict.first_only",
            "verify.intent_heuristics:target.joined", "verify.intent_heuristics:target.separated"} <= ids


def test_instances_are_part_of_the_rulebook_version(tmp_path):
    base = load_rulebook(ROOT, files=[ROOT / "rules" / "instances"])
    data = yaml.safe_load((ROOT / "rules" / "instances" / "order_note.yaml").read_text(encoding="utf-8"))
    data["schema"]["properties"]["note"]["description"] = "备注原文。"
    (tmp_path / "order_note.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    (tmp_path / "meeting_time.yaml").write_text(
        (ROOT / "rules" / "instances" / "meeting_time.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    assert load_rulebook(ROOT, files=[tmp_path]).version != base.version


@pytest.mark.parametrize("edit,expected", [
    (lambda d: d["issues"]["QUOTE_NOT_FOUND"].update(detects="quote_not_fond"), ("unknown-finding", "issues.QUOTE_NOT_FOUND.detects")),
    (lambda d: d["issues"].pop("QUOTE_EMPTY"), ("unmapped-observation", "issues")),
    (lambda d: d["issues"]["QUOTE_EMPTY"].update(category="modeloutput"), ("unknown-category", "issues.QUOTE_EMPTY.category")),
    (lambda d: d["issues"]["QUOTE_EMPTY"].update(error="MODEL_OUTPUT_INVALD"), ("unknown-error", "issues.QUOTE_EMPTY.error")),
    (lambda d: d["issues"]["QUOTE_EMPTY"].update(repairable=False), ("mixed-repairable", "errors.MODEL_OUTPUT_INVALID")),
    (lambda d: d["issues"]["CANDIDATE_SHAPE_INVALID"].update(error=None), ("must-fail", "issues.CANDIDATE_SHAPE_INVALID.error")),
    (lambda d: d["issues"]["QUOTE_EMPTY"].update(message={"zh": "empty {quote}", "en": "empty {quote}"}), ("unknown-field", "issues.QUOTE_EMPTY.message.zh")),
    (lambda d: d["issues"]["DATA_DEPENDENCY_MISSING"].update(detects="quote_empty"), ("bad-issue", "issues.DATA_DEPENDENCY_MISSING")),
    (lambda d: d["issues"]["EVIDENCE_MISSING"].update(detects="quote_empty", message={"zh": "no quote", "en": "no quote"}), ("duplicate-observation", "issues.QUOTE_EMPTY.detects")),
    (lambda d: d["issues"]["QUOTE_EMPTY"].update(stage="grounding"), ("bad-value", "issues.QUOTE_EMPTY.stage")),
])
def test_catalogue_mistakes_fail_the_load(tmp_path, edit, expected):
    data = copy.deepcopy(original("verify_issues.yaml"))
    edit(data)
    assert expected in problems(tmp_path, data)


@pytest.mark.parametrize("edit,expected", [
    (lambda d: d["phrases"][0].update(pattern="不要(?P<object>["), ("bad-regex", "phrases[0].pattern")),
    (lambda d: d["phrases"][0].update(pattern="不要(.+)"), ("missing-group", "phrases[0].pattern")),
    (lambda d: d["phrases"][1].update(id=d["phrases"][0]["id"]), ("duplicate-id", "phrases[1].id")),
    (lambda d: d["phrases"][0].update(kind="ban"), ("bad-value", "phrases[0].kind")),
    (lambda d: d["phrases"][0].pop("examples"), ("missing-key", "phrases[0]")),
])
def test_phrase_table_mistakes_fail_the_load(tmp_path, edit, expected):
    data = copy.deepcopy(original("prohibition_phrases.yaml"))
    edit(data)
    assert expected in problems(tmp_path, data)


def test_a_table_that_misses_its_examples_fails_groundrules_test(tmp_path):
    data = copy.deepcopy(original("prohibition_phrases.yaml"))
    data["phrases"][1]["pattern"] = "只(?P<object>[^，。]{1,20})"                     # now matches 只要
    data["phrases"][0]["examples"] = [{"text": "先只分析原因。", "matches": ["先只分析原因"]}]  # no negative
    dont = next(c for c in data["negation"]["cues"] if c["id"] == "zh.dont")
    dont["not_followed_by"].remove("的")                                              # now reads 别的 as 别
    data["negation"]["blockers"].remove("忘")                                          # 不要忘了提交代码 forbids
    path = tmp_path / "table.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    failed = {o.id for o in run_all(load_rulebook(ROOT, files=[path])) if not o.ok}
    assert "verify.prohibition_phrases:restrict.only_need:3" in failed
    assert "verify.prohibition_phrases:restrict.first_only" in failed
    assert "verify.prohibition_phrases:zh.dont:5" in failed
    assert "verify.prohibition_phrases:zh.forbid:10" in failed


def test_heuristic_without_its_group_fails_the_load(tmp_path):
    data = copy.deepcopy(original("intent_heuristics.yaml"))
    data["heuristics"][0]["pattern"] = "和|、"
    assert ("missing-group", "heuristics[0].pattern") in problems(tmp_path, data)


@pytest.mark.parametrize("schema,expected", [
    ({"type": "object", "properties": {"a": {"type": "strin"}}}, "schema.properties.a.type"),
    ({"type": "array", "properties": {}}, "schema.type"),
    ({"type": "object", "properties": {}, "required": ["a"]}, "schema.required[0]"),
    ({"type": "object", "properties": {"a": {"$ref": "other.json#/x"}}}, "schema.properties.a.$ref"),
    ({"type": "object", "$defs": {"a": {"$ref": "#/$defs/a"}}, "properties": {"a": {"$ref": "#/$defs/a"}}}, "schema"),
])
def test_instance_mistakes_fail_the_load(tmp_path, schema, expected):
    codes = problems(tmp_path, {"kind": "extension_schema", "id": "bad", "schema": schema})
    assert any(key == expected for _, key in codes), codes
