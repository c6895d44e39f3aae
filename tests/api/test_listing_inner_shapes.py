"""The inner shapes the listing advertises are the ones the parts check (issue 32, item 1).

The records and interpretations of the fold tools, append_evidence's record (as a caller gives it:
no writer, redaction or tombstone, which the ledger writes; an id it may leave to the ledger),
append_interpretation's interpretation and
verify_extraction's request and candidate are listed with their real shapes (evidence v1 and verify
v1, the seed shapes of the shape table read backwards). Each part still checks its own contract
(the fold's PAYLOAD_INVALID, verification's CANDIDATE_SHAPE_INVALID): so every argument the
listing allows, drawn from it and then perturbed at one nested place, must pass the part's own
check too, and an argument the part's check refuses must be one the listing refuses.
"""
from __future__ import annotations

import json

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from budget import examples
from schema_draws import drawn
from groundrules import Caller, Service
from groundrules.evidence import EvidenceLedger
from groundrules.evidence import records
from groundrules.evidence.contract import first_problem, record_problem
from groundrules.evidence.fold import tables
from groundrules.verification.contract import problems

SERVICE = Service()
BOOK = SERVICE.book
CATALOGUE = tables(BOOK)[0]
NOW = "2024-05-01T10:00:00+08:00"
REVIEWER = Caller("rev", "reviewer", ("p",))


def _payload(arguments: dict) -> dict:
    """What the fold checks of these arguments, after the shape table mapped them."""
    payload = {"now": arguments.get("now", NOW), "records": arguments.get("records", []),
               "interpretations": arguments.get("interpretations", [arguments["interpretation"]]
                                                if "interpretation" in arguments else [])}
    if "scope_context" in arguments:
        payload["scope_context"] = arguments["scope_context"]
    for shapes in BOOK.of_kind("shape_map"):
        payload = shapes.translate(payload)
    return payload


def _fold_refuses(arguments: dict) -> str | None:
    return first_problem(BOOK.schemas, CATALOGUE.records, _payload(arguments))


def _verify_refuses(arguments: dict) -> list:
    return problems(BOOK.schemas, "request", arguments["request"]) + problems(BOOK.schemas, "candidate",
                                                                                arguments["candidate"])


def _append_refuses(arguments: dict) -> str | None:
    """What the ledger refuses of a record as given (ledger._prepare, in its order): a writer, the
    contract after the shape table mapped it and the store filled its id and times, a tombstone."""
    raw = arguments["record"]
    if not isinstance(raw, dict):
        return "a record is an object"
    if "writer" in raw:
        return "writer given"
    record = raw
    for shapes in BOOK.of_kind("shape_map"):
        record = shapes.record(record)
    record = dict(record)
    record.setdefault("id", "R-1")
    if record.get("type") != "lock":
        record.setdefault("observed_at", NOW)
    record["recorded_at"] = NOW
    problem = record_problem(BOOK.schemas, CATALOGUE.records, record, "record")
    if problem is None and ("redaction" in record or any(records.is_tombstone(v)
                                                          for v in records.holder(record).values())):
        return "tombstone given"
    return problem


PARTS = {"append_evidence": _append_refuses, "fold_evidence": _fold_refuses, "fold_ledger": _fold_refuses, "append_interpretation": _fold_refuses,
         "verify_extraction": _verify_refuses}
JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4),
                    lambda kids: st.lists(kids, max_size=2) | st.dictionaries(st.text(max_size=4), kids, max_size=2),
                    max_leaves=4)


def _places(value, at=()):
    """Every place inside `value` (a path of keys and indexes)."""
    yield at
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _places(inner, at + (key,))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _places(inner, at + (i,))


def _put(value, at, new):
    if not at:
        return new
    copy = json.loads(json.dumps(value))
    node = copy
    for step in at[:-1]:
        node = node[step]
    node[at[-1]] = new
    return copy


PROPERTY = settings(max_examples=examples(300), deadline=None,
                    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])


def _listed(name):
    """The listed schema of `name`, its validator, and arguments drawn from it that it allows."""
    schema = SERVICE.listing(name).input_schema
    validator = jsonschema.Draft202012Validator(schema)
    return validator, drawn(schema).filter(validator.is_valid)


@pytest.mark.parametrize("name", sorted(PARTS))
def test_what_the_listing_allows_inside_an_argument_the_part_accepts(name):
    _, allowed = _listed(name)

    @PROPERTY
    @given(arguments=allowed)
    def check(arguments):
        assert not PARTS[name](arguments), arguments
    check()


@pytest.mark.parametrize("name", sorted(PARTS))
def test_what_the_part_refuses_for_its_shape_the_listing_refuses(name):
    validator, allowed = _listed(name)

    @PROPERTY
    @given(base=allowed, data=st.data(), value=JSON)
    def check(base, data, value):
        at = data.draw(st.sampled_from([p for p in _places(base) if p]))
        arguments = _put(base, at, value)
        assume(json.loads(json.dumps(arguments)) == arguments)
        if PARTS[name](arguments):
            assert not validator.is_valid(arguments), (at, arguments)
            assert SERVICE.input_contract(name).errors(arguments) != []
    check()


def test_a_seed_shaped_record_and_event_are_listed_and_folded():
    """The seed's own record and event shapes are allowed by the listing and folded as the
    internal shapes are: the shape table, read backwards, is part of the listed schema."""
    arguments = {"now": NOW, "records": [
        {"id": "m_44", "type": "message", "role": "user", "state": "sent", "content": "手机号 138 0013 8000"},
        {"id": "E07", "source": "user", "timestamp": NOW, "quote": "我们公司登记地在 A 地",
         "locator": {"message_id": "m_31"}}],
        "interpretations": [{"id": "i1", "events": [{"type": "decline", "slot": "phone", "evidence_ids": ["m_44"]}],
                             "dispositions": []}]}
    schema = SERVICE.listing("fold_evidence").input_schema
    assert jsonschema.Draft202012Validator(schema).is_valid(arguments)
    assert _fold_refuses(arguments) is None
    envelope = SERVICE.call("fold_evidence", arguments, REVIEWER)
    assert envelope["error"] is None or envelope["error"]["code"] != "PAYLOAD_INVALID", envelope
    wrong = dict(arguments, records=[dict(arguments["records"][1], source="customer")])
    assert SERVICE.call("fold_evidence", wrong, REVIEWER)["error"]["code"] == "INVALID_ARGUMENT"


def test_an_interpretation_of_the_wrong_shape_is_refused_by_the_registry_before_the_ledger():
    service = Service(BOOK, evidence=EvidenceLedger(None, rulebook=BOOK))
    envelope = service.call("append_interpretation", {"interpretation": {"id": "i1", "events": [{"id": "e1"}],
                                                                         "dispositions": []}}, REVIEWER)
    assert envelope["error"]["code"] == "INVALID_ARGUMENT"
    assert envelope["error"]["field"].startswith("interpretation.events[0]")
