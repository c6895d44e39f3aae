"""Value derivations (`rules/value_derivations.yaml`): how a field's value follows from its quote.

A field's kind is what its schema declares under one of the table's keywords (x-kind, format); a
kind derives values through a lock table (every candidate of one lock kind in the quote) or
through a normalizer (patterns with named groups and a value template). `Derivations.derive`
answers the values a quote derives, or None when the kind's table reads nothing there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator

import regex

from ..core.examples import ExampleResult
from .patterns import Pattern, compile_pattern, duplicate_ids

if TYPE_CHECKING:
    from ..core.tables import CompileContext

KIND = "value_derivations"
_FIELD = regex.compile(r"\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<filters>(?:\|[a-z0-9]+)*)\}")


def _pad2(s: str) -> str:
    return s.zfill(2)


def _plus12(s: str) -> str:
    """An afternoon hour (下午3点 -> 15); 12 stays 12."""
    return str(int(s) + 12) if s.isdigit() and int(s) < 12 else s


# filter name -> str -> str: the closed set a value template may name
FILTERS: dict[str, Callable[[str], str]] = {
    "pad2": _pad2,
    "digits": lambda s: "".join(c for c in s if c.isdigit()),
    "int": lambda s: str(int(s)) if s.isdigit() else s,
    "plus12": lambda s: _pad2(_plus12(s)),
}


@dataclass(frozen=True)
class Reading:
    pattern: Pattern
    template: tuple            # (literal, group or None, filters), in order
    defaults: dict
    implies: dict

    def values(self, text: str) -> list[str]:
        out = []
        for _, _, m in self.pattern.spans(text):
            groups = {k: v for k, v in m.groupdict().items() if v is not None}
            for group, sets in self.implies.items():
                if group in groups:
                    groups.update(sets)
            parts = []
            for literal, name, filters in self.template:
                parts.append(literal)
                if name is not None:
                    value = groups.get(name, self.defaults.get(name, ""))
                    for f in filters:
                        value = FILTERS[f](value)
                    parts.append(value)
            out.append("".join(parts))
        return out


@dataclass(frozen=True)
class Normalizer:
    id: str
    type: str                  # string | number
    readings: tuple
    examples: tuple
    where: tuple

    def values(self, text: str) -> list:
        """Every value the readings derive from `text`, in text order, each once."""
        found: list = []
        for r in self.readings:
            found += [(m.start(), v) for m, v in zip(r.pattern.regex.finditer(text), r.values(text))]
        found.sort(key=lambda p: p[0])
        out: list = []
        for _, v in found:
            typed = _number(v) if self.type == "number" else v
            if typed is not None and typed not in out:
                out.append(typed)
        return out


@dataclass(frozen=True)
class Kind:
    id: str
    lock_table: str | None
    lock_kind: str | None
    normalizer: Normalizer | None
    no_reading: str            # refuse | unchecked


@dataclass(frozen=True)
class Derivations:
    kind: str
    id: str
    file: str
    keywords: tuple
    by_name: dict              # a keyword's value -> Kind
    normalizers: tuple

    def kind_of(self, schema: Any) -> Kind | None:
        """The kind a field's schema declares, or None."""
        if not isinstance(schema, dict):
            return None
        for keyword in self.keywords:
            name = schema.get(keyword)
            if isinstance(name, str):
                return self.by_name.get(name)
        return None

    def lock_tables(self) -> tuple:
        return tuple(dict.fromkeys(k.lock_table for k in self.by_name.values() if k.lock_table))

    def check_examples(self) -> Iterator[ExampleResult]:
        for n in self.normalizers:
            base = f"{self.id}:{n.id}"
            if not any(ex["values"] for ex in n.examples):
                yield ExampleResult(base, False, "normalizer has no positive example (values: [...])", n.where + ("id",))
            if not any(not ex["values"] for ex in n.examples):
                yield ExampleResult(base, False, "normalizer has no negative example (values: [])", n.where + ("id",))
            for i, ex in enumerate(n.examples, 1):
                got = n.values(ex["text"])
                ok = got == list(ex["values"])
                yield ExampleResult(f"{base}:{i}", ok, "" if ok else f"expected {ex['values']}, got {got}",
                                    n.where + ("examples", i - 1))


def _number(text: str) -> int | float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() else value


def _template(text: str, groups: tuple, where: tuple, ctx: CompileContext) -> tuple:
    out, at = [], 0
    for m in _FIELD.finditer(text):
        filters = tuple(f for f in m.group("filters").split("|") if f)
        for f in filters:
            if f not in FILTERS:
                ctx.fault("unknown-filter", f"filter '{f}' is not one of {', '.join(FILTERS)}", where)
        if m.group("name") not in groups:
            ctx.fault("missing-group", f"the template names '{m.group('name')}', which the pattern does not "
                      "capture", where, f"capture it with (?P<{m.group('name')}>...)")
        out.append((text[at:m.start()], m.group("name"), filters))
        at = m.end()
    out.append((text[at:], None, ()))
    return tuple(out)


def compile_derivations(data: dict, ctx: CompileContext) -> Derivations | None:
    duplicate_ids(data["normalizers"], "normalizers", ctx)
    duplicate_ids(data["kinds"], "kinds", ctx)
    normalizers: dict = {}
    for i, raw in enumerate(data["normalizers"]):
        where = ("normalizers", i)
        readings = []
        for j, r in enumerate(raw["readings"]):
            pattern = compile_pattern(r, where + ("readings", j), ctx)
            if pattern is None:
                continue
            groups = tuple(pattern.regex.groupindex)
            readings.append(Reading(pattern, _template(r["value"], groups, where + ("readings", j, "value"), ctx),
                                    dict(r.get("defaults", {})), {k: dict(v) for k, v in r.get("implies", {}).items()}))
        normalizers[raw["id"]] = Normalizer(raw["id"], raw["type"], tuple(readings), tuple(raw["examples"]), where)
    by_name: dict = {}
    for i, raw in enumerate(data["kinds"]):
        where = ("kinds", i)
        normalizer = None
        if "normalizer" in raw:
            normalizer = normalizers.get(raw["normalizer"])
            if normalizer is None:
                ctx.fault("unknown-normalizer", f"normalizer '{raw['normalizer']}' is not defined in this table",
                          where + ("normalizer",), "name one of: " + ", ".join(normalizers))
        lock = raw.get("lock", {})
        kind = Kind(raw["id"], lock.get("table"), lock.get("kind"), normalizer, raw["no_reading"])
        for j, name in enumerate(raw["names"]):
            if name in by_name:
                ctx.fault("duplicate-name", f"'{name}' already names kind '{by_name[name].id}'",
                          where + ("names", j), "a keyword value names one kind")
            by_name.setdefault(name, kind)
    if any(f.severity == "error" for f in ctx.faults):
        return None
    return Derivations(KIND, data["id"], ctx.source.file, tuple(data["keywords"]), by_name,
                       tuple(normalizers.values()))
