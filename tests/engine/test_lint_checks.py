"""The silent mistakes: each edit below loads (and used to lint clean), and lint must now name it
with its code at the line of the mistake. Every edit is made in a copy of the bundled tables, as
an analyst would make it."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from cli_inproc import run_cli
from groundrules import load_rulebook
from groundrules.lint import lint
from groundrules.lintchecks import operation_names
from groundrules.yamlparse import parse
from groundrules.yamlsrc import YamlProblem

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def root(tmp_path) -> Path:
    out = tmp_path / "root"
    for d in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / d, out / d)
    return out


def edit(root: Path, file: str, old: str, new: str, count: int = 1) -> int:
    """Replace `old` by `new` in one table (exactly `count` times); the 1-based line of the first."""
    path = root / file
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == count, f"{old!r} occurs {text.count(old)} times in {file}"
    line = text[:text.index(old)].count("\n") + 1
    path.write_text(text.replace(old, new), encoding="utf-8")
    return line


def found(root: Path, code: str) -> list[tuple[str, int, str]]:
    report = lint(root)
    return [(p.file, p.line, p.severity) for p in report.problems if p.code == code]


def test_the_bundled_tables_lint_clean():
    assert [str(p) for p in lint(ROOT).problems] == []


def test_a_regex_that_backtracks_without_bound(root):
    line = edit(root, "locks/qq.yaml", "[0-9０-９]{4,}(?![0-9０-９])'", "(1|11)+$'")
    assert found(root, "regex-backtracking") == [("locks/qq.yaml", line, "error")]


def test_a_regex_in_a_condition_is_probed_too(root):
    line = edit(root, "rules/support_reason.yaml", "    when: {field: metrics.candidate_count, eq: 0}",
                "    when: {field: query, matches: '(a+)+$'}")
    assert found(root, "regex-backtracking") == [("rules/support_reason.yaml", line, "error")]


def test_a_typo_in_a_transitions_via(root):
    line = edit(root, "rules/finding_states.yaml", "via: [supersede_finding, revalidate_finding]",
                "via: [supersede_finding, revalidate_findng]")
    assert found(root, "unknown-operation") == [("rules/finding_states.yaml", line, "error")]
    [problem] = [p for p in lint(root).problems if p.code == "unknown-operation"]
    assert problem.hint == "did you mean 'revalidate_finding'?"


def test_operation_names_are_the_tool_registrys_tools():
    tools = {p.name[:-len(".schema.json")] for p in (ROOT / "schemas" / "tools").glob("*.schema.json")}
    assert operation_names(load_rulebook(ROOT)) == tools and "set_finding_state" in tools


def test_a_lock_kind_no_slot_consumes(root):
    line = edit(root, "locks/qq.yaml", "    kind: qq\n", "    kind: qq_number\n")
    assert found(root, "unconsumed-lock-kind") == [("locks/qq.yaml", line, "error")]


def test_a_row_that_repeats_an_earlier_one_under_first(root):
    text = (root / "rules" / "applicability.yaml").read_text(encoding="utf-8")
    first_row = text[text.index("  - id: incompatible"):text.index("  - id: needs_revalidation")]
    copy = first_row.replace("id: incompatible", "id: incompatible_again\n    code: incompatible", 1)
    edited = text.replace(first_row, first_row + copy)
    (root / "rules" / "applicability.yaml").write_text(edited, encoding="utf-8")
    when = edited.index("    when:", edited.index("id: incompatible_again"))
    assert found(root, "shadowed-row") == [("rules/applicability.yaml", edited[:when].count("\n") + 1, "error")]


def test_a_narrower_row_after_a_broader_one_under_first(root):
    line = edit(root, "rules/applicability.yaml", "    when: {field: match.differ, gt: 0}\n",
                "    when: {field: match.differ, gt: 0}\n", 1)
    # the row after it requires match.differ > 0 too, so `incompatible` always wins
    text = (root / "rules" / "applicability.yaml").read_text(encoding="utf-8")
    start = text.index("  - id: needs_revalidation")
    when = text.index("    when:", start)
    end = text.index("\n", when)
    (root / "rules" / "applicability.yaml").write_text(
        text[:when] + "    when: {all: [{field: match.differ, gt: 0}, {field: match.missing, eq: 0}]}" + text[end:],
        encoding="utf-8")
    assert found(root, "shadowed-row") == [("rules/applicability.yaml", text[:when].count("\n") + 1, "error")]
    assert line < text[:when].count("\n") + 1


def test_a_row_with_only_positive_examples_is_a_warning(root):
    text = (root / "rules" / "applicability.yaml").read_text(encoding="utf-8")
    negative = ("      - given: {match: {declared: 1, compared: 1, equal: 1, differ: 0, missing: 0}}\n"
                "        fires: false\n")
    assert negative in text
    (root / "rules" / "applicability.yaml").write_text(text.replace(negative, "", 1), encoding="utf-8")
    row_line = text[:text.index("  - id: incompatible")].count("\n") + 1
    assert found(root, "missing-negative-example") == [("rules/applicability.yaml", row_line, "warning")]


def test_a_failing_lock_example_fails_lint_too(root):
    old = 'start: 1, end: 12, normalized_value: "12345678"'
    text = (root / "locks" / "qq.yaml").read_text(encoding="utf-8")
    example = text.rfind("locks:", 0, text.index(old))              # the locks the example expects
    edit(root, "locks/qq.yaml", old, old.replace("12345678", "12345679"))
    assert found(root, "failing-example") == [("locks/qq.yaml", text[:example].count("\n") + 1, "error")]


def test_a_number_written_as_a_string_with_an_ordering_operator(root):
    line = edit(root, "rules/applicability.yaml", "{field: match.differ, gt: 0}", "{field: match.differ, gt: '0'}")
    report = lint(root)
    # the contract types match.differ as an integer, so this no longer even loads
    assert [(p.code, p.line) for p in report.problems] == [("literal-type-mismatch", line)]


def test_a_number_written_as_a_string_on_an_untyped_field(root):
    line = edit(root, "rules/support_reason.yaml", "    when: {field: metrics.candidate_count, eq: 0}",
                "    when: {field: stage, ge: '10'}")
    assert found(root, "number-as-string") == [("rules/support_reason.yaml", line, "error")]


def test_yaml_1_1_booleans_as_values(root):
    line = edit(root, "locks/qq.yaml", "    kind: qq\n", "    kind: qq\n    prefilter: [QQ, qq, 扣扣, on]\n")
    assert found(root, "yaml-boolean") == []          # a prefilter of true does not load
    edit(root, "locks/qq.yaml", "    prefilter: [QQ, qq, 扣扣, on]\n", "")
    line = edit(root, "rules/support_reason.yaml", "- {field: conflicts, empty: false}",
                "- {field: conflicts, empty: no}")
    assert found(root, "yaml-boolean") == [("rules/support_reason.yaml", line, "error")]


@pytest.mark.parametrize("text, line, column, words", [
    ("a:\n\tb: 1\n", 2, 1, "tab"),
    ("a: b: c\n", 1, 5, "second ': '"),
    ("rows:\n  - {id: a, when: {field: x, eq: 1}\n  - id: b\n", 2, 5, "'{' opened here is not closed"),
    ("x: 1\nrows: [a, b\n\n", 2, 7, "'[' opened here is not closed"),
    ("a: 'abc\nb: 2\n", 1, 4, "quote opened here"),
    ('a: "\\d+"\n', 1, 6, "single quotes"),
    ("a: 1\nb\nc: 2\n", 2, 1, "not 'key: value'"),
    ("a: *x\n", 1, 4, "names no anchor"),
])
def test_yaml_syntax_errors_in_plain_words_at_the_line_at_fault(text, line, column, words):
    with pytest.raises(YamlProblem) as exc:
        parse(text, "t.yaml")
    assert (exc.value.code, exc.value.line, exc.value.column) == ("yaml-syntax", line, column)
    assert words in exc.value.message


def test_the_lint_command_prints_each_silent_mistake_at_its_line(root):
    line = edit(root, "rules/finding_states.yaml", "via: [supersede_finding, revalidate_finding]",
                "via: [supersede_finding, revalidate_findng]")
    run = run_cli("--rules", root, "lint")
    out = run.stdout.decode("utf-8")
    assert run.returncode == 1 and "Traceback" not in out + run.stderr.decode("utf-8")
    assert re.search(rf"^rules/finding_states\.yaml:{line}:\d+: unknown-operation: ", out, re.MULTILINE), out
