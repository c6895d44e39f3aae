"""The time the tables' own patterns may run per search is the limits table's
(patterns.table_budget_ms), bound into everything a table compiles that searches: a condition's
`matches` (decision tables, lock rules, transitions, claim maps, catalogues), a lock table's rules,
a verifier phrase pattern, a claim map's project pattern. The compiled rulebook is walked for every
such object, on both ways a rulebook compiles its tables: all at once on a first load, and one at a
time on first use from a cached verdict."""
from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from groundrules import load_rulebook
from groundrules.core import rulecache
from groundrules.locks.rules import NO_RULES
from table_edits import TableFile

ROOT = Path(__file__).resolve().parents[2]
SEARCHING = {"Condition", "Pattern", "Rules", "ProjectSource"}   # the compiled objects that search


def budgets(obj, found: Counter, seen: set) -> Counter:
    """(type name, budget_s) of every compiled object below `obj` that searches with a budget."""
    if id(obj) in seen or isinstance(obj, (str, bytes, int, float, bool, type(None))) or callable(obj):
        return found
    seen.add(id(obj))
    if dataclasses.is_dataclass(obj):
        name = type(obj).__name__
        if hasattr(obj, "budget_s") and not (
                (name == "Condition" and obj.op != "matches") or (name == "ProjectSource" and obj.pattern is None)
                or obj is NO_RULES):
            found[(name, obj.budget_s)] += 1
        for f in dataclasses.fields(obj):
            if f.name not in ("memo", "source"):
                budgets(getattr(obj, f.name), found, seen)
    elif isinstance(obj, Mapping):
        for value in obj.values():
            budgets(value, found, seen)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for value in obj:
            budgets(value, found, seen)
    return found


def test_every_search_a_table_compiles_takes_the_limits_tables_budget(tables_copy):
    root = tables_copy
    limits_file = TableFile(root / "rules" / "limits.yaml")
    shipped = limits_file.at("patterns", "table_budget_ms")
    edited = shipped + 7
    limits_file.write_scalar(("patterns", "table_budget_ms"), edited)
    # a project named by a pattern over a group claim (the shipped claim map names none)
    TableFile(root / "rules" / "oauth_claims.yaml").insert_after(
        ("projects", 0), "- claim: groups\n  pattern: '^gr-(?P<project>[a-z0-9_]+)$'")
    at_once = load_rulebook(root, cache=False)
    load_rulebook(root)                            # a clean load leaves a verdict (when a cache is kept)
    on_first_use = load_rulebook(root)
    if rulecache.folder() is not None:             # compiled on first use, not at load
        assert not isinstance(on_first_use.tables, MappingProxyType)
    for book in (at_once, on_first_use):
        found = budgets(dict(book.tables), Counter(), set())
        assert {name for name, _ in found} == SEARCHING, found
        assert {budget for _, budget in found} == {edited / 1000}, found
    shipped_book = load_rulebook(ROOT)
    assert {budget for _, budget in budgets(dict(shipped_book.tables), Counter(), set())} == {shipped / 1000}
