"""Checks that cannot pass vacuously: an example's `given` and an acceptance check's `expect` are
read against the contracts at load (a mistyped field, a value outside the enum, a full-width colon),
and a row's output that the answer would drop is refused at its line."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from groundrules import RulesError, explain, load_rulebook

ROOT = Path(__file__).resolve().parents[2]
BOOK = load_rulebook(ROOT)


@pytest.fixture
def root(tables_copy) -> Path:
    return tables_copy


def problems(root: Path) -> list:
    with pytest.raises(RulesError) as exc:
        load_rulebook(root, cache=False)
    return exc.value.problems


def edit_line(root: Path, file: str, line: int, old: str, new: str) -> None:
    path = root / file
    lines = path.read_text(encoding="utf-8").split("\n")
    assert old in lines[line - 1], (old, lines[line - 1])
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    path.write_text("\n".join(lines), encoding="utf-8")


def flow_given(file: str, key: str) -> int:
    """The line of the first flow-style example whose `given` names `key`."""
    lines = (ROOT / file).read_text(encoding="utf-8").split("\n")
    return next(n for n, text in enumerate(lines, 1) if re.search(r"given: \{.*\b" + re.escape(key) + ":", text))


def enum_field(table_id: str) -> tuple[str, list]:
    """A top-level field of a table's input contract that has an enum, and its values."""
    table = BOOK.table(table_id)
    schema = json.loads((ROOT / "schemas" / table.input).read_text(encoding="utf-8"))
    name, prop = next((n, p) for n, p in schema["properties"].items() if "enum" in p)
    return name, prop["enum"]


def test_a_mistyped_key_in_a_rows_given_is_refused_at_its_line(root):
    line = flow_given("rules/support_reason.yaml", "candidate_count")
    edit_line(root, "rules/support_reason.yaml", line, "candidate_count:", "candidate_cont:")
    [p] = problems(root)
    assert (p.code, p.file, p.line) == ("unknown-field", "rules/support_reason.yaml", line)
    assert "candidate_count" in p.hint


def test_a_given_value_outside_the_enum_is_refused(root):
    name, values = enum_field("support_reason")
    line = flow_given("rules/support_reason.yaml", name)
    value = re.search(rf"\b{name}: (\w+)", (root / "rules/support_reason.yaml").read_text(
        encoding="utf-8").split("\n")[line - 1])[1]
    assert value in values
    edit_line(root, "rules/support_reason.yaml", line, f"{name}: {value}", f"{name}: {value}x")
    [p] = problems(root)
    assert (p.code, p.line) == ("literal-not-in-enum", line) and f"'{value}'" in p.hint


def test_a_full_width_colon_in_a_given_is_named(root):
    name, _ = enum_field("support_reason")
    line = flow_given("rules/support_reason.yaml", name)
    edit_line(root, "rules/support_reason.yaml", line, f"{name}: ", f"{name}： ")
    [p] = problems(root)
    assert (p.code, p.line) == ("full-width-punctuation", line)
    assert "U+FF1A FULLWIDTH COLON" in p.message and p.hint.startswith(f"write: {name}: ")


def test_a_mistyped_key_in_a_guards_given_is_refused(root):
    table = BOOK.table("finding_states")
    field = next(f.split(".")[0] for g in table.guards.values() for f, _ in g.when.fields() if "." in f)
    line = flow_given("rules/finding_states.yaml", field)
    edit_line(root, "rules/finding_states.yaml", line, f"{field}:", f"{field}s:")
    found = [(p.code, p.line) for p in problems(root)]
    assert ("unknown-field", line) in found


def _check_line(root: Path, table_id: str, pattern: str) -> tuple[int, str]:
    lines = (root / BOOK.table(table_id).file).read_text(encoding="utf-8").split("\n")
    return next((n, text) for n, text in enumerate(lines, 1) if re.search(pattern, text))


ACCEPTANCE = next(t for t in sorted(BOOK.kinds) if BOOK.kinds[t] == "acceptance" and BOOK.table(t).checks)


def test_a_mistyped_field_in_an_acceptance_expect_is_refused(root):
    line, text = _check_line(root, ACCEPTANCE, r"expect: .*none: \{field: \w+,")
    inner = re.search(r"none: \{field: (\w+),", text)[1]
    edit_line(root, BOOK.table(ACCEPTANCE).file, line, f"none: {{field: {inner},", f"none: {{field: {inner[:-1]},")
    [p] = problems(root)
    assert (p.code, p.line) == ("unknown-field", line) and f"{inner}'?" in p.hint
    assert BOOK.table(ACCEPTANCE).tool in p.message


def test_an_expect_literal_outside_the_answers_enum_is_refused(root):
    line, text = _check_line(root, ACCEPTANCE, r"expect: \{field: primary, eq: \w+\}")
    code = re.search(r"eq: (\w+)\}", text)[1]
    edit_line(root, BOOK.table(ACCEPTANCE).file, line, f"eq: {code}}}", f"eq: {code}s}}")
    [p] = problems(root)
    assert (p.code, p.line) == ("literal-not-in-enum", line)


def test_an_output_the_answer_would_drop_is_refused_at_its_line(root):
    table = BOOK.table("support_reason")
    row = next(r for r in table.rows if r.outputs)
    key = next(k for k, _ in row.outputs)
    assert "evidence" not in table.output_keys
    lines = (root / table.file).read_text(encoding="utf-8").split("\n")
    at = next(n for n, text in enumerate(lines, 1) if text == f"  - id: {row.id}")
    out = next(n for n, text in enumerate(lines[at:], at + 1) if text.strip().startswith(f"{key}:"))
    indent = lines[out - 1][:len(lines[out - 1]) - len(lines[out - 1].lstrip())]
    lines.insert(out, f'{indent}evidence: "{{engine_names|join:、}}"')
    (root / table.file).write_text("\n".join(lines), encoding="utf-8")
    [p] = problems(root)
    assert (p.code, p.line) == ("unknown-output-key", out + 1)


def test_explain_keeps_every_output_a_row_renders():
    """Nothing a fired row renders is dropped on the way to the answer (the item's keys are the
    table's output_item, checked at load)."""
    table = BOOK.table("support_reason")
    seen = set()
    for path in sorted((ROOT / "tests" / "cases" / "support_reason").glob("*.json")):
        context = json.loads(path.read_text(encoding="utf-8"))
        answer = explain(context, BOOK)
        fired = table.evaluate(context).fired
        for f, item in zip(fired, answer["reasons"]):
            assert item["code"] == f.code and set(f.outputs) <= set(item), (path.stem, f.code)
            seen |= set(f.outputs)
    assert seen - {"detail"}, "the corpus exercises no output beside detail"
