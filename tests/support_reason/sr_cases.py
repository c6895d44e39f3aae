"""The support_reason case corpus, read once per test module: `{file stem: context}` per group.

Two groups: `support_reason` (realistic knowledge-gateway v1 contexts) and
`support_reason_malformed` (contexts that break the contract and must explain as `unknown`).
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

import jsonschema

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases"
CONTRACT = "knowledge-gateway.v1.schema.json"
SUPPORT_REASON_REF = f"{CONTRACT}#/$defs/support_reason"


@lru_cache(maxsize=None)
def group(name: str) -> MappingProxyType:
    """Every `tests/cases/<name>/*.json`, parsed, by file stem in sorted order."""
    files = sorted((CASES / name).glob("*.json"))
    return MappingProxyType({p.stem: json.loads(p.read_text(encoding="utf-8")) for p in files})


def corpus() -> MappingProxyType:
    return group("support_reason")


def malformed() -> MappingProxyType:
    return group("support_reason_malformed")


def case_path(name: str, stem: str) -> Path:
    return CASES / name / f"{stem}.json"


def reason_validator(book) -> jsonschema.protocols.Validator:
    """Validator of `$defs.support_reason`, resolved through the rulebook's schema registry."""
    return jsonschema.Draft202012Validator({"$ref": SUPPORT_REASON_REF}, registry=book.schemas.registry)


def context_validator(book) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(book.schemas.get(CONTRACT), registry=book.schemas.registry)


def status_codes(book) -> list[str]:
    """The codes the support_reason table marks as explaining a status (role: status), in priority order."""
    table = book.table("support_reason")
    return [c for c in table.priority if table.codes[c].get("role") == "status"]


def diagnostic_codes(book) -> list[str]:
    table = book.table("support_reason")
    return [c for c in table.priority if table.codes[c].get("role") == "diagnostic"]


def reason_codes(book) -> list[str]:
    """The 11 reason codes: the table's priority list (the reserved `unknown` is not in it)."""
    return list(book.table("support_reason").priority)
