"""Shared by the verification tests: this part's rulebook and its case corpus
(tests/cases/verify/<group>/*.json, each a CLI payload, some with what they expect)."""
from __future__ import annotations

import json
from pathlib import Path

from groundrules import Caller, Service, load_rulebook

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases" / "verify"
VERIFY_TABLES = ["rules/verify_issues.yaml", "rules/prohibition_phrases.yaml",
                 "rules/intent_heuristics.yaml", "rules/value_derivations.yaml", "rules/instances",
                 "rules/roles.yaml", "rules/messages.yaml", "locks"]


def tool(payload, book, report: bool = False) -> dict:
    """The verify_extraction tool's envelope for a {request, schema | instance, candidate} payload, as
    every transport gets it (with `report`, data is the whole report)."""
    arguments = dict(payload, report=True) if report and isinstance(payload, dict) else payload
    return Service(book).call("verify_extraction", arguments, Caller("tester", "agent"))


def load_verify_book():
    """Only this part's tables, so the tests do not depend on other parts' tables."""
    return load_rulebook(ROOT, files=[ROOT / f for f in VERIFY_TABLES])


def case_groups() -> list[str]:
    return sorted(p.name for p in CASES.iterdir() if p.is_dir())


def _read(group: str) -> dict:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted((CASES / group).glob("*.json"))}


def cases(group: str) -> dict:
    """Each case's payload (a case may say what it expects under `expect`, which is no argument)."""
    return {name: {k: v for k, v in doc.items() if k != "expect"} for name, doc in _read(group).items()}


def expectations(group: str) -> dict:
    """name -> {ok, issues: [code of the error's issues, in order], warnings: [code, ...], why?} of
    the group's cases that say what they expect."""
    return {name: doc["expect"] for name, doc in _read(group).items() if "expect" in doc}


def all_cases() -> dict:
    return {f"{g}/{name}": payload for g in case_groups() for name, payload in cases(g).items()}
