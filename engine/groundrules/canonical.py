"""Canonical JSON and the envelope every cross-process output wears.

Key order is the order in which our code builds each object (the schema's order), never sorted
and never set-derived, so identical input gives identical bytes in every process.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any


def dumps(obj: Any, *, indent: int | None = 2) -> str:
    """UTF-8 text, ensure_ascii=False, no NaN; the one serialiser for outputs and snapshots."""
    separators = (",", ": ") if indent is not None else (",", ":")
    return json.dumps(obj, ensure_ascii=False, indent=indent, separators=separators, allow_nan=False)


def digest(obj: Any) -> str:
    """Content hash of a JSON-able object, independent of dict insertion order."""
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def detached(value: Any) -> Any:
    """A copy of a JSON value that shares nothing mutable with the original: an output a host may
    edit without editing the input it came from (recursive: for values already depth-checked)."""
    if isinstance(value, dict):
        return {k: detached(v) for k, v in value.items()}
    if isinstance(value, list):
        return [detached(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """A copy in the exact JSON classes (dict, list, str, int, float) that generated code compares
    by class: a host's OrderedDict, str or IntEnum subclass reads as the JSON value it stands for."""
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    for cls in (str, int, float):
        if isinstance(value, cls):
            return cls(value)
    return value


def envelope(*, ok: bool, data: Any = None, warnings: list | None = None,
             error: dict | None = None, rulebook: str | None = None) -> dict:
    """The design's output envelope: {ok, data, warnings, error, rulebook}."""
    return {"ok": ok, "data": data, "warnings": list(warnings or []), "error": error,
            "rulebook": rulebook}
