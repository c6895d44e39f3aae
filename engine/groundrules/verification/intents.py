"""The intent part: unique ids, one object per intent, and constraints that must survive.

What is certain is checked as model output (an intent input that is not the request's, a
repeated id); what needs judgement (several objects in one target, more actions than intents, an
intent carrying on a withdrawn action, an explicit prohibition nobody reflects) comes from the
tables, and the issue catalogue says whether each is an error to repair or a warning.
"""
from __future__ import annotations

from typing import Any

from .observations import Observation
from .heuristics import IntentHeuristics
from .phrases import PhraseMatch, ProhibitionPhrases
from .pointers import encode

_MAX_DEPTH = 16


def intent_observations(text: str, intent: dict, phrases: ProhibitionPhrases,
                    heuristics: IntentHeuristics) -> list[Observation]:
    out: list[Observation] = []
    if intent["input"] != text:
        out.append(Observation("intent_input_mismatch", "/intent/input"))
    intents = intent["intents"]
    seen: set = set()
    for i, item in enumerate(intents):
        if item["id"] in seen:
            out.append(Observation("intent_id_duplicate", encode("intent", "intents", i, "id"), {"id": item["id"]}))
        seen.add(item["id"])
    out += _joined_targets(intents, heuristics)
    matches = phrases.scan(text)
    statements = _statements(intent)
    for m in matches:
        if not phrases.reflected(m, statements):
            out.append(Observation("prohibition_unreflected", "/intent/prohibitions",
                               {"phrase": m.phrase, "kind": m.kind, "start": m.start, "end": m.end}))
    out += _merged_actions(text, intents, matches, heuristics)
    out += _withdrawn_continued(intents, matches, heuristics)
    return out


def _withdrawn_continued(intents: list, matches: list[PhraseMatch],
                         heuristics: IntentHeuristics) -> list[Observation]:
    """An intent whose action belongs to the same family (one heuristic's pattern) as an action a
    withdrawal phrase of the input names: 取消修改 and an intent 'fix'."""
    out = []
    for h in heuristics.of_check("withdrawn_action"):
        withdrawn = [m for m in matches if m.kind in h.phrase_kinds and h.pattern.spans(m.object)]
        if not withdrawn:
            continue
        for i, item in enumerate(intents):
            if isinstance(item.get("action"), str) and h.pattern.spans(item["action"]):
                out.append(Observation("withdrawn_continued", encode("intent", "intents", i, "action"),
                                       {"action": item["action"], "phrase": withdrawn[0].phrase}))
    return out


def _joined_targets(intents: list, heuristics: IntentHeuristics) -> list[Observation]:
    out = []
    checks = heuristics.of_check("target_joiner")
    for i, item in enumerate(intents):
        for h in checks:
            spans = h.pattern.spans(item["target"])
            if spans:
                out.append(Observation("target_joined", encode("intent", "intents", i, "target"),
                                   {"target": item["target"], "joiner": spans[0][2].group("joiner")}))
                break
    return out


def _merged_actions(text: str, intents: list, matches: list[PhraseMatch],
                    heuristics: IntentHeuristics) -> list[Observation]:
    out = []
    for h in heuristics.of_check("action_count"):
        excluded = [(m.start, m.end) for m in matches if m.kind in h.exclude_kinds]
        actions = [m.group(0) for start, end, m in h.pattern.spans(text)
                   if not any(start < e and s < end for s, e in excluded)]
        if len(actions) > len(intents):
            out.append(Observation("actions_merged", "/intent/intents",
                               {"actions": actions, "count": len(actions), "intents": len(intents)}))
    return out


def _statements(intent: dict) -> list[str]:
    """The text of every requirement and prohibition, top-level and per intent."""
    out: list[str] = []
    items = list(intent["requirements"]) + list(intent["prohibitions"])
    for item in intent["intents"]:
        reqs = item.get("requirements")
        if isinstance(reqs, list):
            items += reqs
    for item in items:
        _strings(item, out, 0)
    return out


def _strings(value: Any, out: list, depth: int) -> None:
    if isinstance(value, str):
        out.append(value)
    elif depth < _MAX_DEPTH and isinstance(value, dict):
        for v in value.values():
            _strings(v, out, depth + 1)
    elif depth < _MAX_DEPTH and isinstance(value, list):
        for v in value:
            _strings(v, out, depth + 1)
