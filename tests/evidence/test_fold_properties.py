"""Properties: a fold is byte-identical for the same ledger, and never raises anything but a
GroundrulesError (with a catalogued code, never FOLD_INTERNAL) on arbitrary payloads."""
from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given, settings, strategies as st
from budget import examples

from groundrules import GroundrulesError, fold
from groundrules.core import canonical

from fold_support import GROUPS, group

CORPUS = [payload for name in GROUPS for payload in group(name).values()]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=6),
                    st.sampled_from(["E07", "m_31", "L-m40-phone", "demand_1", "set", "phone", "sent"]))
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(
        ["id", "type", "slot", "value", "scope", "evidence", "events", "lock", "records", "now",
         "interpretations", "dispositions", "content", "role", "state", "start", "end", "quote"]), inner, max_size=4)),
    max_leaves=12)

PATHS = st.lists(st.integers(0, 20), min_size=1, max_size=5)


def mutate(payload, path, value):
    """Replace one node, chosen by walking `path` through the payload, with `value`."""
    out = copy.deepcopy(payload)
    node = out
    for step in path[:-1]:
        children = list(node.items()) if isinstance(node, dict) else list(enumerate(node)) if isinstance(node, list) else []
        if not children:
            break
        key, child = children[step % len(children)]
        if not isinstance(child, (dict, list)) or not child:
            node[key] = value
            return out
        node = child
    if isinstance(node, dict) and node:
        node[sorted(node)[path[-1] % len(node)]] = value
    elif isinstance(node, list) and node:
        node[path[-1] % len(node)] = value
    return out


def folds_or_refuses(payload, book, codes):
    try:
        return fold(payload, book)
    except GroundrulesError as exc:
        assert exc.code in codes and exc.code != "FOLD_INTERNAL", exc
        json.dumps(exc.as_dict())
        return None


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(json_values)
def test_arbitrary_payloads_only_refuse(rulebook, payload):
    folds_or_refuses(payload, rulebook, set(rulebook.table("evidence_refusals").codes))


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(range(len(CORPUS))), PATHS, json_values)
def test_mutated_corpus_payloads_only_refuse(rulebook, case, path, value):
    folds_or_refuses(mutate(CORPUS[case], path, value), rulebook,
                     set(rulebook.table("evidence_refusals").codes))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(range(len(CORPUS))), PATHS, json_values)
def test_a_fold_of_the_same_ledger_is_byte_identical(rulebook, case, path, value):
    payload = mutate(CORPUS[case], path, value)
    first = folds_or_refuses(payload, rulebook, set(rulebook.table("evidence_refusals").codes))
    again = folds_or_refuses(json.loads(json.dumps(payload)), rulebook,
                             set(rulebook.table("evidence_refusals").codes))
    assert canonical.dumps(first) == canonical.dumps(again)


def test_fold_does_not_touch_its_input(rulebook):
    for payload in CORPUS:
        before = copy.deepcopy(payload)
        folds_or_refuses(payload, rulebook, set(rulebook.table("evidence_refusals").codes))
        assert payload == before


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(range(len(CORPUS))), PATHS, json_values)
def test_item_by_item_check_agrees_with_the_whole_contract(rulebook, case, path, value):
    from groundrules.evidence.contract import first_problem
    payload = mutate(CORPUS[case], path, value)
    whole = rulebook.schemas.validator(rulebook.schemas.get("evidence.v1.schema.json")).is_valid(payload)
    assert (first_problem(rulebook.schemas, rulebook.table("events").records, payload) is None) == whole


def _containers(value, out: dict) -> dict:
    """id -> object of every dict and list inside `value`."""
    if isinstance(value, (dict, list)):
        out[id(value)] = value
        for child in value.values() if isinstance(value, dict) else value:
            _containers(child, out)
    return out


def test_output_shares_no_object_with_its_input(rulebook):
    """A host that edits the fold's output (e.g. redacts it for display) must not edit its own payload."""
    for payload in CORPUS:
        inside = _containers(payload, {})
        out = folds_or_refuses(payload, rulebook, set(rulebook.table("evidence_refusals").codes))
        if out is not None:
            shared = [obj for key, obj in _containers(out, {}).items() if key in inside]
            assert shared == []


def test_what_json_cannot_carry_is_refused(rulebook):
    """NaN, ±inf and lone surrogates would make the output unprintable: the payload is refused instead."""
    base = group("seed_region")["read_as_correct"]
    for path, value in (((("records", 0, "content"), "A \udc00 地")),
                        (("interpretations", 0, "events", 0, "value"), float("inf")),
                        (("interpretations", 0, "events", 0, "value"), float("nan")),
                        (("records", 0, "subject"), "demand\udc00")):
        payload = copy.deepcopy(base)
        node = payload
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value
        try:
            fold(payload, rulebook)
        except GroundrulesError as exc:
            assert exc.code == "PAYLOAD_INVALID", exc
        else:
            raise AssertionError(f"{path} = {value!r} was folded")
