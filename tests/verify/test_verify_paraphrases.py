"""Issue 22, item 7 (seed 002, "撤回与修正": 具体措辞可以变化，不能只对照某一份固定 JSON): withdrawals,
prohibitions and joined targets are recognised however they are worded, by tables of words and
scopes, not by a list of examples. Every paraphrase is a corpus case under
tests/cases/verify/{withdrawals,prohibitions,joins}/ that says what it expects (the snapshot pins
the whole report); the tests here add what the corpus cannot show: that the words and scopes are
the table's, and that an analyst's edit of them decides."""
from __future__ import annotations

import shutil

import pytest
import yaml

from groundrules import RulesError, load_rulebook
from groundrules.verification import verify
from verify_support import CASES, ROOT, VERIFY_TABLES, cases, expectations, tool

GROUPS = ("withdrawals", "prohibitions", "joins")
EXPECTED = {f"{g}/{name}": (g, name, e) for g in GROUPS for name, e in expectations(g).items()}
EMPTY = {"type": "object", "properties": {}}
NO_EXTRACTION = {"data": {}, "evidence": [], "descriptionChecks": [], "fieldResults": [], "issues": []}
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)     # libyaml's parser: the same data, 15x faster


def codes(issues):
    return [i["code"] for i in issues]


def candidate(text, intents, prohibitions=(), requirements=()):
    items = [{"id": f"i{n}", "action": a, "target": t, "requirements": [], "status": "ready"}
             for n, (a, t) in enumerate(intents, 1)]
    return {"intent": {"input": text, "normalizedInput": text, "primaryIntent": "", "requirements": list(requirements),
                       "intents": items, "prohibitions": list(prohibitions)}, "extraction": NO_EXTRACTION}


def run(book, text, intents, prohibitions=(), requirements=()):
    return verify({"input": text, "fields": []}, EMPTY, candidate(text, intents, prohibitions, requirements), book)


def test_every_paraphrase_group_has_refused_and_passing_cases():
    for group in GROUPS:
        found = expectations(group)
        assert found and len(found) == len(list((CASES / group).glob("*.json"))), group
        assert {e["ok"] for e in found.values()} == {True, False}, group


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_each_paraphrase_gets_the_answer_its_case_expects(vbook, case):
    group, name, expect = EXPECTED[case]
    envelope = tool(cases(group)[name], vbook, report=True)
    report = envelope["data"]
    assert report["ok"] is expect["ok"], report
    assert codes((report["error"] or {}).get("issues", [])) == expect["issues"]
    assert codes(report["warnings"]) == expect["warnings"]
    if not expect["ok"]:
        # every refusal here is model output a new candidate can fix, as the catalogue says
        catalogue = vbook.table("verify.issues")
        assert report["error"]["code"] == catalogue.spec(expect["issues"][0]).error
        assert report["repairable"] is all(catalogue.spec(c).repairable for c in expect["issues"])


def test_seed002_a_dropped_prohibition_is_repairable_model_output_not_a_warning(vbook):
    """当前明确禁止修改时，结果应保留相应约束: prohibitions [] for 不要修改代码 is refused, and repaired."""
    text = "分析登录失败的原因，不要修改代码。"
    report = run(vbook, text, [("analyze", "登录失败的原因")])
    assert report["ok"] is False and report["repairable"] is True and report["warnings"] == []
    assert report["error"]["code"] == "MODEL_OUTPUT_INVALID" and report["error"]["stage"] == "intent"
    assert [(i["code"], i["path"]) for i in report["error"]["issues"]] == [("PROHIBITION_DROPPED", "/intent/prohibitions")]
    assert "不要修改代码" in report["error"]["issues"][0]["message"] and "10-16" in report["error"]["issues"][0]["message"]
    assert run(vbook, text, [("analyze", "登录失败的原因")], prohibitions=["不修改代码"])["ok"] is True


def test_seed002_the_seed_candidate_is_refused_for_every_paraphrase_of_its_withdrawal(vbook):
    """The seed's bad candidate (intent fix, no prohibition) for each withdrawal of the corpus."""
    refused = {n: p for n, p in cases("withdrawals").items() if n.endswith("_fix_refused")}
    assert len(refused) >= 12
    for name, payload in refused.items():
        report = tool(payload, vbook, report=True)["data"]
        assert codes(report["error"]["issues"]) == ["INTENT_WITHDRAWN_CONTINUED", "PROHIBITION_DROPPED"], name


