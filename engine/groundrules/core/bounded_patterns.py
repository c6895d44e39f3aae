"""Caller-supplied patterns, run with a time budget.

A pattern a caller sends (an inline extension schema's `pattern` in verify_extraction) may
backtrack for ever on a short value (`^(a+)+$`). Every such pattern is compiled with the `regex`
module and searched with a timeout; a search past its budget is a refusal with the stable code
PATTERN_TIMEOUT, never a silent yes or no. The budget is the `limits` table's (patterns.budget_ms);
the registry sets it for each call (`budget`), so nothing here reads a table.
"""
from __future__ import annotations

import contextvars
from contextlib import contextmanager
from functools import lru_cache
from typing import TYPE_CHECKING, Iterator

from . import codes, cpu_clock
from .errors import GroundrulesError, echo
from .uniqueness import unique

if TYPE_CHECKING:
    import regex

DEFAULT_BUDGET_MS = 200
_BUDGET = contextvars.ContextVar("pattern_budget_ms", default=DEFAULT_BUDGET_MS)


class PatternTimeout(GroundrulesError):
    def __init__(self, pattern: str, budget_ms: int):
        super().__init__(codes.PATTERN_TIMEOUT, f"the pattern /{echo(pattern)}/ ran past its budget of {budget_ms} ms "
                         "on one value", hint="simplify the pattern (no nested repetition such as (a+)+)",
                         budget_ms=budget_ms)


@contextmanager
def budget(ms: int) -> Iterator[None]:
    """Run caller patterns in this block with `ms` milliseconds per search."""
    token = _BUDGET.set(ms)
    try:
        yield
    finally:
        _BUDGET.reset(token)


@lru_cache(maxsize=512)
def compiled(pattern: str) -> "regex.Pattern":
    """The pattern compiled with `regex` (raises regex.error when it does not compile); `regex` is
    imported here, on the first caller pattern, not by every process that sets a budget."""
    import regex
    return regex.compile(pattern)


def search(pattern: str, text: str) -> "regex.Match | None":
    """`re.search(pattern, text)` within the budget; PatternTimeout past it."""
    ms = _BUDGET.get()
    try:
        return cpu_clock.search(compiled(pattern), text, ms / 1000)
    except TimeoutError:
        raise PatternTimeout(pattern, ms) from None


def searcher(pattern: str):
    """A bounded `search` bound to `pattern`, compiled now (regex.error when it does not compile)."""
    bound = compiled(pattern)
    budget_of = _BUDGET.get

    def search_one(text: str):
        ms = budget_of()
        try:
            return cpu_clock.search(bound, text, ms / 1000)
        except TimeoutError:
            raise PatternTimeout(pattern, ms) from None
    return search_one


def bounded_validator(cls):
    """`cls` (a jsonschema validator class) whose pattern, patternProperties and additionalProperties
    search with the budget instead of stdlib `re` (jsonschema's own calls `re.search` unbounded),
    and whose uniqueItems takes one pass (jsonschema's compares every pair of unhashable items);
    `items` explains only the first item that fails. A subschema's `$schema` picks its dialect
    as in jsonschema, and the bounded variant of it: jsonschema's `evolve` would pick the stock
    class, and every subschema below it would search unbounded and compare items pairwise."""
    import attrs
    from jsonschema import ValidationError, validators

    def pattern(validator, patrn, instance, schema):
        if validator.is_type(instance, "string") and len(instance) > schema.get("maxLength", len(instance)):
            return                          # too long: maxLength refuses it before any search runs
        if validator.is_type(instance, "string") and search(patrn, instance) is None:
            yield ValidationError(f"{echo(instance)!r} does not match {echo(patrn)!r}")

    def pattern_properties(validator, properties, instance, schema):
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in properties.items():
            for key, value in instance.items():
                if search(patrn, key):
                    yield from validator.descend(value, subschema, path=key, schema_path=patrn)

    def additional_properties(validator, additional, instance, schema):
        if not validator.is_type(instance, "object"):
            return
        known, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
        extras = [k for k in instance if k not in known and not any(search(p, k) for p in patterns)]
        if validator.is_type(additional, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], additional, path=extra)
        elif not additional and extras:
            yield ValidationError("Additional properties are not allowed "
                                  f"({', '.join(echo(e) for e in extras[:3])} unexpected)")

    def unique_items(validator, wanted, instance, schema):
        if validator.is_type(instance, "array") and len(instance) > schema.get("maxItems", len(instance)):
            return
        if wanted and validator.is_type(instance, "array") and not unique(instance):
            yield ValidationError("the items are not unique")

    every_item = cls.VALIDATORS["items"]

    def first_bad_item(validator, items, instance, schema):
        """The errors of the first item that has any: a refusal names one place, and a caller's
        10,000 wrong items cost one item's explanation, not 10,000."""
        if validator.is_type(instance, "array") and len(instance) > schema.get("maxItems", len(instance)):
            return                          # too many: maxItems refuses them before any is read
        bad = None
        for error in every_item(validator, items, instance, schema):
            at = error.relative_path[0] if error.relative_path else None
            if bad is not None and at != bad:
                return
            bad = at
            yield error

    extended = validators.extend(cls, {"pattern": pattern, "patternProperties": pattern_properties,
                                       "additionalProperties": additional_properties, "uniqueItems": unique_items,
                                       "items": first_bad_item})
    stock_evolve = extended.evolve

    def evolve(self, **changes):
        evolved = stock_evolve(self, **changes)
        chosen = type(evolved)              # this class, or the stock one a `$schema` names
        if chosen is extended:
            return evolved
        return bounded(chosen)(**{f.alias: getattr(evolved, f.name) for f in attrs.fields(chosen) if f.init})

    extended.evolve = evolve                # the class is ours: made by `extend` just above
    return extended


@lru_cache(maxsize=16)
def bounded(cls):
    """The bounded variant of a jsonschema validator class, made once."""
    return bounded_validator(cls)
