"""Shared by the evidence tests: the corpus groups and a fold that returns data or the refusal."""
from __future__ import annotations

import json
from pathlib import Path

from groundrules import GroundrulesError, fold

CASES = Path(__file__).resolve().parent.parent / "cases" / "fold"
GROUPS = sorted(p.stem for p in CASES.glob("*.json"))


def group(name: str) -> dict:
    return json.loads((CASES / f"{name}.json").read_text(encoding="utf-8"))


def outcome(payload, book) -> dict:
    """{"data": ...} or {"error": ...}: what a host sees, minus the envelope."""
    try:
        return {"data": fold(payload, book)}
    except GroundrulesError as exc:
        return {"error": exc.as_dict()}
