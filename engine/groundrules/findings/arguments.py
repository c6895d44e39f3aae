"""A call's arguments checked against the vocabulary: values from its lists, a reason that is
there, a new finding's words and scope with their defaults filled in.

The input schema has checked the shapes already; these checks hold for any caller that skips it,
and word their refusals from findings_vocabulary.yaml so an analyst can reword them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import codes
from ..core.errors import did_you_mean
if TYPE_CHECKING:
    from .call import Call


def reason(call: Call, arguments: dict) -> str:
    """The call's reason; docs/spec/findings.md: every state change takes one, and a blank one is none
    (the schema says so too; this holds for any caller that skips the schema)."""
    text = arguments.get("reason", "")
    if not isinstance(text, str) or not text.strip():
        raise call.refuse(codes.INVALID_ARGUMENT, "reason_required", field="reason")
    return text


def choose(call: Call, field: str, value: str, choices: dict | tuple) -> str:
    """`value` if it is one of `choices`, else INVALID_ARGUMENT naming the allowed values."""
    if value not in choices:
        hint = did_you_mean(value, choices)
        raise call.refuse(codes.INVALID_ARGUMENT, "unknown_value", field=field, choices=list(choices),
                          hint=f"（{hint}）" if hint else "")
    return value


def check_body(call: Call, body: dict, prefix: str = "") -> dict:
    """Validate a new finding's words against the vocabulary; returns it with defaults filled."""
    vocab = call.vocab
    choose(call, f"{prefix}claim_kind", body["claim_kind"], vocab.claim_kinds)
    policy = body.get("retrieval_policy", vocab.default_retrieval_policy)
    choose(call, f"{prefix}retrieval_policy", policy, vocab.retrieval_policies)
    epistemic = call.states.machine("epistemic")
    state = body.get("epistemic_state", epistemic.initial)
    choose(call, f"{prefix}epistemic_state", state, epistemic.states)
    scope = check_scope(call, body.get("scope"), f"{prefix}scope")
    return dict(body, retrieval_policy=policy, epistemic_state=state, scope=scope,
                tags=list(body.get("tags", [])), details=body.get("details", ""))


def check_scope(call: Call, scope: dict | None, field: str) -> dict:
    """A finding's scope with every part present, its revalidation triggers the vocabulary's."""
    scope = scope or {}
    for trigger in scope.get("revalidate_on", []):
        choose(call, f"{field}.revalidate_on", trigger, call.vocab.revalidate_triggers)
    return {"match": dict(scope.get("match", {})), "context": dict(scope.get("context", {})),
            "revalidate_on": list(scope.get("revalidate_on", []))}
