"""Named selections over the evaluated value that outputs and templates refer to.

`{from: missing, where: COND, pluck: label, distinct: true}` yields a list; `format: TEMPLATE`
renders each selected item instead of plucking. Declared once per table, computed only for the
rows that fire.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .conditions import MISSING, Condition, compile_condition, compile_path
from .errors import Fault, did_you_mean
from .templates import Template, compile_template

KEYS = ("from", "where", "pluck", "format", "distinct")


def _list_getter(path: str) -> Callable[[Any], list]:
    """`evidence[].supports` flattens: every item's `supports` list, concatenated in order."""
    head, *rest = path.split("[].")
    get = compile_path(head)
    if not rest:
        return lambda value: items if type(items := get(value)) is list else []
    inner = _list_getter("[].".join(rest))

    def flat(value: Any) -> list:
        items = get(value)
        if type(items) is not list:
            return []
        return [x for item in items for x in inner(item)]
    return flat


def _plucker(spec: Any) -> Callable[[Any], Any] | None:
    """`pluck: label` or `pluck: [label, slot]` (the first present, non-null one)."""
    if spec is None:
        return None
    getters = [compile_path(p) for p in ([spec] if isinstance(spec, str) else spec)]
    if len(getters) == 1:
        get = getters[0]
        return lambda item: MISSING if (v := get(item)) is None else v

    def pluck(item: Any) -> Any:
        for get in getters:
            v = get(item)
            if v is not MISSING and v is not None:
                return v
        return MISSING
    return pluck


@dataclass(frozen=True)
class Binding:
    name: str
    source: dict
    select: Callable[[Any], list]
    where_cond: Condition | None
    item_template: Template | None

    def fields(self, where: tuple) -> list[tuple[str, tuple]]:
        """Every (field path, key path) the binding reads."""
        base = self.source["from"]
        out = [(base, where + ("from",))]
        if self.where_cond is not None:
            out += self.where_cond.fields(base + "[].")
        plucked = self.source.get("pluck", [])
        for name in [plucked] if isinstance(plucked, str) else plucked:
            if name != ".":
                out.append((f"{base}[].{name}", where + ("pluck",)))
        if self.item_template is not None:
            out += [(f"{base}[].{n}", where + ("format",)) for n in self.item_template.names]
        return out


def compile_binding(name: str, spec: Any, where: tuple, faults: list[Fault]) -> Binding | None:
    before = len(faults)
    if not isinstance(spec, dict) or not isinstance(spec.get("from"), str):
        faults.append(Fault("bad-binding", f"binding '{name}' needs 'from: <list field>'", where))
        return None
    for key in spec:
        if key not in KEYS:
            faults.append(Fault("unknown-key", f"binding '{name}' has unknown key '{key}'",
                                where + (key,), did_you_mean(key, KEYS)))
    if "pluck" in spec and "format" in spec:
        faults.append(Fault("bad-binding", f"binding '{name}' has both 'pluck' and 'format'", where,
                            "keep one: pluck a field, or format each item"))
    get_list = _list_getter(spec["from"])
    cond = compile_condition(spec["where"], where + ("where",), faults) if "where" in spec else None
    pluck = _plucker(spec.get("pluck"))
    tmpl = compile_template(spec["format"], where + ("format",), faults) if "format" in spec else None
    distinct = spec.get("distinct", False) is True
    if len(faults) != before:
        return None
    test = cond.test if cond else None

    def select(value: Any) -> list:
        items = get_list(value)
        chosen = items if test is None else [i for i in items if test(i)]
        if pluck is not None:
            chosen = [v for v in map(pluck, chosen) if v is not MISSING]
        elif tmpl is not None:
            chosen = [tmpl.render(i) for i in chosen]
        elif chosen is items:
            chosen = list(items)
        if distinct:
            seen: list = []
            for v in chosen:
                if v not in seen:
                    seen.append(v)
            chosen = seen
        return chosen
    return Binding(name, spec, select, cond, tmpl)
