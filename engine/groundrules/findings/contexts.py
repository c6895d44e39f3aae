"""The caller's scope_context and task_context as dotted keys, which the applicability table and
revalidation read.

A key that could mean two values (given nested and dotted, or in both contexts) is refused:
which value won would otherwise depend on the order of the keys.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import codes
from ..core.errors import shown
from . import applicability
if TYPE_CHECKING:
    from .call import Call


def caller_context(call: Call, arguments: dict) -> dict:
    """The caller's scope_context as dotted keys; a key given both nested and dotted is refused,
    since which value wins would depend on the order of the keys."""
    return _flat(call, arguments, "scope_context")


def task_context(call: Call, arguments: dict, environment: dict) -> dict:
    """The caller's task_context (docs/spec/findings.md: the current task, beside scope_context's
    environment) as dotted keys; a key that both contexts give is refused rather than one
    silently winning."""
    task = _flat(call, arguments, "task_context")
    both = sorted(k for k in task if k in environment)
    if both:
        raise call.refuse(codes.INVALID_ARGUMENT, "context_overlap", field="task_context",
                          keys=[shown(k) for k in both])
    return task


def _flat(call: Call, arguments: dict, key: str) -> dict:
    flat, twice = applicability.flatten(arguments.get(key))
    if twice:
        raise call.refuse(codes.INVALID_ARGUMENT, "scope_context_duplicate", field=key,
                          keys=[shown(k) for k in twice])
    return flat
