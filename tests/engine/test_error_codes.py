"""One error registry (core/codes.py): every code a host may branch on is a named constant there, in
step with the contracts and tables that also declare codes, and spelled nowhere else."""
from __future__ import annotations

import ast
import collections
import json
import re
from pathlib import Path

import yaml

import engine_source

from groundrules.core import codes

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "engine" / "groundrules"
REGISTRY = {name: value for name, value in vars(codes).items() if name.isupper() and isinstance(value, str)}
CODE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$")
# the calls whose first argument is a refusal's code: the error root, a part's refuse/error helpers,
# a subclass handing its code to the root
RAISERS = {"GroundrulesError", "StorageFailure", "refuse", "error", "__init__"}


def declared() -> dict[str, set[str]]:
    """Where else codes are declared -> the codes declared there."""
    envelope = json.loads((ROOT / "schemas" / "envelope.v1.schema.json").read_text(encoding="utf-8"))
    ledger = json.loads((ROOT / "schemas" / "finding-ledger.v1.schema.json").read_text(encoding="utf-8"))
    refusals = yaml.safe_load((ROOT / "rules" / "evidence_refusals.yaml").read_text(encoding="utf-8"))
    issues = yaml.safe_load((ROOT / "rules" / "verify_issues.yaml").read_text(encoding="utf-8"))
    return {"envelope.v1 surface_error_code": {c["const"] for c in envelope["$defs"]["surface_error_code"]["oneOf"]},
            "finding-ledger.v1 error_code": set(ledger["$defs"]["error_code"]["enum"]),
            "rules/evidence_refusals.yaml codes": set(refusals["codes"]),
            "rules/verify_issues.yaml errors": set(issues["errors"])}


def raised() -> dict[str, list[str]]:
    """Code literal -> the places (floor/module:line) a raise site spells it as a string."""
    out = collections.defaultdict(list)
    for path, _, nodes in engine_source.modules():
        for node in nodes:
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            first = node.args[0]
            if name in RAISERS and isinstance(first, ast.Constant) and isinstance(first.value, str) \
                    and CODE.match(first.value):
                out[first.value].append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return out


def test_each_constant_is_named_as_it_is_spelled():
    assert REGISTRY and all(name == value for name, value in REGISTRY.items())


def test_every_code_the_contracts_and_tables_declare_is_in_the_registry():
    missing = {where: sorted(found - set(REGISTRY)) for where, found in declared().items() if found - set(REGISTRY)}
    assert missing == {}


def test_every_code_a_raise_site_spells_is_in_the_registry():
    unknown = {code: places for code, places in raised().items() if code not in REGISTRY}
    assert unknown == {}


def test_the_registry_holds_no_code_nobody_gives():
    """Each constant is declared by a contract or table, or used by the package by name or by literal."""
    used = set().union(*declared().values()) | set(raised())
    for path in PACKAGE.rglob("*.py"):
        if path.name != "codes.py":
            used |= set(re.findall(r"\bcodes\.([A-Z][A-Z0-9_]+)", path.read_text(encoding="utf-8")))
    assert sorted(set(REGISTRY) - used) == []


def test_no_module_spells_a_code_as_a_string():
    """Not at a raise site, and nowhere else either (a comparison, an error object)."""
    found = []
    for path, _, nodes in engine_source.modules():
        if path == PACKAGE / "core" / "codes.py":
            continue
        for node in nodes:
            if isinstance(node, ast.Constant) and node.value in REGISTRY:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.value}")
    assert found == []


def test_each_distinct_failure_has_one_class_name():
    """Two exception classes of one name (there were two PatternTimeout) read as one failure."""
    names = collections.defaultdict(list)
    for path, _, nodes in engine_source.modules():
        for node in nodes:
            if isinstance(node, ast.ClassDef) and any(
                    (getattr(b, "id", None) or getattr(b, "attr", "")).endswith(("Error", "Exception", "Timeout", "Failure"))
                    or getattr(b, "id", None) in ("GroundrulesError", "TimeoutError", "Exception")
                    for b in node.bases):
                names[node.name].append(str(path.relative_to(PACKAGE)))
    assert {name: where for name, where in names.items() if len(where) > 1} == {}
