"""Issue 31, item 5 (seed 003 §七): each slot's clarifying question is its own, and a binding table
decides the slot of an unresolved event where a rule can ("能判定就判定": 交付到 B 地分部 is the delivery
address when the slots tell it from the company's), asking with every reading where it cannot."""
from __future__ import annotations

import copy
import re

from fold_support import group, outcome
from test_fold_tables import copy_tables

from groundrules import load_rulebook


def clarification(result: dict) -> dict | None:
    found = result["data"]["state"]["clarifications"]
    return found[0] if found else None


def test_a_question_about_a_new_contact_carries_no_words_of_the_delivery_question(rulebook):
    """The issue's case: 这批产品是李娜的一项新需求吗？ borrowed the delivery address's words."""
    payload = copy.deepcopy(group("seed_region")["unresolved_three_readings"])
    event = next(e for e in payload["interpretations"][0]["events"] if isinstance(e.get("scope"), dict))
    event["slot"], event["value"] = "contact_name", "李娜"
    for reading in event["scope"]["unresolved"]:
        reading["slot"] = "contact_name"
        reading.pop("type", None)
    question = clarification(outcome(payload, rulebook))["question"]
    assert "李娜" in question and "这批产品" not in question and "交付" not in question


def _literal_grams(template) -> set:
    text = "".join(p for p in template.parts if isinstance(p, str))
    return {g for run in re.findall(r"[\u4e00-\u9fff]+", text)
            for g in (run[i:i + 2] for i in range(len(run) - 1))}


def test_no_slot_borrows_the_words_of_another_slots_question(rulebook):
    """Every slot's question for every kind of question: the words a slot's own template adds (beyond
    the questions table's slot-neutral sentences) appear in no other slot's question."""
    policy = rulebook.table("merge")
    neutral = set().union(*(_literal_grams(t) for t in _row_templates(policy)))
    own = {sid: set().union(*(_literal_grams(t) for t in slot.questions.values())) - neutral
           for sid, slot in policy.slots.items() if slot.questions}
    assert own and all(own.values())
    for sid, slot in policy.slots.items():
        for code in policy.questions.codes:
            facts = {"slot": {"id": sid, "label": slot.label}, "value": "X", "current": "Y"}
            template = slot.questions.get(code) if slot.questions else None
            text = template.render(facts) if template is not None else _row_text(policy, code, facts)
            for other, words in own.items():
                if other != sid:
                    assert not {w for w in words if w in text and w not in slot.label}, (sid, code, text)


def _row_templates(policy):
    return [t for row in policy.questions.rows for key, t in row.outputs if key == "text"]


def _row_text(policy, code, facts):
    row = next(r for r in policy.questions.rows if r.code == code)
    return next(t for key, t in row.outputs if key == "text").render(facts)


def test_a_binding_phrase_decides_the_reading_and_nothing_is_asked(rulebook):
    result = outcome(group("seed_region")["bound_by_delivery_phrase"], rulebook)
    assert clarification(result) is None
    e2 = next(e for e in result["data"]["events"] if e["id"] == "e2")
    assert e2["bound"] == {"reading": "delivery", "binding": "delivery"} and e2["scope"] == "demand_1"
    slots = result["data"]["state"]["scopes"]["demand_1"]["slots"]
    assert (slots["delivery_region"]["value"], slots["company_region"]["value"]) == ("B 地分部", "A 地")


def test_without_a_phrase_or_with_phrases_of_both_readings_the_fold_asks_with_both(rulebook):
    asked = clarification(outcome(group("seed_region")["unresolved_asks_the_seed_question"], rulebook))
    assert asked["question"] == "这批产品是交付到 B 地分部吗？公司登记地仍按 A 地记录可以吗？"
    both = copy.deepcopy(group("seed_region")["bound_by_delivery_phrase"])
    record = next(r for r in both["records"] if r.get("message_id") == "m_73")
    record["content"] = "登记地不变，交付到 B 地分部"
    event = both["interpretations"][0]["events"][1]
    event["evidence"][1].update(start=0, end=len(record["content"]), quote=record["content"])
    result = outcome(both, rulebook)
    assert [r["id"] for r in clarification(result)["readings"]] == ["delivery", "correction"]


def test_the_bindings_are_the_tables(tmp_path):
    root = copy_tables(tmp_path)
    path = root / "rules" / "merge.yaml"
    text = path.read_text(encoding="utf-8")
    assert "phrases: [交付到, " in text
    path.write_text(text.replace("phrases: [交付到, ", "phrases: [运到, "), encoding="utf-8")
    book = load_rulebook(root)
    assert clarification(outcome(group("seed_region")["bound_by_delivery_phrase"], book)) is not None
