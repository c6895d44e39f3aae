"""The fast contract check must agree with jsonschema, which stays the authority."""
from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from budget import examples

from groundrules.core.schema_check import bundle, compile_check
from groundrules.core.tables import load_schemas

ROOT = Path(__file__).resolve().parents[2]
NAME = "knowledge-gateway.v1.schema.json"

VALID = {
    "query": "2024 重庆 申论 题量", "support_status": "partial", "stage": "evidence",
    "required_slots": [{"slot": "numeric", "label": "题量"}],
    "metrics": {"candidate_count": 3, "readable_count": 2, "evidence_count": 2},
    "missing": [{"slot": "numeric", "label": "题量", "reason": "not_covered"}],
    "evidence": [{"id": "ev1", "supports": [{"slot": "duration", "quote_support": "direct"}]}],
    "engines": [{"name": "wiki_recall", "status": "error", "error": "x"}],
    "conflict_status": "none", "conflicts": [], "incomparable": [],
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "partial", "error", "ok", "recorded_unresolved", "conditional", "x"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["slot", "reason", "status", "name", "id", "supports", "quote_support",
                         "candidate_count", "label", "extra"]), inner, max_size=4),
    max_leaves=12)

PATHS = [("support_status",), ("metrics",), ("metrics", "candidate_count"), ("missing",),
         ("missing", 0), ("missing", 0, "reason"), ("evidence", 0, "supports"),
         ("evidence", 0, "supports", 0, "quote_support"), ("engines", 0, "status"), ("conflicts",),
         ("required_slots", 0), ("query",), ("support_reason",)]


def _schema():
    return json.loads((ROOT / "schemas" / NAME).read_text(encoding="utf-8"))


SCHEMAS = load_schemas(ROOT)
CHECK = compile_check(SCHEMAS.get(NAME))


def _jsonschema_valid(value):
    return SCHEMAS.validator(SCHEMAS.get(NAME)).is_valid(value)


def test_the_contract_is_inside_the_fast_subset():
    assert compile_check(_schema()) is not None


@settings(max_examples=examples(400), deadline=None)
@given(path=st.sampled_from(PATHS), value=json_values, drop=st.booleans())
def test_agrees_with_jsonschema_on_mutated_contexts(path, value, drop):
    ctx = copy.deepcopy(VALID)
    target = ctx
    try:
        for part in path[:-1]:
            target = target[part]
        if drop and isinstance(target, dict):
            target.pop(path[-1], None)
        else:
            target[path[-1]] = value
    except (KeyError, IndexError, TypeError):
        pass
    assert CHECK(ctx) is _jsonschema_valid(ctx)


@settings(max_examples=examples(200), deadline=None)
@given(value=json_values)
def test_agrees_with_jsonschema_on_arbitrary_values(value):
    assert CHECK(value) is _jsonschema_valid(value)


def test_schemas_outside_the_subset_are_left_to_jsonschema():
    assert compile_check({"type": "object", "patternProperties": {"^a": {}}}) is None
    assert compile_check({"$ref": "other.json#/x"}) is None


def test_every_contract_in_the_subset_agrees_on_its_examples():
    for name, schema in sorted(SCHEMAS.by_name.items()):
        check = compile_check(schema)
        if check is None:
            continue
        for example in schema.get("examples", []):
            assert check(example) is SCHEMAS.validator(schema).is_valid(example), name


def test_integer_accepts_whole_floats_like_jsonschema():
    check = compile_check({"type": "integer"})
    assert check(3) and check(3.0) and not check(3.5) and not check(True)


def _corpus_values():
    """Every JSON value found in the case corpus, as realistic seeds for mutation."""
    out = []
    for path in sorted((ROOT / "tests" / "cases").rglob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        out.append(doc)
        if isinstance(doc, dict):
            out += [v for v in doc.values() if isinstance(v, (dict, list))]
    return out


CORPUS = _corpus_values()
CONTRACT_DEFS = [(name, d) for name, schema in sorted(SCHEMAS.by_name.items()) if not name.startswith("kinds/")
                 for d in sorted(schema.get("$defs", {}))]


def _def_schema(name: str, definition: str) -> dict:
    """The definition as the contract checker sees it: bundled with every definition it reaches,
    in its own file or another (the tool schemas refer into the part contracts)."""
    return bundle(SCHEMAS, f"{name}#/$defs/{definition}")


def _mutate(value, data):
    """Drop, replace or retype one nested member of `value`, chosen by hypothesis."""
    value = copy.deepcopy(value)
    target = value
    for _ in range(data.draw(st.integers(0, 4))):
        children = list(target.items()) if isinstance(target, dict) else list(enumerate(target)) \
            if isinstance(target, list) else []
        children = [c for c in children if isinstance(c[1], (dict, list))]
        if not children:
            break
        target = data.draw(st.sampled_from(children))[1]
    if isinstance(target, dict) and target:
        key = data.draw(st.sampled_from(sorted(target, key=str)))
        if data.draw(st.booleans()):
            del target[key]
        else:
            target[key] = data.draw(json_values)
    elif isinstance(target, list) and target:
        target[data.draw(st.integers(0, len(target) - 1))] = data.draw(json_values)
    return value


@settings(max_examples=examples(300), deadline=None)
@given(data=st.data())
def test_every_contract_definition_agrees_with_jsonschema_on_mutated_corpus_values(data):
    name, definition = data.draw(st.sampled_from(CONTRACT_DEFS))
    schema = _def_schema(name, definition)
    check = compile_check(schema)
    assert check is not None, f"{name}#{definition} left the fast subset"
    value = _mutate(data.draw(st.sampled_from(CORPUS)), data)
    assert check(value) is SCHEMAS.validator(schema).is_valid(value), (name, definition)


def test_a_ref_loop_without_descent_is_left_to_jsonschema():
    loop = {"$defs": {"a": {"allOf": [{"$ref": "#/$defs/b"}]}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}
    assert compile_check(loop) is None
    assert compile_check({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}) is None


def test_a_recursive_schema_that_descends_is_compiled():
    tree = {"$defs": {"node": {"type": "object", "properties": {
        "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}, "$ref": "#/$defs/node"}
    check = compile_check(tree)
    assert check({"kids": [{"kids": []}, {"kids": [{}]}]}) is True
    assert check({"kids": [{"kids": [1]}]}) is False


def test_format_is_an_annotation_as_for_jsonschema_without_a_format_checker():
    """A contract field an analyst declares with `format: date` keeps the contract compiled, and
    the compiled check agrees with jsonschema (which asserts no format unless asked to)."""
    import jsonschema
    schema = {"type": "object", "properties": {"page_date": {"type": "string", "format": "date"}}}
    check = compile_check(schema)
    assert check is not None
    for value in ({"page_date": "2024-05-01"}, {"page_date": "not a date"}, {"page_date": 3}):
        assert check(value) == jsonschema.Draft202012Validator(schema).is_valid(value), value
