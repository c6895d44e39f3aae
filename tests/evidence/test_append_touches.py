"""Issue 19, item 5: append_interpretation checks an interpretation against what it touches
(evidence/touches.py), not by re-folding the project, and refuses exactly what the re-fold refused.

The oracle is the old check itself, through the public fold: the stored records, the stored
interpretations and the new one folded together, a refusal the refusal table marks curable let
through. Every case of the fold corpus (tests/cases/fold/, the refusal corpus among them) is replayed
into a ledger interpretation by interpretation, as given and with each interpretation split in two
(its events and dispositions spread over two appends, so that one depends on the other); then
scenarios with several subjects in one project, where a new interpretation changes what a stored
one means. At every step the answer (accepted, or the refusal's code) must be the oracle's."""
from __future__ import annotations

import copy

import pytest

from groundrules import EvidenceLedger, GroundrulesError, fold

from fold_support import GROUPS, group


def code_of(run) -> str | None:
    try:
        run()
    except GroundrulesError as exc:
        return exc.code
    return None


def oracle(ledger: EvidenceLedger, book, now: str, accepted: list, interpretation) -> str | None:
    """What the re-fold of the whole project answered: a refusal's code, or None (stored)."""
    curable = book.table("evidence_refusals").curable
    payload = {"now": now, "records": ledger.records(), "interpretations": accepted + [interpretation]}
    found = code_of(lambda: fold(payload, book))
    return None if found in curable else found


def replay(ledger: EvidenceLedger, book, now: str, interpretations: list) -> list[tuple]:
    """Append each interpretation; (its id, the oracle's answer, the ledger's) at each step."""
    accepted, steps = [], []
    for interpretation in interpretations:
        expected = oracle(ledger, book, now, accepted, interpretation)
        got = code_of(lambda: ledger.append_interpretation(interpretation))
        steps.append((interpretation.get("id") if isinstance(interpretation, dict) else None, expected, got))
        if got is None:
            accepted.append(interpretation)
    return steps


def split(interpretations: list) -> list:
    """Each interpretation as two: the first half of its events, then the rest with its dispositions."""
    out = []
    for n, i in enumerate(interpretations):
        if not (isinstance(i, dict) and isinstance(i.get("events"), list) and len(i["events"]) > 1):
            out.append(i)
            continue
        half = len(i["events"]) // 2
        out.append(dict(i, id=f"{i.get('id')}-a", events=i["events"][:half], dispositions=[]))
        out.append(dict(i, id=f"{i.get('id')}-b", events=i["events"][half:]))
    return out


def new_ledger(rulebook, path, now: str, keys=None) -> EvidenceLedger:
    n = iter(range(1, 10**6))
    return EvidenceLedger(str(path), ids=lambda: f"R{next(n)}", clock=lambda: now, rulebook=rulebook, keys=keys)


CORPUS = [(g, case) for g in GROUPS for case in group(g)]


@pytest.mark.parametrize("variant", ["as_given", "split"])
def test_the_corpus_is_refused_as_the_refold_refused_it(rulebook, tmp_path, variant):
    replayed, compared = 0, []
    for n, (name, case) in enumerate(CORPUS):
        payload = group(name)[case]
        if not isinstance(payload, dict) or "now" not in payload or not isinstance(payload.get("records"), list) \
                or not isinstance(payload.get("interpretations"), list) or "scope_context" in payload:
            continue
        ledger = new_ledger(rulebook, tmp_path / f"{variant}-{n}.sqlite", payload["now"])
        try:
            if code_of(lambda: ledger.append_all(copy.deepcopy(payload["records"]))) is not None:
                continue                   # a record the ledger refuses: the fold's own refusal case
            interpretations = copy.deepcopy(payload["interpretations"])
            steps = replay(ledger, rulebook, payload["now"],
                           split(interpretations) if variant == "split" else interpretations)
        finally:
            ledger.close()
        replayed += 1
        compared += [(f"{name}/{case}", *step) for step in steps]
    assert replayed > 60 and len(compared) > 80
    assert [c for c in compared if c[2] != c[3]] == [], [c for c in compared if c[2] != c[3]]
    assert {c[2] for c in compared} > {None, "LOCK_CONFLICT", "UNKNOWN_EVIDENCE", "UNKNOWN_SLOT"}


# ------------------------------------------------------------------------------ several subjects

NOW = "2030-01-02T00:00:00+08:00"


def message(mid: str, subject: str, text: str) -> dict:
    return {"id": mid, "type": "message", "role": "user", "state": "sent", "subject": subject, "content": text,
            "observed_at": "2030-01-01T00:00:00+08:00"}


