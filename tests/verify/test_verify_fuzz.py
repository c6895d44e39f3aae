"""verify never raises anything but GroundrulesError INVALID_ARGUMENT, whatever it is given, and
anything wrong with the candidate is a report, never an exception."""
from __future__ import annotations

import copy
import functools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from budget import examples

from groundrules import GroundrulesError
from groundrules.core import canonical
from groundrules.verification import verify
from verify_support import all_cases, load_verify_book

book = functools.cache(load_verify_book)      # at the first check, not at collection on every worker
PAYLOADS = list(all_cases().values())

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)


def nested(depth: int) -> object:
    value: object = "x"
    for i in range(depth):
        value = {"a": value} if i % 2 else [value]
    return value


# what a host (not a JSON parser) can hand over: NaN, infinities, tuples, sets, bytes, non-string
# keys, and values nested far deeper than any real extraction
NOT_JSON = (st.floats(allow_nan=True, allow_infinity=True).filter(lambda f: f != f or abs(f) == float("inf"))
            | st.tuples(SCALARS) | st.frozensets(st.integers(), max_size=2) | st.binary(max_size=3)
            | st.dictionaries(st.integers(), SCALARS, min_size=1, max_size=2)
            | st.integers(60, 3000).map(nested))
VALUES = st.one_of(JSON, NOT_JSON)
KEYS = ["input", "context", "fields", "intent", "extraction", "data", "evidence", "descriptionChecks",
        "fieldResults", "issues", "sources", "quote", "sourceId", "path", "verdict", "status", "mode",
        "intents", "requirements", "prohibitions", "conditions", "id", "target", "code", "category", "type", "properties"]


def mutate(value, data, depth=0):
    """Replace, drop or add one thing somewhere inside a valid payload part (lists, even empty
    ones, may grow an element: statements and conditions accept any value there)."""
    if isinstance(value, dict) and value and depth < 6 and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value, key=str)))
        out = dict(value)
        choice = data.draw(st.integers(0, 3))
        if choice == 0:
            del out[key]
        elif choice == 1:
            out[data.draw(st.sampled_from(KEYS))] = data.draw(VALUES)
        else:
            out[key] = mutate(value[key], data, depth + 1)
        return out
    if isinstance(value, list) and depth < 6 and data.draw(st.booleans()):
        out = list(value)
        if not value or data.draw(st.booleans()):
            out.append(data.draw(VALUES))
            return out
        i = data.draw(st.integers(0, len(value) - 1))
        out[i] = mutate(value[i], data, depth + 1)
        return out
    return data.draw(VALUES)


def check(request, schema, candidate):
    try:
        report = verify(request, schema, candidate, book())
    except GroundrulesError as exc:
        assert exc.code == "INVALID_ARGUMENT"
        return None
    assert report["ok"] is (report["error"] is None)
    canonical.dumps(report)            # whatever came in, the report can cross a process boundary
    sources = {"input": request["input"]}
    sources.update({f"context/{i}": m["content"] for i, m in enumerate(request.get("context") or ())})
    for g in report["grounding"]:
        text = sources.get(g["sourceId"])
        if g["start"] is not None:
            assert text[g["start"]:g["end"]] == g["quote"]
        else:
            assert text is None or g["quote"] == "" or g["quote"] not in text
    return report


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_candidates_give_reports(data):
    payload = data.draw(st.sampled_from(PAYLOADS))
    schema = payload.get("schema", payload.get("instance"))
    candidate = mutate(payload["candidate"], data)
    check(payload["request"], schema, candidate)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_requests_and_schemas_are_refused_or_verified(data):
    payload = data.draw(st.sampled_from(PAYLOADS))
    schema = payload.get("schema", payload.get("instance"))
    if data.draw(st.booleans()):
        schema = mutate(schema, data)
    check(mutate(payload["request"], data), schema, payload["candidate"])


@settings(max_examples=examples(100), deadline=None)
@given(VALUES, VALUES, VALUES)
def test_arbitrary_values_never_crash(request, schema, candidate):
    check(request, schema, candidate)


OPEN_PLACES = ("requirements", "prohibitions", "conditions")


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_places_the_contract_leaves_open_take_any_value(data):
    """Statements and conditions may hold any object, so whatever a host puts there must come
    back as a report that serialises, never as an exception."""
    payload = data.draw(st.sampled_from([p for p in PAYLOADS if isinstance(p.get("candidate"), dict)
                                         and isinstance(p["candidate"].get("intent"), dict)]))
    candidate = copy.deepcopy(payload["candidate"])
    value = data.draw(VALUES)
    place = data.draw(st.sampled_from(OPEN_PLACES))
    if place == "conditions" and candidate["intent"].get("intents"):
        candidate["intent"]["intents"][0]["conditions"] = [value]
    elif isinstance(candidate["intent"].get(place), list):
        candidate["intent"][place].append({"v": value})
    check(payload["request"], payload.get("schema", payload.get("instance")), candidate)
