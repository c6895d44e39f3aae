"""The tables an analyst edits: inline examples run, bad edits fail the load with located codes."""
from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from groundrules import RulesError, load_rulebook
from groundrules.core.examples import run_all
from table_edits import TableFile

ROOT = Path(__file__).resolve().parents[2]
OURS = ("events.yaml", "merge.yaml", "evidence_refusals.yaml")


def copy_tables(tmp_path: Path) -> Path:
    """A copy of the fold's tables (and the schemas), to edit by what they hold (tests/table_edits.py)."""
    shutil.copytree(ROOT / "schemas", tmp_path / "schemas")
    (tmp_path / "rules").mkdir()
    for name in OURS:
        shutil.copy2(ROOT / "rules" / name, tmp_path / "rules" / name)
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


def paths(value, path: tuple = ()):
    """(path, value) of every node of a loaded table, the root first."""
    yield path, value
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield from paths(child, path + (key,))


def first(table: TableFile, under: tuple, test) -> tuple:
    """The path of the first node under `under` for which test(value) holds."""
    return next(p for p, v in paths(table.at(*under), under) if test(v))


def unknown_outcome(t):          # an outcome the fold does not know, beside the ones it does
    merge = t["merge.yaml"]
    merge.insert_after(("resolve", "outputs", list(merge.at("resolve", "outputs"))[-1]), "no_such_outcome: {label: x}")


def misspelt_policy(t):          # a policy example naming a policy the table does not have
    merge = t["merge.yaml"]
    where = first(merge, ("examples",), lambda v: isinstance(v, dict) and "policy" in v)
    merge.write_scalar(where + ("policy",), merge.at(*where, "policy") + "_typo")


def misspelt_field(t):           # a resolve row reading a field of `current` that does not exist
    merge = t["merge.yaml"]
    where = first(merge, ("resolve", "rows"), lambda v: isinstance(v, dict) and str(v.get("field", "")).startswith("current."))
    merge.write_scalar(where + ("field",), merge.at(*where, "field") + "s")


def unknown_operator(t):         # a test written with an operator the grammar does not have
    merge = t["merge.yaml"]
    where = first(merge, ("resolve", "rows"), lambda v: isinstance(v, dict) and "eq" in v and "field" in v)
    merge.rename_key(where + ("eq",), "equals")


def unknown_op(t):               # an event type mapped to an op the fold does not have
    merge = t["merge.yaml"]
    merge.write_scalar(("events", next(iter(merge.at("events")))), "no_such_op")


def required_and_forbidden(t):   # an event type that forbids a key it requires
    events = t["events.yaml"]
    name = next(n for n, e in events.at("events").items() if e["requires"] and e.get("forbids"))
    events.write_scalar(("events", name, "forbids", 0), events.at("events", name, "requires", 0))


def unknown_filter(t):           # a refusal message through a filter templates do not have
    refusals = t["evidence_refusals.yaml"]
    where = first(refusals, (), lambda v: isinstance(v, dict) and "{" in str(v.get("message", "")))
    message = refusals.at(*where, "message", "zh")
    end = message.index("}")
    refusals.write_scalar(where + ("message", "zh"), message[:end] + "|no_such_filter" + message[end:])


@pytest.mark.parametrize("edit, code", [
    (unknown_outcome, "unknown-code"), (misspelt_policy, "unknown-policy"), (misspelt_field, "unknown-field"),
    (unknown_operator, "unknown-operator"), (unknown_op, "bad-value"), (required_and_forbidden, "bad-value"),
    (unknown_filter, "unknown-filter"),
], ids=lambda v: v.__name__ if callable(v) else v)
def test_bad_edits_fail_the_load_with_a_code(tmp_path, edit, code):
    root = copy_tables(tmp_path)
    edit({name: TableFile(root / "rules" / name) for name in OURS})
    assert code in codes_of(root)


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
