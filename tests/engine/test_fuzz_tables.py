"""Whatever an analyst types, loading answers with problems (or a rulebook), never a traceback."""
from __future__ import annotations

import copy
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from budget import examples

from groundrules import RulesError, load_rulebook

ROOT = Path(__file__).resolve().parents[2]
BASE = yaml.safe_load((ROOT / "rules" / "support_reason.yaml").read_text(encoding="utf-8"))

scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=True) | st.text(max_size=12)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.sampled_from(["field", "eq", "ne", "gt", "in", "all", "any", "not", "count", "where", "exists",
                     "matches", "from", "pluck", "format", "bind", "id", "code", "when", "output",
                     "examples", "given", "fires", "detail", "{x}"]) | st.text(max_size=6),
    inner, max_size=4), max_leaves=15)

# where in a valid table to drop a random value
SPOTS = [("rows", 0, "when"), ("rows", 2, "when", "all", 0), ("rows", 0, "output", "detail"),
         ("bind", "gaps"), ("bind", "gaps", "where"), ("bind", "failed", "format"), ("priority",),
         ("outputs",), ("hit_policy",), ("default",), ("rows", 1), ("messages",), ("input",),
         ("output_enum",), ("rows", 0, "examples"), ("primary",), ("rows", 3, "code")]


def _load(tmp_path: Path, text: str) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        book = load_rulebook(ROOT, files=[path])
    except RulesError as exc:
        for p in exc.problems:
            assert p.file.endswith("t.yaml") and p.line >= 1 and p.column >= 1 and p.code
        return
    for table in book.tables.values():
        list(table.check_examples())


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(spot=st.sampled_from(SPOTS), value=values)
def test_mutated_tables_load_or_report(tmp_path, spot, value):
    data = copy.deepcopy(BASE)
    target = data
    for part in spot[:-1]:
        target = target[part]
    target[spot[-1]] = value
    _load(tmp_path, yaml.safe_dump(data, allow_unicode=True))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=200))
def test_arbitrary_text_loads_or_reports(tmp_path, text):
    _load(tmp_path, text)


def test_pathological_nesting_is_a_problem_not_a_crash(tmp_path):
    for depth in (60, 400, 3000):
        when = "{not: " * depth + "{field: a, eq: 1}" + "}" * depth
        _load(tmp_path, "kind: decision_table\nid: deep\nhit_policy: first\noutputs: {a: {}}\n"
                        f"rows:\n  - id: a\n    when: {when}\n    examples: [{{given: {{a: 1}}, fires: true}}]\n")
    _load(tmp_path, "[" * 5000)
