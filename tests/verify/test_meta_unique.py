"""Issue 19, item 1: a caller's inline schema is checked against the metaschema in linear time.
The metaschema's uniqueItems keywords (`required`, `type`, `dependentRequired`) were jsonschema's,
which compares unhashable items pairwise: a `required` of 5,000 objects (64 KB) took a minute before
the call was refused. The check now uses the one-pass uniqueness of the caller's own checks, and
refuses exactly what jsonschema refuses.

A subschema's `$schema` no longer escapes the bounds: jsonschema's `evolve` picked the stock
validator for it, whose patterns search unbounded. A `$schema` naming another dialect than the
one the checks read (2020-12) is refused."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, _utils

from budget import examples
from groundrules.core import uniqueness
from groundrules.verification import instances
from test_pattern_budget import BACKTRACKS, schema_with
from test_verify_robustness import INPUT, any_value_candidate
from verify_support import tool

STOCK = Draft202012Validator(Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")      # JSON Schema's simple types

SCALARS = st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from([1.0, 0.0, -1.5]) | st.sampled_from(
    ["a", "b", "", "1"])
# items of a uniqueItems array: scalars, and objects holding scalars or lists of them. Lists of
# lists are left out: jsonschema's sorted shortcut misses a duplicate among them ([[1], [true], [1]]
# is "unique" to it), which the one-pass check does not.
ITEMS = SCALARS | st.dictionaries(st.sampled_from(["k", "n"]), SCALARS | st.lists(SCALARS, max_size=2), max_size=2)
ARRAYS = st.lists(ITEMS | st.sampled_from(TYPES), max_size=8)


def first(errors) -> tuple | None:
    ordered = sorted(errors, key=lambda e: list(map(str, e.absolute_path)))
    return (tuple(ordered[0].absolute_path), instances.describe(ordered[0])) if ordered else None


def uniqueness_paths(errors) -> set:
    return {tuple(e.absolute_path) for e in errors if e.validator == "uniqueItems"}


@settings(max_examples=examples(600), deadline=None)
@given(keyword=st.sampled_from(["required", "type", "dependentRequired", "nested"]), array=ARRAYS)
def test_the_metaschema_check_refuses_what_jsonschema_refuses(keyword, array):
    schema: dict = {"type": "object", "properties": {"a": {"type": "string"}}}
    if keyword == "dependentRequired":
        schema[keyword] = {"a": array}
    elif keyword == "nested":
        schema["properties"]["a"] = {"type": "object", "required": array}
    else:
        schema[keyword] = array
    ours, theirs = list(instances._meta().iter_errors(schema)), list(STOCK.iter_errors(schema))
    assert bool(ours) == bool(theirs)
    assert uniqueness_paths(ours) == uniqueness_paths(theirs)
    assert first(ours) == first(theirs)


def test_a_repeated_name_is_refused_where_jsonschema_refuses_it():
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "a"]}
    assert instances.schema_problems(schema) == [(("required",), first(STOCK.iter_errors(schema))[1])]


def test_the_metaschema_check_takes_one_pass(monkeypatch):
    """A `required` of n distinct objects: a hashable key per item and per member (uniqueness.identity),
    never jsonschema's pairwise comparison (n²/2 calls of its `equal` before)."""
    keys, pairs = [0], [0]
    identity, equal = uniqueness.identity, _utils.equal

    def counted_identity(value):
        keys[0] += 1
        return identity(value)

    def counted_equal(one, two):
        pairs[0] += 1
        return equal(one, two)
    monkeypatch.setattr(uniqueness, "identity", counted_identity)
    monkeypatch.setattr(_utils, "equal", counted_equal)
    n = 2000
    problems = instances.schema_problems({"type": "object", "properties": {"a": {"type": "string"}},
                                          "required": [{"k": f"v{i}"} for i in range(n)]})
    assert problems == [(("required", 0), "expected string, got object")]
    assert pairs[0] < n
    assert n <= keys[0] <= 3 * n


def test_a_subschemas_dollar_schema_keeps_its_patterns_bounded(vbook):
    """`contains` is outside the compiled check, so jsonschema alone decides, descending into items
    whose `$schema` made jsonschema's evolve pick its stock validator (stdlib `re`, no budget)."""
    field = {"type": "array", "contains": {"type": "string"},
             "items": {"$schema": instances.DIALECT, "type": "string", "pattern": BACKTRACKS}}
    envelope = tool({"request": {"input": INPUT}, "schema": schema_with(field),
                     "candidate": any_value_candidate(["a" * 24 + "!"])}, vbook)
    assert envelope["ok"] is False and envelope["error"]["code"] == "PATTERN_TIMEOUT", envelope["error"]


def test_a_schema_of_another_dialect_is_refused(vbook):
    field = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"}
    envelope = tool({"request": {"input": INPUT}, "schema": schema_with(field),
                     "candidate": any_value_candidate("x")}, vbook)
    assert envelope["error"]["code"] == "INVALID_ARGUMENT"
    assert "properties.v.$schema" in envelope["error"]["message"]
    assert instances.schema_problems({"$schema": instances.DIALECT, **schema_with({"type": "string"})}) == []
