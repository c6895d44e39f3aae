"""Issue 31, item 4 (seed 003 §五: 归并时要先处理作用域，再把字段事件折叠到对应的那一组里): the fold
orders the layers itself. Within one interpretation it walks the events by the ledger record each
cites, scope events before field events at one record, so the order a model lists them in changes
nothing: every fold case, its events permuted, gets one answer."""
from __future__ import annotations

import copy
import random

import pytest

from fold_support import GROUPS, group, outcome

CASES = {f"{g}/{name}": payload for g in GROUPS for name, payload in group(g).items()}


def answer(result: dict):
    """What a host relies on: the state and where each event folded, or the refusal's code."""
    if "error" in result:
        return result["error"]["code"]
    data = result["data"]
    return data["state"], sorted((e["id"], e["scope"], e["outcome"], e["rule"]) for e in data["events"])


def _key(case: dict, event: dict) -> tuple:
    """Events whose order the fold keeps as listed: the same layer and the same latest record."""
    records = {r["id"]: n for n, r in enumerate(case.get("records", [])) if isinstance(r, dict) and "id" in r}
    ids = {r.get("message_id"): r["id"] for r in case.get("records", []) if isinstance(r, dict) and "id" in r}
    cited = []
    for c in event.get("evidence", []):
        rid = c if isinstance(c, str) else ids.get(c.get("message_id")) if isinstance(c, dict) else None
        cited.append(records.get(rid, -1))
    return max(cited, default=-1), event.get("type") in ("new_scope", "switch_scope", "close_scope")


def permutations(case: dict, rng: random.Random, count: int = 4):
    """Copies of `case` whose every interpretation lists its events in another order, keeping the
    listed order of events the fold cannot tell apart (same layer, same latest record)."""
    for _ in range(count):
        out = copy.deepcopy(case)
        for interp in out.get("interpretations", []):
            events = interp.get("events")
            if not isinstance(events, list) or len(events) < 2:
                continue
            shuffled = events[:]
            rng.shuffle(shuffled)
            queues: dict = {}
            for ev in events:
                queues.setdefault(_key(case, ev), []).append(ev)
            interp["events"] = [queues[_key(case, ev)].pop(0) for ev in shuffled]
        yield out


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_fold_case_gets_one_answer_whatever_the_order_of_its_events(rulebook, name):
    case = CASES[name]
    expected = answer(outcome(case, rulebook))
    rng = random.Random(name)
    for permuted in permutations(case, rng):
        assert answer(outcome(permuted, rulebook)) == expected


def test_a_field_event_listed_before_the_new_scope_of_its_message_folds_into_the_new_scope(rulebook):
    """The issue's case: 送到 B 地分部 (m_02) listed before the new_scope read from m_02, no scope named."""
    case = copy.deepcopy(group("scopes_expiry")["scope_events_fold_first"])
    first, second, opened = case["interpretations"][0]["events"]
    del second["scope"]
    case["interpretations"][0]["events"] = [first, second, opened]
    result = outcome(case, rulebook)
    scopes = result["data"]["state"]["scopes"]
    assert scopes["demand_1"]["slots"]["delivery_region"]["value"] == "A 地"
    assert scopes["demand_2"]["slots"]["delivery_region"]["value"] == "B 地分部"
    assert {e["id"]: e["scope"] for e in result["data"]["events"]}["e2"] == "demand_2"
