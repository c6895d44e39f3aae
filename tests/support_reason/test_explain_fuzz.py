"""explain / contract_text on anything a host may pass: never raising, never touching the input.

Arbitrary JSON and mutated corpus contexts; every output must satisfy `$defs.support_reason`,
a context that breaks the contract must explain as `unknown`, and nothing returned may share a
mutable object with the context or with the compiled rulebook.
"""
from __future__ import annotations

import copy
import json
from collections import OrderedDict

from hypothesis import given, settings
from hypothesis import strategies as st
from budget import examples

import sr_cases
from groundrules import contract_text, explain, explain_with_trace
from groundrules.core.canonical import digest

CORPUS = sr_cases.corpus()
SCALARS = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6)
           | st.sampled_from(["ok", "error", "timeout", "partial", "sufficient", "conflicting", "candidate",
                              "recorded_unresolved", "conditional", "not_covered", "\n", "{x}", "题量"]))
KEYS = st.sampled_from(["slot", "label", "name", "status", "error", "reason", "id", "supports",
                        "quote_support", "candidate_count", "readable_count", "evidence_count"]) | st.text(max_size=4)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
                      max_leaves=12)
FIELDS = ["query", "support_status", "stage", "required_slots", "metrics", "missing", "evidence", "engines",
          "conflict_status", "conflicts", "incomparable", "provenance", "answer_policy", "support_reason"]
STEPS = st.lists(st.sampled_from([0, 1, "slot", "label", "status", "reason", "supports", "candidate_count",
                                  "readable_count", "name", "error", "quote_support"]), max_size=3)


def _mutated(base: dict, field: str, steps: list, value) -> dict:
    ctx = copy.deepcopy(base)
    target, path = ctx, [field, *steps]
    try:
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
    except (KeyError, IndexError, TypeError):
        pass
    return ctx


def _check(ctx, rulebook) -> dict:
    before = copy.deepcopy(ctx)
    reason = explain(ctx, rulebook)
    traced, trace = explain_with_trace(ctx, rulebook)
    text = contract_text(ctx, rulebook)
    assert repr(ctx) == repr(before)                                   # exact, floats and NaN included
    assert sr_cases.reason_validator(rulebook).is_valid(reason), reason
    assert traced == reason and isinstance(trace, list)
    valid = sr_cases.context_validator(rulebook).is_valid(ctx)
    assert (reason["primary"] == "unknown") >= (not valid)              # a broken context is never explained
    for item in reason["reasons"]:
        assert item["label"] in text and item["detail"] in text
    json.dumps([reason, trace], allow_nan=True)                         # plain JSON, no shared objects needed
    return reason


@settings(max_examples=examples(400), deadline=None)
@given(base=st.sampled_from(sorted(CORPUS)), field=st.sampled_from(FIELDS), steps=STEPS, value=VALUES)
def test_mutated_contexts_explain_without_raising_or_touching_them(rulebook, base, field, steps, value):
    _check(_mutated(CORPUS[base], field, steps, value), rulebook)


@settings(max_examples=examples(200), deadline=None)
@given(ctx=VALUES)
def test_any_json_value_explains(rulebook, ctx):
    _check(ctx, rulebook)


def test_outputs_share_nothing_with_the_context_or_the_rulebook(rulebook):
    """Editing a returned reason or trace edits neither the caller's context nor the table."""
    source_before = digest(rulebook.sources["support_reason"].data)
    for ctx in CORPUS.values():
        ctx = copy.deepcopy(ctx)
        before = copy.deepcopy(ctx)
        reason, trace = explain_with_trace(ctx, rulebook)
        _poison(reason)
        _poison(trace)
        assert ctx == before
    assert digest(rulebook.sources["support_reason"].data) == source_before


def _poison(value) -> None:
    if isinstance(value, dict):
        for v in list(value.values()):
            _poison(v)
        value["__poison__"] = 1
    elif isinstance(value, list):
        for v in list(value):
            _poison(v)
        value.append("__poison__")


def test_a_host_mapping_subclass_reads_as_the_json_it_stands_for(rulebook):
    """jsonschema accepts an OrderedDict as an object; the rules must then read it like a dict
    instead of finding no field at all and blaming the context."""
    for ctx in CORPUS.values():
        hosted = json.loads(json.dumps(ctx), object_pairs_hook=OrderedDict)
        assert explain(hosted, rulebook) == explain(ctx, rulebook)


def test_a_mapping_subclass_reads_the_same_when_jsonschema_checks_the_contract(rulebook, tmp_path):
    """A contract with a keyword outside the compiled check's subset is checked by jsonschema,
    which accepts an OrderedDict as an object: the rules must still read it as the JSON it is."""
    import shutil
    from pathlib import Path
    from groundrules import load_rulebook
    from groundrules.core.schema_check import contract
    root = Path(__file__).resolve().parents[2]
    for folder in ("rules", "locks", "schemas"):
        shutil.copytree(root / folder, tmp_path / folder)
    path = tmp_path / "schemas" / sr_cases.CONTRACT
    schema = json.loads(path.read_text("utf-8"))
    schema["properties"]["query"]["contentMediaType"] = "text/plain"      # an annotation jsonschema keeps
    path.write_text(json.dumps(schema, ensure_ascii=False, indent=2), encoding="utf-8")
    book = load_rulebook(tmp_path)
    assert contract(book.schemas, sr_cases.CONTRACT).fast is None
    for ctx in CORPUS.values():
        hosted = json.loads(json.dumps(ctx), object_pairs_hook=OrderedDict)
        assert explain(hosted, book) == explain(ctx, book) == explain(ctx, rulebook)
