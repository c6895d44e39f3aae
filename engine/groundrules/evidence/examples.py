"""Running merge.yaml's whole-fold examples: a small ledger and its events, folded at `now`.

The example events cite record ids and skip the interpretation checks (those belong to
events.yaml and the tests); what is exercised is the merge: scopes, resolve, status, questions.
"""
from __future__ import annotations

from typing import Any

from ..core import codes
from ..core.errors import GroundrulesError, refusal
from .core import Folder
from .index import LedgerIndex
from . import scope as scoping
from .interpret import NO_VALUE, Event
from ..core.dates import parse_instant as parse


class PlainRefusals:
    """Refusals without the catalogue table: the code is the message."""

    @staticmethod
    def error(code: str, **details: Any) -> GroundrulesError:
        return GroundrulesError(code, code, **details)

    @staticmethod
    def first(refusals: list[GroundrulesError]) -> GroundrulesError:
        """With no precedence table, the first refusal met answers (as unlisted codes do there)."""
        return refusals[0]


def run_example(policy, given: dict) -> tuple[dict, list]:
    """(scopes, clarifications) of one example's ledger and events."""
    now = parse(given["now"])
    if now is None:
        raise refusal(codes.PAYLOAD_INVALID, "now.example")
    index = LedgerIndex(given["records"], policy, PlainRefusals(), now)
    events = []
    for n, raw in enumerate(given["events"]):
        citations = []
        for ref in raw["evidence"]:
            kind, rid = index.refs[ref]
            citations.append({"ref": ref, "kind": kind, "record": rid})
        scope = raw.get("scope")
        readings = None
        if isinstance(scope, dict):
            readings = [{"id": r["id"], "type": r.get("type", raw["type"]), "slot": r.get("slot", raw.get("slot")),
                         **{k: r[k] for k in ("scope", "new_scope") if k in r}} for r in scope["unresolved"]]
        events.append(Event(raw["id"], "example", raw["type"], policy.ops[raw["type"]],
                            policy.layer(raw["type"]), raw.get("slot"), raw.get("value", NO_VALUE),
                            scope if isinstance(scope, str) else None, readings, raw.get("parent"),
                            citations, list(dict.fromkeys(c["record"] for c in citations)),
                            tuple(raw.get("resolves", ())), f"examples.events[{n}]"))
    fits = None
    if "scope_context" in given:
        context, _ = scoping.flatten(given["scope_context"])
        fits = scoping.weigh(index, policy, context)
    folder = Folder(index, policy, fits)
    folder.field_pass(events, folder.scope_pass(events))
    return folder.finish(), list(folder.clarifications.values())


def check_fold_example(policy, example: dict) -> tuple[bool, str, tuple]:
    try:
        scopes, clarifications = run_example(policy, example["given"])
    except (GroundrulesError, KeyError, TypeError, ValueError) as exc:
        return False, f"the example does not fold: {type(exc).__name__}: {exc}", ("given",)
    for n, want in enumerate(example["expect"]):
        slot = scopes.get(want["scope"], {}).get("slots", {}).get(want["slot"])
        if slot is None:
            return False, f"scope '{want['scope']}' has no slot '{want['slot']}'", ("expect", n)
        wrong = [f"{k}: expected {v!r}, got {slot.get(k)!r}" for k, v in want.items()
                 if k not in ("scope", "slot") and slot.get(k) != v]
        if wrong:
            return False, f"{want['scope']}.{want['slot']}: " + "; ".join(wrong), ("expect", n)
    if "questions" in example:
        got = [c["question"] for c in clarifications if c["status"] == "open"]
        if got != example["questions"]:
            return False, f"questions: expected {example['questions']!r}, got {got!r}", ("questions",)
    return True, "", ()