@pytest.fixture(params=["sqlite", "postgres"])
def project(request, rulebook, tmp_path):
    """A ledger whose project holds two demands, each with a message and its locks."""
    db = str(tmp_path / "l.sqlite") if request.param == "sqlite" else request.getfixturevalue("pg_db")
    ledger = new_ledger(rulebook, db, NOW, tmp_path / "keys")
    ledger.append_message(message("m1", "demand_1", "不方便接电话，微信 wx_wang01"))
    ledger.append_message(message("m2", "demand_2", "第二批送到 B 地，手机 13812345678"))
    yield ledger
    ledger.close()


def locks(ledger: EvidenceLedger, mid: str) -> dict:
    return {r["lock"]["kind"]: r["id"] for r in ledger.records() if r["type"] == "lock"
            and r["lock"]["locator"]["message_id"] == mid}


def test_interpretations_that_change_each_other_are_refused_as_before(project, rulebook):
    first, second = locks(project, "m1"), locks(project, "m2")
    wechat, phone = first["wechat"], second["phone"]
    scenario = [
        {"id": "I1", "events": [{"id": "e1", "type": "set", "slot": "wechat", "value": "wx_wang01",
                                 "evidence": [wechat]}],
         "dispositions": [{"lock": wechat, "slot": "wechat"}]},
        {"id": "I2", "events": [{"id": "o2", "type": "new_scope", "scope": "demand_2", "evidence": ["m2"]}],
         "dispositions": []},
        {"id": "I3", "events": [{"id": "e3", "type": "set", "slot": "phone", "value": "13812345678",
                                 "evidence": [phone]}], "dispositions": [{"lock": phone, "slot": "phone"}]},
        # dismisses the lock I1's event rests on: I1's event now conflicts with it
        {"id": "I4", "events": [], "dispositions": [{"lock": wechat, "dismissed": "not a contact"}]},
        {"id": "I4b", "events": [{"id": "e1", "type": "decline", "slot": "phone", "evidence": ["m1"]}],
         "dispositions": []},                                   # an event id used before
        {"id": "I1", "events": [], "dispositions": []},         # an interpretation id used before
        {"id": "I5", "events": [{"id": "o5", "type": "new_scope", "scope": "demand_2", "evidence": ["m2"]}],
         "dispositions": []},                                   # a scope opened before
        {"id": "I6", "events": [{"id": "e6", "type": "set", "slot": "region", "value": "B 地", "scope": "demand_9",
                                 "evidence": ["m2"]}], "dispositions": []},
        {"id": "I7", "events": [{"id": "e7", "type": "confirm", "slot": "wechat", "evidence": ["m1"]}],
         "dispositions": []},                                   # no value: checked against the whole project
        {"id": "I8", "events": [{"id": "e8", "type": "set", "slot": "region", "value": "B 地",
                                 "evidence": ["m1", "m2"]}], "dispositions": []},
        {"id": "I9", "events": [{"id": "e9", "type": "set", "slot": "delivery_region", "value": "B 地",
                                 "evidence": ["m2"]}], "dispositions": []},
    ]
    steps = replay(project, rulebook, NOW, scenario)
    assert [(i, got) for i, _, got in steps] == [(i, want) for i, want, _ in steps]
    assert {want for _, want, _ in steps} >= {None, "DUPLICATE_ID", "SCOPE_EXISTS", "UNKNOWN_SCOPE",
                                              "SUBJECTS_DIFFER"}


def test_a_fold_for_a_subject_reads_its_records_and_the_interpretations_that_touch_them(project):
    first, second = locks(project, "m1"), locks(project, "m2")
    project.append_interpretation({"id": "I1", "events": [
        {"id": "e1", "type": "set", "slot": "wechat", "value": "wx_wang01", "evidence": [first["wechat"]]}],
        "dispositions": [{"lock": first["wechat"], "slot": "wechat"}]})
    project.append_interpretation({"id": "I2", "events": [
        {"id": "o2", "type": "new_scope", "scope": "demand_2", "evidence": ["m2"]},
        {"id": "e2", "type": "set", "slot": "delivery_region", "value": "B 地", "evidence": ["m2"]}],
        "dispositions": [{"lock": second["phone"], "dismissed": "not asked"}]})
    one = project.fold(None, NOW, subject="demand_1")
    assert [e["id"] for e in one["evidence"]] == ["m1", *sorted(first.values())]
    assert [e["id"] for e in one["events"]] == ["e1"]
    two = project.fold(None, NOW, subject="demand_2")
    assert [e["id"] for e in two["events"]] == ["o2", "e2"]
    assert two["state"]["scopes"]["demand_2"]["slots"]["delivery_region"]["value"] == "B 地"
    given = project.fold(project.interpretations()[:1], NOW, subject="demand_1")
    assert given == one                                    # the same as naming the ones that touch it
