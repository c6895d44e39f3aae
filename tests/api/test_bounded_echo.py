"""Issue 13, item 7 and issue 19, item 6: no answer echoes unbounded input. A megabyte-long tool
name, instance name, field name, fold key or project gets an answer of bounded size (echoes are cut
to errors.ECHO_CHARS), and the did-you-mean search costs nothing on input far longer than any choice.

Then every tool, through Service.call: a megabyte string in every string position of its input
schema (and of the contracts its free-form arguments name), and a megabyte key in every object, each
in an otherwise valid call (tests/api/echo_corpus.py, seeded), and the hand-written cases of
tests/cases/hostile/echoes.json. A refusal is under 8 KB whole; an answer with data (a stored
record, a fold's values, a verification's result repeat what the caller gave, as they must) is
under 8 KB without its data: its error and warnings echo no more than the refusal would. The default
run takes a seeded eighth of the generated cases, the extended run all of them."""
from __future__ import annotations

import copy
import itertools
import json
import random
from pathlib import Path

import pytest

from groundrules import EvidenceLedger, FindingLedger
from groundrules.core import canonical, rulebook
from groundrules.api import Caller, Service
from groundrules.core.errors import ECHO_CHARS
from groundrules.findings import SequentialIds, StepClock

import echo_corpus

ROOT = Path(__file__).resolve().parents[2]
HUGE = "x" * 1_000_000
ANSWER_CHARS = 20 * ECHO_CHARS + 2000     # a few echoes, a hint and the envelope around them


def fold_payload() -> dict:
    payload = json.loads((ROOT / "tests" / "cases" / "fold" / "seed_region.json").read_text(encoding="utf-8"))
    first = next(iter(payload.values())) if "records" not in payload else payload
    return copy.deepcopy(first.get("input", first))


def with_key(value: dict, key: str) -> dict:
    return dict(value, **{key: 1})


def inline(schema: dict) -> tuple[str, dict]:
    """verify_extraction with this inline schema (an object's), which it refuses."""
    return "verify_extraction", {"request": {"input": "x"}, "schema": {"type": "object", **schema}, "candidate": {}}


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
    "inline schema requires an unknown field": lambda: inline({"properties": {"v": {}}, "required": ["v", HUGE]}),
    "inline schema $ref outside": lambda: inline({"properties": {"v": {"$ref": "#/" + HUGE}}}),
    "inline schema $ref cycle": lambda: inline({"properties": {"v": {"$ref": "#/$defs/" + HUGE}},
                                                "$defs": {HUGE: {"$ref": "#/$defs/" + HUGE}}}),
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


# ----------------------------------------------------------------------------- every position (issue 19)

ANSWER_BYTES = 8 * 1024
STAND_IN = "\u0000megabyte\u0000"   # where a case's megabyte string goes, when only its shape is compared
HOSTILE = ROOT / "tests" / "cases" / "hostile" / "echoes.json"
DEFAULT_SHARE = 0.125                # of the generated cases, in the default run (the rest in the extended run)


def example(part: str, name: str):
    return json.loads((ROOT / "schemas" / "examples" / part / f"{name}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ledgers(tmp_path_factory):
    """A service over both ledgers holding what the base calls name: F-000001, RP-000001, M-1."""
    book = rulebook.default()
    folder = tmp_path_factory.mktemp("echo")
    findings = FindingLedger(folder / "findings.db", rulebook=book, clock=StepClock(), ids=SequentialIds(),
                             rules_root=folder)
    n = itertools.count()
    evidence = EvidenceLedger(None, ids=lambda: f"R-{next(n)}", clock=lambda: "2030-01-01T00:00:00Z",
                              rulebook=book, project="p1")
    served = Service(book, findings=findings, evidence=evidence)
    caller = Caller("tester", "reviewer", ("p1",))
    for tool, arguments in (("log_finding", echo_corpus.FINDING),
                            ("propose_rule", {"finding_id": "F-000001", "rule_text": "- 先记录温度",
                                              "target_path": "AGENTS.md", "rationale": "两次误判"}),
                            ("append_evidence", {"record": echo_corpus.MESSAGE})):
        assert served.call(tool, arguments, caller)["ok"], tool
    yield served, caller
    findings.close()


def generated() -> list:
    """The generated case ids, the default run's share drawn by the corpus seed (no megabyte string
    is built to name them)."""
    served = Service(rulebook.default())
    ids = [case for case, _, _ in echo_corpus.cases(served, example)]
    rng = random.Random(echo_corpus.SEED)
    return [pytest.param(case, marks=() if rng.random() < DEFAULT_SHARE else pytest.mark.extended, id=case)
            for case in ids]


def expand(value):
    """A hostile case's arguments with its {"$repeat"} and {"$numbered"} stand-ins written out."""
    if isinstance(value, dict):
        if "$repeat" in value:
            return value["$repeat"] * value["times"]
        if "$numbered" in value:
            item = value["$numbered"]
            if isinstance(item, dict):
                first = next(iter(item))
                return [dict(item, **{first: f"{item[first]}{n}"}) for n in range(value["count"])]
            return [f"{item}{n}" for n in range(value["count"])]
        return {k: expand(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v) for v in value]
    return value


def hostile() -> list:
    cases = json.loads(HOSTILE.read_text(encoding="utf-8"))["cases"]
    return [pytest.param(c["tool"], c["arguments"], id=c["id"]) for c in cases]


def assert_bounded(envelope: dict, label: str) -> None:
    whole = canonical.dumps(envelope).encode("utf-8")
    if envelope["data"] is None:
        assert len(whole) < ANSWER_BYTES, (label, whole[:400])
    else:
        bare = canonical.dumps(dict(envelope, data=None)).encode("utf-8")
        assert len(bare) < ANSWER_BYTES, (label, bare[:400])


_CORPUS: dict = {}


@pytest.mark.parametrize("case", generated())
def test_a_megabyte_in_any_position_gets_a_bounded_answer(ledgers, case):
    served, caller = ledgers
    if not _CORPUS:
        _CORPUS.update({c: (tool, make) for c, tool, make in echo_corpus.cases(served, example)})
    tool, make = _CORPUS[case]
    assert_bounded(served.call(tool, make(), caller), case)


@pytest.mark.parametrize("tool, arguments", hostile())
def test_the_hostile_cases_get_bounded_answers(ledgers, tool, arguments):
    served, caller = ledgers
    envelope = served.call(tool, expand(arguments), caller)
    assert_bounded(envelope, tool)
    assert envelope["data"] is None                 # each of them is refused


def test_the_corpus_reaches_the_positions_the_issue_found():
    """The walk goes into the contracts free-form arguments name, down to the positions issue 19
    found echoed, and draws the same calls and strings every run."""
    served = Service(rulebook.default())

    def drawn() -> dict:
        # each call with a stand-in where its megabyte string goes, and the alphabet that string
        # repeats (it is that alphabet cut to a megabyte): hashing 1,441 megabytes twice took 12 s
        return {case: (tool, echo_corpus.chunk(case), canonical.dumps(make(value=STAND_IN)))
                for case, tool, make in echo_corpus.cases(served, example)}
    cases = drawn()
    for case in ("append_interpretation:interpretation.events[0].slot", "fold_ledger:interpretations[0].events[0].type",
                 "fold_evidence:interpretations[0].events[0].type",
                 "verify_extraction:candidate.extraction.evidence[0].path"):
        assert case in cases, case
    assert drawn() == cases
