"""The bounds read off a JSON text's bytes (json_bounds) never vouch for a value the exact walk
refuses: drawn values with brackets, quotes, backslashes and digits inside strings, escaped lone
surrogates, long integers and huge exponents, written with and without ASCII escapes. And they do
vouch for plain values, or the fast path would never be taken."""
from __future__ import annotations

import json
import math

from hypothesis import given, settings, strategies as st

from budget import examples
from groundrules.core import json_bounds

TRICKY = st.text(alphabet=st.sampled_from(list('[]{}"\\0123456789eE+-:,x 中') + ["\ud800", "\udfff"]), max_size=12)
SCALARS = st.one_of(st.none(), st.booleans(), TRICKY, st.integers(-10 ** 130, 10 ** 130),
                    st.floats(allow_nan=False, allow_infinity=False), st.integers(0, 10 ** 12))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TRICKY, inner, max_size=4),
                      max_leaves=30)


def exact(value, depth: int, int_digits: int, level: int = 1) -> bool:
    """What the walk checks (stdio_guard._depth and the parser's integer hook)."""
    if isinstance(value, (dict, list)):
        if level > depth:
            return False
        items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
        return all((k is None or exact(k, depth, int_digits, level)) and exact(v, depth, int_digits, level + 1)
                   for k, v in items)
    if isinstance(value, str):
        return not any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int):
        return len(str(abs(value))) <= int_digits
    return math.isfinite(value)


@settings(max_examples=examples(3000), deadline=None)
@given(value=VALUES, ascii_escapes=st.booleans(), depth=st.integers(1, 5), int_digits=st.integers(1, 120))
def test_a_text_the_bounds_vouch_for_is_within_the_limits(value, ascii_escapes, depth, int_digits):
    text = json.dumps(value, ensure_ascii=ascii_escapes)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:          # a raw lone surrogate is no UTF-8: refused before any bound
        return
    decoded = json.loads(text)
    if json_bounds.within(data, depth, int_digits):
        assert exact(decoded, depth, int_digits), text


@settings(max_examples=examples(500), deadline=None)
@given(value=st.recursive(st.integers(-999, 999) | st.text(alphabet="ab 中", max_size=5),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("ab", max_size=3), inner,
                                                                                        max_size=3), max_leaves=20),
       depth=st.integers(1, 6))
def test_plain_values_are_vouched_for_exactly_when_they_are_within(value, depth):
    data = json.dumps(value, ensure_ascii=False).encode("utf-8")
    assert json_bounds.within(data, depth, 3) == exact(value, depth, 3)


def test_brackets_in_strings_cannot_hide_nesting():
    deep = json.dumps(["]", [[1]], "["])                  # 3 deep; the strings' brackets would say 2
    assert not json_bounds.within(deep.encode(), 2, 10)
    assert json_bounds.within(deep.encode(), 3, 10)


def test_a_number_that_may_read_as_infinity_is_not_vouched_for():
    assert not json_bounds.within(b'{"a":[1e309]}', 5, 10)
    assert json_bounds.within(b'{"a":[1e30]}', 5, 10)
