"""Positions for every key path, and the YAML mistakes PyYAML would hide."""
from __future__ import annotations

import pytest

from groundrules.yamlsrc import YamlProblem, dotted, parse

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


def test_syntax_error_has_a_position():
    with pytest.raises(YamlProblem) as exc:
        parse("a: [1, 2\nb: 3\n", "t.yaml")
    assert exc.value.code == "yaml-syntax" and exc.value.line >= 2


def test_dotted_paths_read_like_the_table():
    assert dotted(("rows", 3, "when", "all", 0)) == "rows[3].when.all[0]"
