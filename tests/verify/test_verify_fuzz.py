"""verify never raises anything but GroundrulesError INVALID_ARGUMENT, whatever it is given, and
anything wrong with the candidate is a report, never an exception."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundrules import GroundrulesError
from groundrules.verification import verify
from verify_support import all_cases, load_verify_book

BOOK = load_verify_book()
PAYLOADS = list(all_cases().values())

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)
KEYS = ["input", "context", "fields", "intent", "extraction", "data", "evidence", "descriptionChecks",
        "fieldResults", "issues", "sources", "quote", "sourceId", "path", "verdict", "status", "mode",
        "intents", "requirements", "prohibitions", "id", "target", "code", "category", "type", "properties"]


def mutate(value, data, depth=0):
    """Replace, drop or add one thing somewhere inside a valid payload part."""
    if isinstance(value, dict) and value and depth < 6 and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value, key=str)))
        out = dict(value)
        choice = data.draw(st.integers(0, 3))
        if choice == 0:
            del out[key]
        elif choice == 1:
            out[data.draw(st.sampled_from(KEYS))] = data.draw(JSON)
        else:
            out[key] = mutate(value[key], data, depth + 1)
        return out
    if isinstance(value, list) and value and depth < 6 and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(value) - 1))
        out = list(value)
        out[i] = mutate(value[i], data, depth + 1)
        return out
    return data.draw(JSON)


def check(request, schema, candidate):
    try:
        report = verify(request, schema, candidate, BOOK)
    except GroundrulesError as exc:
        assert exc.code == "INVALID_ARGUMENT"
        return None
    assert report["ok"] is (report["error"] is None)
    for g in report["grounding"]:
        if g["start"] is not None:
            assert isinstance(g["quote"], str)
    return report


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_candidates_give_reports(data):
    payload = data.draw(st.sampled_from(PAYLOADS))
    schema = payload.get("schema", payload.get("instance"))
    candidate = mutate(payload["candidate"], data)
    check(payload["request"], schema, candidate)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_requests_and_schemas_are_refused_or_verified(data):
    payload = data.draw(st.sampled_from(PAYLOADS))
    schema = payload.get("schema", payload.get("instance"))
    if data.draw(st.booleans()):
        schema = mutate(schema, data)
    check(mutate(payload["request"], data), schema, payload["candidate"])


@settings(max_examples=100, deadline=None)
@given(JSON, JSON, JSON)
def test_arbitrary_values_never_crash(request, schema, candidate):
    check(request, schema, candidate)
