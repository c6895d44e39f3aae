"""The shapes of what the public functions return, for a host's type checker.

Each is the JSON contract under `schemas/` written as a TypedDict (the schema stays the contract;
these let mypy or pyright check a host's `reason["primary"]` against it). Deeper parts whose shape
is a tool's business (a fold's evidence entries, a verification's result) are typed as JSON objects.
"""
from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

JSON = Any
JSONObject = dict[str, Any]


class Locator(TypedDict):
    message_id: str
    start: int
    end: int


class Lock(TypedDict):
    """One candidate of `lock(message)` (evidence.v1 `$defs/lock`)."""

    id: str
    pattern: str
    kind: str
    quote: str | JSONObject              # a tombstone once redacted
    locator: Locator
    normalized_value: str | JSONObject | None
    valid: bool
    invalid_reason: str | None


class Reason(TypedDict):
    """One reason of a support_reason (knowledge-gateway.v1 `$defs/support_reason_item`)."""

    code: str
    label: str
    detail: str
    slots: NotRequired[list[str]]
    engines: NotRequired[list[str]]


class SupportReason(TypedDict):
    """`explain(ctx)` (knowledge-gateway.v1 `$defs/support_reason`)."""

    primary: str
    primary_label: str
    reasons: list[Reason]


class Fold(TypedDict):
    """`fold(payload)` (evidence.v1 `$defs/output`)."""

    evidence: list[JSONObject]
    events: list[JSONObject]
    state: JSONObject


class Issue(TypedDict):
    code: str
    category: str
    path: str
    message: str


class VerifyError(TypedDict):
    code: str
    stage: str
    message: str
    issues: list[Issue]
    partialResult: NotRequired[JSONObject]


class VerifyReport(TypedDict):
    """`verify(request, schema, candidate)` (verify.v1 `$defs/report`)."""

    ok: bool
    data: JSONObject | None
    error: VerifyError | None
    repairable: bool
    warnings: list[Issue]
    grounding: list[JSONObject]


class Attempt(TypedDict):
    attempt: int
    feedback: list[Issue]
    candidate: JSON
    report: VerifyReport


class Repair(TypedDict):
    """`repair_loop(...)` (verify.v1 `$defs/repair`)."""

    ok: bool
    stopped: Literal["verified", "not_repairable", "max_attempts"]
    attempts: int
    final: VerifyReport
    history: list[Attempt]


class Warning(TypedDict):
    code: str
    message: str


class Error(TypedDict):
    """A refusal: its stable code, a message that leaks no path, and what it names (`field`, …)."""

    code: str
    message: str


class Envelope(TypedDict):
    """`Service.call(tool, arguments, caller)` (envelope.v1): every answer of every transport."""

    ok: bool
    data: JSON
    warnings: list[Warning]
    error: Error | None
    rulebook: str | None
    decision: NotRequired[str]
