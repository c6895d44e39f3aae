"""Replay's way in: `Service.call_text` answers the JSON text of logged arguments without
encoding them again, and must give the envelope `Service.call` gives for the same arguments, byte
for byte, refusals included: under the rulebook that logged them and under a candidate whose
limits or schemas refuse them. The bounds it reads off the text (json_bounds) may say "not
proven", never "within" for a value that is beyond."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from budget import examples
from groundrules import Caller, Service, load_rulebook
from groundrules.core import canonical, json_bounds
from groundrules.decision_log.replay import STATELESS
from groundrules.core.rulebook import data_root

from corpus_traffic import traffic

AGENT = Caller("agent-a", "agent", ("p1",))
REVIEWER = Caller("rev-1", "reviewer", ("p1",))

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | \
    st.text(alphabet=st.sampled_from('ab{[]}"\\ 中'), max_size=6)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=30)


def answers(service: Service, tool: str, arguments, caller: Caller) -> tuple[str, str]:
    """(call's envelope text, call_text's envelope text) for the same arguments."""
    direct = canonical.json_text(service.call(tool, arguments, caller))
    _, text = service.call_text(tool, canonical.json_text(arguments), caller)
    return direct, text


def nested(depth: int, leaf) -> dict:
    value = leaf
    for _ in range(depth):
        value = [value]
    return {"context": value}


def test_the_corpus_answers_as_call_does(rulebook):
    service = Service(rulebook)
    calls = traffic()
    assert {tool for tool, _ in calls} == set(STATELESS)
    for tool, arguments in calls:
        for caller in (AGENT, REVIEWER):
            direct, text = answers(service, tool, arguments, caller)
            assert text == direct, tool


def candidate_with(tmp_path: Path, edit_roles=None, edit_schema=None):
    root = tmp_path / "candidate"
    for part in ("rules", "locks", "schemas"):
        shutil.copytree(Path(data_root()) / part, root / part)
    if edit_roles:
        path = root / "rules" / "roles.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        edit_roles(data)
        path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    if edit_schema:
        path = root / "schemas" / "tools" / edit_schema[0]
        doc = json.loads(path.read_text(encoding="utf-8"))
        edit_schema[1](doc)
        path.write_text(json.dumps(doc, ensure_ascii=False, indent=2), encoding="utf-8")
    return load_rulebook(root)


def test_a_candidate_with_a_lower_nesting_limit_refuses_as_call_does(tmp_path, rulebook):
    depth = rulebook.table("roles").limits["argument_depth"]
    candidate = candidate_with(tmp_path, edit_roles=lambda d: d["limits"].update(argument_depth=depth // 2))
    service = Service(candidate)
    for levels in (depth // 2 - 2, depth // 2 - 1, depth // 2, depth // 2 + 5, depth + 5):
        direct, text = answers(service, "explain_support", nested(levels, {"k": "v"}), AGENT)
        assert text == direct
    refused = json.loads(answers(service, "explain_support", nested(depth // 2 + 5, 1), AGENT)[1])
    assert refused["error"]["code"] == "INVALID_ARGUMENT" and "nested" in refused["error"]["message"]


def test_brackets_in_strings_and_long_texts_fall_back_to_the_walk(rulebook):
    service = Service(rulebook)
    depth = rulebook.table("roles").limits["argument_depth"]
    cases = [{"context": {"note": "[" * (depth * 2)}},                     # brackets the bound counts, no nesting
             {"context": [2 ** 14100]},                                    # an integer past MAX_INT_BITS
             {"context": [7 ** 4000, "x" * 5000]},                         # within, in a text too long to prove it
             {"message": {"id": "m1", "role": "user", "content": "手机 13812345678 " * 400}}]
    for arguments in cases:
        tool = "lock_message" if "message" in arguments else "explain_support"
        direct, text = answers(service, tool, arguments, AGENT)
        assert text == direct


def test_texts_the_strict_decoder_does_not_vouch_for_get_every_check(rulebook):
    service = Service(rulebook)
    for text in ('{"context": NaN}', '{"context": [1e999]}', '{"context": "\\ud800"}', '{"context": "\\uDC00x"}',
                 '{"context": "\\\\ud800"}'):
        expected = canonical.json_text(service.call("explain_support", json.loads(text), AGENT))
        assert service.call_text("explain_support", text, AGENT)[1] == expected
        with pytest.raises(ValueError):
            canonical.decoded(text)


def test_a_candidate_schema_that_refuses_the_arguments_refuses_them_in_call_text(tmp_path, rulebook):
    def shorter(doc):                                          # an analyst caps a message's length
        doc["$defs"]["input"]["properties"]["message"]["properties"] = {"content": {"maxLength": 5}}
    candidate = candidate_with(tmp_path, edit_schema=("lock_message.schema.json", shorter))
    service = Service(candidate)
    arguments = {"message": {"id": "m1", "role": "user", "content": "手机 13812345678"}}
    direct, text = answers(service, "lock_message", arguments, AGENT)
    assert text == direct and json.loads(text)["error"]["code"] == "INVALID_ARGUMENT"
    assert json.loads(canonical.json_text(Service(rulebook).call("lock_message", arguments, AGENT)))["ok"]


@settings(max_examples=examples(400), deadline=None)
@given(JSON, st.integers(1, 12), st.integers(1, 200))
def test_the_text_bound_never_vouches_for_a_value_beyond_the_limits(value, max_depth, max_int_bits):
    """What call_text proves on a logged text: the strict decoding gives back the value call saw,
    and the bound read off the text (json_bounds, as Service._check_arguments reads it) never says
    "within" for a value the walk finds beyond."""
    text = canonical.json_text(value)
    assert canonical.decoded(text) == value
    if json_bounds.within(text.encode("utf-8"), max_depth, json_bounds.digits_within(max_int_bits)):
        assert canonical.beyond_limits(value, max_depth, max_int_bits) is None
