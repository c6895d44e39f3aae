"""Query-time applicability: a finding's scope compared with the caller's scope_context and task_context.

This module only counts (which match keys the caller names, which are equal, which revalidation
triggers fired); rules/applicability.yaml turns the counts into a verdict. Nothing here is stored.
"""
from __future__ import annotations

from typing import Any

from ..core.conditions import same
from .vocabulary import Vocabulary


def flatten(context: dict | None) -> tuple[dict, list[str]]:
    """({'runtime': {'backend': 'vLLM'}} -> {'runtime.backend': 'vLLM'}, the dotted keys given twice,
    sorted); lists are not contexts."""
    out: dict = {}
    twice: set = set()
    todo = [("", context or {})]
    while todo:
        prefix, node = todo.pop()
        for key, value in node.items():
            path = f"{prefix}{key}"
            if isinstance(value, dict):
                todo.append((path + ".", value))
            elif not isinstance(value, list):
                if path in out:
                    twice.add(path)
                out[path] = value
    return out, sorted(twice)


def _matches(expected: Any, actual: Any) -> bool:
    if isinstance(expected, list):
        return any(same(e, actual) for e in expected)
    return same(expected, actual)


def facts(scope: dict, caller: dict, vocab: Vocabulary, lifecycle: str, epistemic: str,
          caller_given: bool, task: dict | None = None) -> dict:
    """The applicability facts; `task` (the caller's task_context, dotted) is compared with the
    finding's match conditions like `caller` (its scope_context), and counted apart."""
    task = task or {}
    caller = {**caller, **task}
    match = scope.get("match", {})
    context = scope.get("context", {})
    compared = [k for k in match if k in caller]
    equal = [k for k in compared if _matches(match[k], caller[k])]
    fired, unchecked = [], []
    for trigger in scope.get("revalidate_on", []):
        keys = vocab.revalidate_triggers.get(trigger, {}).get("context_keys", [])
        both = [k for k in keys if k in context and k in caller]
        if any(not same(context[k], caller[k]) for k in both):
            fired.append(trigger)
        elif not both:
            unchecked.append(trigger)
    return {
        "lifecycle_state": lifecycle, "epistemic_state": epistemic, "caller_context_given": caller_given,
        "task_context_given": bool(task),
        "match": {"declared": len(match), "compared": len(compared), "equal": len(equal),
                  "differ": len(compared) - len(equal), "missing": len(match) - len(compared),
                  "from_task": sum(1 for k in compared if k in task)},
        "triggers": {"declared": len(scope.get("revalidate_on", [])), "fired": fired, "unchecked": unchecked},
    }


def verdict(table, value: dict, presentable: bool) -> dict:
    """{verdict, label, current, listed, detail}: `current` needs both a current verdict and a record
    whose states may be presented as current (`presentable`)."""
    fired = table.evaluate(value).fired[0]
    attrs = table.codes.get(fired.code, {})
    return {"verdict": fired.code, "label": attrs.get("label", fired.code),
            "current": bool(attrs.get("current")) and presentable,
            "listed": bool(attrs.get("listed")), "detail": fired.outputs.get("detail", "")}
