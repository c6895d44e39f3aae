"""The span index the verifier uses to set matches inside negations aside answers exactly what the
pairwise test it replaced did, for any spans (overlapping, nested, touching, empty)."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from budget import examples
from groundrules.verification.spans import Spans

span = st.tuples(st.integers(0, 40), st.integers(0, 12)).map(lambda t: (t[0], t[0] + t[1]))


@settings(max_examples=examples(500), deadline=None)
@given(st.lists(span, max_size=12), st.lists(span, min_size=1, max_size=12))
def test_overlaps_is_the_pairwise_test(spans, queries):
    index = Spans(spans)
    for a, b in queries:
        assert index.overlaps(a, b) == any(a < e and s < b for s, e in spans)


def test_an_empty_index_overlaps_nothing():
    assert not Spans([]).overlaps(0, 10)
