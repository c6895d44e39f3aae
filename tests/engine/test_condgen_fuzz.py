"""The generated condition code against the reference semantics of conditions.OPERATORS.

condgen writes Python source from table content; these properties check that no field name or
literal (quotes, newlines, unicode, huge or non-finite numbers) changes what the source means,
by comparing every compiled test with a direct interpreter built on OPERATORS.
"""
from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from budget import examples

from groundrules import default_rulebook
from groundrules.core.conditions import MISSING, OPERATORS, compile_condition, path_parts

BUDGET_S = default_rulebook().table("limits").table_budget_ms / 1000   # the tables' own patterns' budget

KEYS = st.sampled_from(["a", "b", "0", "1", "x'y", 'q"', "n\nl", "é", "题量", "\\", "__class__",
                        "1e400", "１", "²"])
SCALARS = (st.none() | st.booleans() | st.integers(-3, 3) | st.integers() | st.floats()
           | st.sampled_from([0.0, -0.0, 1.0, 10 ** 30, float("inf"), float("nan")])
           | st.text(max_size=4) | st.sampled_from(["a", "'", '"', "\n", "}", "{x}", "é"]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(KEYS, inner, max_size=3), max_leaves=10)
FIELDS = st.lists(KEYS, min_size=1, max_size=3).map(".".join) | st.just(".")


def _reference(cond: dict, value):
    """A direct interpreter: combinators here, every leaf test through OPERATORS."""
    if "field" not in cond:
        (op, arg), = cond.items()
        if op == "not":
            return not _reference(arg, value)
        results = (_reference(c, value) for c in arg)
        return all(results) if op == "all" else any(results)
    read = _read(value, cond["field"])
    (op, arg), = ((k, v) for k, v in cond.items() if k != "field")
    if op in ("any", "all", "none"):
        if read.__class__ is not list:
            return False
        hits = [_reference(arg, item) for item in read]
        return {"any": any(hits), "all": all(hits), "none": not any(hits)}[op]
    if op == "count":
        if read.__class__ is not list:
            return False
        where = arg.get("where")
        n = sum(1 for item in read if where is None or _reference(where, item))
        (cmp, k), = ((c, v) for c, v in arg.items() if c != "where")
        return OPERATORS[cmp][1](n, k)
    if isinstance(arg, dict):
        other = _read(value, arg["field"])
        return read is not MISSING and other is not MISSING and OPERATORS[op][1](read, other)
    if op == "matches":
        return OPERATORS[op][1](read, regex.compile(arg), BUDGET_S)
    return OPERATORS[op][1](read, arg)


def _read(value, field: str):
    for part in path_parts(field):
        if isinstance(part, int):
            value = value[part] if value.__class__ is list and len(value) > part else MISSING
        else:
            value = value.get(part, MISSING) if value.__class__ is dict else MISSING
    return value


def _leaf(field, op, arg):
    return {"field": field, op: arg}


LEAVES = st.one_of(
    st.builds(_leaf, FIELDS, st.sampled_from(["eq", "ne"]), SCALARS),
    st.builds(_leaf, FIELDS, st.sampled_from(["lt", "le", "gt", "ge"]),
              st.integers() | st.floats() | st.text(max_size=3)),
    st.builds(_leaf, FIELDS, st.sampled_from(["eq", "ne", "lt", "ge"]), FIELDS.map(lambda f: {"field": f})),
    st.builds(_leaf, FIELDS, st.sampled_from(["in", "not_in"]), st.lists(SCALARS, min_size=1, max_size=3)),
    st.builds(_leaf, FIELDS, st.sampled_from(["exists", "empty"]), st.booleans()),
    st.builds(_leaf, FIELDS, st.just("matches"), st.sampled_from(["^a", "é$", "'", '"\n', "\\d", "\\\\"])),
)


def _extend(inner):
    return st.one_of(
        st.lists(inner, min_size=1, max_size=3).map(lambda cs: {"all": cs}),
        st.lists(inner, min_size=1, max_size=3).map(lambda cs: {"any": cs}),
        inner.map(lambda c: {"not": c}),
        st.builds(_leaf, FIELDS, st.sampled_from(["any", "all", "none"]), inner),
        st.builds(lambda f, w, cmp, n: _leaf(f, "count", {cmp: n} if w is None else {"where": w, cmp: n}),
                  FIELDS, st.none() | inner, st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]),
                  st.integers(-1, 3) | st.integers() | st.sampled_from([float("inf"), float("nan"), 1.5])),
    )


CONDITIONS = st.recursive(LEAVES, _extend, max_leaves=6)


@settings(max_examples=examples(1500), deadline=None)
@given(cond=CONDITIONS, values=st.lists(VALUES, min_size=1, max_size=4))
def test_generated_code_agrees_with_the_reference(cond, values):
    faults = []
    compiled = compile_condition(cond, ("when",), faults, budget_s=BUDGET_S)
    assert faults == [], faults
    for value in values:
        assert compiled.test(value) is _reference(cond, value), (cond, value)


@settings(max_examples=examples(300), deadline=None)
@given(field=FIELDS, arg=SCALARS, value=VALUES)
def test_literals_and_field_names_cannot_escape_the_source(field, arg, value):
    """Quotes, newlines and backslashes in a name or literal stay data: the test still compiles
    to exactly the reference verdict (an injection would change it, or fail to compile)."""
    for op in ("eq", "ne"):
        faults = []
        compiled = compile_condition({"field": field, op: arg}, (), faults, budget_s=BUDGET_S)
        assert faults == [] and compiled.test(value) is _reference({"field": field, op: arg}, value)


def test_only_ascii_digits_index_lists():
    """'１' (fullwidth) and '²' are keys, not list indices: a table reading engines.１ must not
    read engines[1], and '²' (which str.isdigit accepts but int() refuses) must not crash."""
    assert path_parts("a.１.².1") == ("a", "１", "²", 1)
    assert path_parts("a." + "9" * 5000)[1] > 10 ** 9          # an index no list has, never a crash


def test_non_finite_and_huge_literals_keep_their_meaning():
    for arg, value, expected in [(float("inf"), 10 ** 400, True), (10 ** 400, 10 ** 400, True),
                                 (float("nan"), float("nan"), False)]:
        faults = []
        cond = compile_condition({"field": "a", "le": arg}, (), faults, budget_s=BUDGET_S)
        assert cond.test({"a": value}) is expected
