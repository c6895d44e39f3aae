"""A transport's arguments (decoded from JSON, `Service.call(..., decoded=True)`) have their nesting
and integers read off their JSON text instead of walked: the answer must be the walk's, byte for
byte, for arguments within the role table's limits and past them (too deep, an integer too long,
brackets and digits inside strings)."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from budget import examples
from groundrules.core import canonical
from groundrules.api import Caller, Service

CALLER = Caller("agent-1", "agent", ("alpha",))
STRINGS = st.text(alphabet=st.sampled_from(list('[]{}"\\0123456789e-:,a 中')), max_size=8)
LEAVES = st.one_of(st.none(), st.booleans(), STRINGS, st.integers(-10 ** 40, 10 ** 40), st.floats(allow_nan=False,
                                                                                                   allow_infinity=False))
VALUES = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(STRINGS, inner, max_size=3),
                      max_leaves=12)


@pytest.fixture(scope="module")
def service(rulebook):
    return Service(rulebook)


def nested(depth: int, leaf) -> object:
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def both(service: Service, tool: str, arguments: dict) -> tuple[str, str]:
    decoded = json.loads(json.dumps(arguments, ensure_ascii=False))
    return (canonical.json_text(service.call(tool, decoded, CALLER, decoded=True)),
            canonical.json_text(service.call(tool, decoded, CALLER)))


@settings(max_examples=examples(400), deadline=None)
@given(value=VALUES, tool=st.sampled_from(["lock_message", "query_findings", "verify_extraction"]))
def test_drawn_arguments_get_the_walks_answer(service, value, tool):
    fast, walked = both(service, tool, {"message": value, "keyword": value, "request": value, "x": value})
    assert fast == walked


def test_arguments_past_the_limits_get_the_walks_refusal_with_its_place(service, rulebook):
    depth = rulebook.table("roles").limits["argument_depth"]
    digits = len(str(2 ** canonical.MAX_INT_BITS))
    for arguments in ({"message": nested(depth + 1, 1)}, {"message": nested(depth - 1, 1)},
                      {"message": {"id": "m", "role": "user", "content": "x", "n": 10 ** digits}},
                      {"message": {"id": "m", "role": "user", "content": "[" * (depth + 5)}}):
        fast, walked = both(service, "lock_message", arguments)
        assert fast == walked
    assert json.loads(both(service, "lock_message", {"message": nested(depth + 1, 1)})[0])["error"]["code"] == \
        "INVALID_ARGUMENT"
