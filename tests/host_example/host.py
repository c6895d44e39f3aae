"""A small host of the library, as a host's own code reads the answers: mypy checks it against the
library's published types (py.typed, groundrules.results)."""
from __future__ import annotations

from typing import Any

from groundrules import Caller, Service, explain, fold, lock, verify
from groundrules.results import Envelope, Fold, Lock, SupportReason, VerifyReport


def primary_reason(context: dict[str, Any]) -> str:
    reason: SupportReason = explain(context)
    first = reason["reasons"][0]
    return f"{reason['primary']}: {first['detail']} ({', '.join(first.get('slots', []))})"


def phones(message: dict[str, Any]) -> list[str]:
    found: list[Lock] = lock(message)
    return [str(c["normalized_value"]) for c in found if c["valid"] and c["kind"] == "phone"]


def slots(payload: dict[str, Any]) -> dict[str, Any]:
    folded: Fold = fold(payload)
    return folded["state"]


def verified(request: dict[str, Any], schema: dict[str, Any], candidate: dict[str, Any]) -> bool:
    report: VerifyReport = verify(request, schema, candidate)
    return report["ok"] and report["error"] is None


def refusal_code(service: Service, caller: Caller) -> str | None:
    envelope: Envelope = service.call("lock_message", {"message": {"id": "m", "role": "user", "content": ""}}, caller)
    error = envelope["error"]
    return None if envelope["ok"] or error is None else error["code"]
