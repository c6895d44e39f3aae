"""Issue 13, item 7: no refusal echoes unbounded input. A megabyte-long tool name, instance name,
field name, fold key or project gets an answer of bounded size (echoes are cut to errors.ECHO_CHARS),
and the did-you-mean search costs nothing on input far longer than any choice."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from groundrules import canonical, rulebook
from groundrules.api import Caller, Service
from groundrules.errors import ECHO_CHARS

ROOT = Path(__file__).resolve().parents[2]
HUGE = "x" * 1_000_000
ANSWER_CHARS = 20 * ECHO_CHARS + 2000     # a few echoes, a hint and the envelope around them


def fold_payload() -> dict:
    payload = json.loads((ROOT / "tests" / "cases" / "fold" / "seed_region.json").read_text(encoding="utf-8"))
    first = next(iter(payload.values())) if "records" not in payload else payload
    return copy.deepcopy(first.get("input", first))


def with_key(value: dict, key: str) -> dict:
    return dict(value, **{key: 1})


CALLS = {
    "unknown tool": lambda: (HUGE, {}),
    "tool name near a real one": lambda: ("explain_support" + HUGE, {}),
    "verify unknown instance": lambda: ("verify_extraction", {"request": {"input": "x"}, "instance": HUGE,
                                                              "candidate": {}}),
    "verify unknown field": lambda: ("verify_extraction", {"request": {"input": "x", "fields": [HUGE]},
                                                           "instance": "meeting_time", "candidate": {}}),
    "fold unknown key": lambda: ("fold_evidence", with_key(fold_payload(), HUGE)),
    "fold unknown key in a record": lambda: ("fold_evidence", dict(fold_payload(), records=[
        with_key(r, HUGE) for r in fold_payload().get("records", [{}])])),
    "project name": lambda: ("query_findings", {"project": HUGE}),
    "explain unknown context key": lambda: ("explain_support", {"context": {HUGE: HUGE}}),
}


@pytest.fixture(scope="module")
def service():
    return Service(rulebook.default())


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_megabyte_of_input_gets_a_bounded_answer(service, name):
    tool, arguments = CALLS[name]()
    envelope = service.call(tool, arguments, Caller("tester", "agent", ("p1",)))
    text = canonical.dumps(envelope)
    assert envelope["ok"] is False or len(text) < ANSWER_CHARS
    assert len(text) < ANSWER_CHARS, (name, text[:300])
    assert "x" * (ECHO_CHARS + 1) not in text
