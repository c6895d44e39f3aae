"""The tables an analyst edits: inline examples run, bad edits fail the load with located codes."""
from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from groundrules import RulesError, load_rulebook
from groundrules.examples import run_all
from table_edits import TableFile

ROOT = Path(__file__).resolve().parents[2]
OURS = ("events.yaml", "merge.yaml", "evidence_refusals.yaml")


def copy_tables(tmp_path: Path, edit=None) -> Path:
    shutil.copytree(ROOT / "schemas", tmp_path / "schemas")
    (tmp_path / "rules").mkdir()
    for name in OURS:
        text = (ROOT / "rules" / name).read_text(encoding="utf-8")
        if edit and name in edit:
            old, new = edit[name]
            assert old in text
            text = text.replace(old, new, 1)
        (tmp_path / "rules" / name).write_text(text, encoding="utf-8")
    return tmp_path


def codes_of(root: Path) -> list[str]:
    with pytest.raises(RulesError) as info:
        load_rulebook(root)
    return [p.code for p in info.value.problems]


def test_every_inline_example_passes(rulebook):
    ours = [o for o in run_all(rulebook) if o.id.split(":")[0].split(".")[0] in ("events", "merge")]
    assert len(ours) > 60
    assert [o for o in ours if not o.ok] == []


def test_events_and_merge_name_the_same_event_types(rulebook):
    events, merge = rulebook.table("events"), rulebook.table("merge")
    assert sorted(events.events) == sorted(merge.ops)
    assert all(events.events[name].layer == merge.layer(name) for name in merge.ops)


@pytest.mark.parametrize("edit, code", [
    ({"merge.yaml": ("    conflict:    {label: 记为冲突，两值都作为候选}", "    conflicted:  {label: x}\n    conflict:    {label: y}")},
     "unknown-code"),
    ({"merge.yaml": ("  - policy: expiry\n    name: closing", "  - policy: expiri\n    name: closing")}, "unknown-policy"),
    ({"merge.yaml": ("{field: current.status, eq: empty}", "{field: current.statuss, eq: empty}")}, "unknown-field"),
    ({"merge.yaml": ("{field: event.type, eq: confirm}", "{field: event.type, equals: confirm}")}, "unknown-operator"),
    ({"merge.yaml": ("  set: value\n", "  set: assign\n")}, "bad-value"),
    ({"events.yaml": ("    requires: [slot, value]\n    forbids: [parent]\n    examples:\n      - {given: {id: e1",
                      "    requires: [slot, value]\n    forbids: [value]\n    examples:\n      - {given: {id: e1")},
     "bad-value"),
    ({"evidence_refusals.yaml": ('message: "{at} cites', 'message: "{at|upper} cites')}, "unknown-filter"),
])
def test_bad_edits_fail_the_load_with_a_code(tmp_path, edit, code):
    assert code in codes_of(copy_tables(tmp_path, edit))


def test_a_policy_without_example_fails_groundrules_test(tmp_path):
    merge = TableFile(copy_tables(tmp_path) / "rules" / "merge.yaml")
    merge.insert_after(("policies", list(merge.at("policies"))[-1]), "tie_break: 同分时取最新")
    failed = [o for o in run_all(load_rulebook(tmp_path)) if not o.ok]
    assert [(o.file, o.key) for o in failed] == [("rules/merge.yaml", "policies.tie_break")]


def test_a_wrong_example_expectation_fails_groundrules_test(tmp_path):
    """The first whole-fold example's first expected status changed to another status the table
    knows: `groundrules test` fails that example, at its place in the table, and no other."""
    merge = TableFile(copy_tables(tmp_path) / "rules" / "merge.yaml")
    [index] = [i for i, e in enumerate(merge.at("examples")) if e.get("expect")][:1]
    status = merge.at("examples", index, "expect", 0, "status")
    other = next(s for s in load_rulebook(ROOT).table("merge").status.codes if s != status)   # slot statuses
    merge.replace_value(("examples", index, "expect", 0, "status"), other)
    failed = [o for o in run_all(load_rulebook(tmp_path)) if not o.ok]
    assert [(o.file, o.key) for o in failed] == [("rules/merge.yaml", f"examples[{index}].expect[0]")]


def test_reordering_policy_rows_changes_the_fold(tmp_path):
    """The policy really is the table: making set-over-set replace instead of conflict."""
    from groundrules import fold
    from fold_support import group
    root = copy_tables(tmp_path)
    TableFile(root / "rules" / "merge.yaml").replace_value(("resolve", "default", "code"), "replace")
    book = load_rulebook(root)
    slot = fold(group("precedence")["tool_receipt_against_user_statement"], book)["state"]["scopes"]["demand_1"]["slots"]
    assert (slot["company_region"]["status"], slot["company_region"]["value"]) == ("filled", "上海")


def _question(payload: dict, book) -> str:
    from groundrules import fold
    (clar,) = fold(payload, book)["state"]["clarifications"]
    return clar["question"]


def test_question_spacing_is_the_tables_choice(tmp_path, rulebook):
    """cjk_latin spaces only where Chinese meets Latin letters or digits; `none` leaves the text as rendered."""
    from fold_support import group
    payload = group("seed_region")["unresolved_asks_the_seed_question"]
    chinese_only = copy.deepcopy(payload)
    chinese_only["interpretations"][0]["events"][1]["value"] = "上海分部"
    assert _question(chinese_only, rulebook).startswith("这批产品是交付到上海分部吗？")
    merge = TableFile(copy_tables(tmp_path) / "rules" / "merge.yaml")
    assert merge.at("clarify", "spacing") == "cjk_latin"
    merge.replace_value(("clarify", "spacing"), "none")
    book = load_rulebook(tmp_path)
    assert _question(payload, book).startswith("这批产品是交付到B 地分部吗？")