def _tables(tmp_path, edit) -> object:
    for folder in ("rules", "schemas", "locks"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    path = tmp_path / "rules" / "prohibition_phrases.yaml"
    data = yaml.load(path.read_text(encoding="utf-8"), Loader=LOADER)
    edit(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return load_rulebook(tmp_path, files=[tmp_path / f for f in VERIFY_TABLES])


def _family(data, family_id):
    return next(f for f in data["actions"]["families"] if f["id"] == family_id)


def test_a_word_an_analyst_adds_to_a_family_is_read_in_every_negation(vbook, tmp_path):
    text = "别搞了，先分析原因。"
    assert run(vbook, text, [("搞登录", "登录")])["ok"] is True              # 搞 is no action word yet
    book = _tables(tmp_path, lambda d: _family(d, "change")["words"].append("搞"))
    report = run(book, text, [("搞登录", "登录")])
    assert codes(report["error"]["issues"]) == ["INTENT_WITHDRAWN_CONTINUED", "PROHIBITION_DROPPED"]


def test_the_scope_of_a_negation_is_the_tables(vbook, tmp_path):
    """别忘了修复 is a reminder because 忘 is a blocker; without it the table reads a prohibition."""
    text = "别忘了修复登录失败。"
    assert run(vbook, text, [("fix", "登录失败")])["ok"] is True
    book = _tables(tmp_path, lambda d: d["negation"].update(
        blockers=[w for w in d["negation"]["blockers"] if w not in ("忘", "忘记")]))
    report = run(book, text, [("fix", "登录失败")])
    assert codes(report["error"]["issues"]) == ["INTENT_ACTION_PROHIBITED", "PROHIBITION_DROPPED"]


def test_what_a_kind_requires_is_the_tables(vbook, tmp_path):
    """A withdrawal asked for again later withdraws nothing; the table can say it always holds."""
    text = "取消修改，先分析原因，然后再修复。"
    intents = [("analyze", "原因"), ("fix", "登录失败")]
    assert run(vbook, text, intents)["ok"] is True
    book = _tables(tmp_path, lambda d: d["negation"]["kinds"]["withdrawal"].update(
        required_unless="never", intent_allowed_if="never"))
    assert codes(run(book, text, intents)["error"]["issues"]) == ["INTENT_WITHDRAWN_CONTINUED", "PROHIBITION_DROPPED"]


def test_a_join_an_analyst_adds_is_read_in_every_target(vbook, tmp_path):
    text = "查询订单 A 或订单 B 的状态。"
    assert run(vbook, text, [("query", "订单 A 或订单 B")])["ok"] is True
    for folder in ("rules", "schemas", "locks"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    path = tmp_path / "rules" / "intent_heuristics.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("(?P<joiner>以及|", "(?P<joiner>或|以及|", 1),
                    encoding="utf-8")
    book = load_rulebook(tmp_path, files=[tmp_path / f for f in VERIFY_TABLES])
    assert codes(run(book, text, [("query", "订单 A 或订单 B")])["error"]["issues"]) == ["INTENT_TARGET_JOINED"]


def _problems(tmp_path, edit) -> list[tuple[str, str]]:
    data = yaml.load((ROOT / "rules" / "prohibition_phrases.yaml").read_text(encoding="utf-8"), Loader=LOADER)
    edit(data)
    path = tmp_path / "table.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    with pytest.raises(RulesError) as info:
        load_rulebook(ROOT, files=[path])
    return [(p.code, p.key) for p in info.value.problems if p.severity == "error"]


@pytest.mark.parametrize("edit,expected", [
    (lambda d: _family(d, "delete")["words"].append("修改"), ("duplicate-word", "actions.families[2].words")),
    (lambda d: d["negation"]["cues"][0]["words"].append("修复"), ("ambiguous-word", "negation.cues[0].words")),
    (lambda d: d["negation"]["blockers"].append("fix"), ("ambiguous-word", "negation.blockers")),
    (lambda d: d["negation"]["cues"][6].update(fillers=["再"]), ("conflicting-keys", "negation.cues[6]")),   # zh.cancel
    (lambda d: d["negation"]["cues"][1].update(id=d["negation"]["cues"][0]["id"]), ("duplicate-id", "negation.cues[1].id")),
    (lambda d: d["negation"]["kinds"]["withdrawal"].update(required_unless="sometimes"),
     ("bad-value", "negation.kinds.withdrawal.required_unless")),
    (lambda d: d.pop("negation"), ("missing-key", "")),
])
def test_word_table_mistakes_fail_the_load(tmp_path, edit, expected):
    found = _problems(tmp_path, edit)
    assert any(code == expected[0] and key.startswith(expected[1]) for code, key in found), found


def test_a_negation_deep_in_a_long_input_is_found_at_its_place(vbook):
    """Only the text around a cue is read; offsets are the input's all the same."""
    text = "好的，" * 500 + "不要修改代码。" + "谢谢。" * 500 + "别删了。"
    report = run(vbook, text, [("query", "日志")])
    assert codes(report["error"]["issues"]) == ["PROHIBITION_DROPPED", "PROHIBITION_DROPPED"]
    messages = [i["message"] for i in report["error"]["issues"]]
    start, last = text.index("不要修改代码"), text.index("别删了")
    assert f"{start}-{start + 6}" in messages[0] and f"{last}-{last + 3}" in messages[1]
