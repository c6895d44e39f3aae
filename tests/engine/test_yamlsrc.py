"""Positions for every key path, and the YAML mistakes PyYAML would hide."""
from __future__ import annotations

import pytest

from groundrules.core.yamlparse import parse
from groundrules.core.yamlsrc import YamlProblem, dotted

TEXT = """kind: decision_table
rows:
  - id: a
    when: {field: x, eq: 1}
  - id: b
    when:
      all:
        - {field: y, eq: 2}
"""


def test_positions_are_one_based_line_and_column():
    src = parse(TEXT, "t.yaml")
    assert src.where(("kind",)) == (1, 1)
    assert src.where(("rows", 1, "id")) == (5, 5)
    assert src.where(("rows", 1, "when", "all", 0, "field")) == (8, 12)


def test_missing_key_points_at_its_parent():
    src = parse(TEXT, "t.yaml")
    assert src.where(("rows", 0, "when", "nope")) == src.where(("rows", 0, "when"))


def test_duplicate_key_is_refused():
    with pytest.raises(YamlProblem) as exc:
        parse("a: 1\nb: 2\na: 3\n", "t.yaml")
    assert (exc.value.code, exc.value.line, exc.value.column) == ("duplicate-key", 3, 1)


def test_syntax_error_has_a_position_at_the_mistake():
    with pytest.raises(YamlProblem) as exc:
        parse("a: [1, 2\nb: 3\n", "t.yaml")
    assert (exc.value.code, exc.value.line, exc.value.column) == ("yaml-syntax", 1, 4)   # the '[' never closed


def test_unquoted_yaml_1_1_booleans_are_noted_with_their_path():
    src = parse("a: yes\nb: 'no'\nc: true\nd: [on, Off, False]\n", "t.yaml")
    assert src.data == {"a": True, "b": "no", "c": True, "d": [True, False, False]}
    assert src.yaml11_booleans == ((("a",), "yes"), (("d", 0), "on"), (("d", 1), "Off"))


def test_dotted_paths_read_like_the_table():
    assert dotted(("rows", 3, "when", "all", 0)) == "rows[3].when.all[0]"


@pytest.mark.parametrize("text, code, line, column", [
    ("a: 1\nb: " + "9" * 5000 + "\n", "bad-value", 2, 4),          # int() refuses 4300+ digits
    ("a:\n  - 2024-11-05\n", "bad-value", 2, 5),                      # a YAML date is no JSON value
    ("a: .nan\n", "bad-value", 1, 4),                                 # nor is NaN (it breaks the hash)
    ("a: !!binary aGVsbG8=\n", "bad-value", 1, 4),
    ("a:\n  404: x\n", "bad-key", 2, 3),                              # keys are strings: quote it
    ("a: {on: 1}\n", "bad-key", 1, 5),                                # YAML 1.1 reads `on` as true
])
def test_values_json_cannot_hold_are_located_problems(text, code, line, column):
    with pytest.raises(YamlProblem) as exc:
        parse(text, "t.yaml")
    assert (exc.value.code, exc.value.line, exc.value.column) == (code, line, column)


def test_aliases_that_expand_without_bound_are_refused():
    bomb = "l0: &l0 [lol]\n" + "".join(
        f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]\n" for i in range(1, 10))
    with pytest.raises(YamlProblem) as exc:
        parse(bomb, "t.yaml")
    assert exc.value.code == "too-large"


def test_a_few_aliases_still_read():
    src = parse("a: &x {k: 1}\nb: *x\nc:\n  <<: *x\n  m: 2\n", "t.yaml")
    assert src.data == {"a": {"k": 1}, "b": {"k": 1}, "c": {"k": 1, "m": 2}}
