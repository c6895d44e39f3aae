"""Named selections over the evaluated value that outputs and templates refer to.

`{from: missing, where: COND, pluck: label, distinct: true}` yields a list; `format: TEMPLATE`
renders each selected item instead of plucking. Declared once per table, computed only for the
rows that fire.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .condgen import Gen
from .conditions import Condition, compile_condition, path_parts
from .errors import Fault, did_you_mean
from .templates import Template, compile_template

KEYS = ("from", "where", "pluck", "lookup", "format", "distinct")


def _generate(source: str, cond: Condition | None, pluck: Any, tmpl: Template | None,
              distinct: bool, lookup: dict | None = None) -> Callable[[Any], list]:
    """One generated loop: `evidence[].supports` nests a loop per `[]`, then filter and pick;
    `lookup` then maps each picked string through a key -> value table read from the input."""
    gen = Gen()
    segments = source.split("[].")
    lines, var, pad = [], "v", "    "
    if lookup is not None:
        lines.append(
            f"    lk = {{}}\n    rs = {gen.get('v', path_parts(lookup['from']))}\n"
            f"    if rs.__class__ is list:\n        for r in rs:\n"
            f"            k = {gen.get('r', path_parts(lookup['key']))}\n"
            f"            w = {gen.get('r', path_parts(lookup['value']))}\n"
            f"            if k.__class__ is str and w is not M and w is not None and k not in lk:\n"
            f"                lk[k] = w\n")
    for n, segment in enumerate(segments):
        items, item = f"_l{n}", ("i" if n == len(segments) - 1 else f"_j{n}")
        lines.append(f"{pad}{items} = {gen.get(var, path_parts(segment))}\n")
        lines.append(f"{pad}if {items}.__class__ is list:\n{pad}    for {item} in {items}:\n")
        var, pad = item, pad + "        "
    if cond is not None:
        lines.append(f"{pad}if not {gen.expr(cond, 'i')}:\n{pad}    continue\n")
    if pluck is not None:
        picks = [pluck] if isinstance(pluck, str) else pluck
        for p in picks:
            mapped = "lk.get(x, x) if x.__class__ is str else x" if lookup is not None else "x"
            lines.append(f"{pad}x = {gen.get('i', path_parts(p))}\n"
                         f"{pad}if x is not M and x is not None:\n{pad}    out.append({mapped})\n"
                         f"{pad}    continue\n")
    elif tmpl is not None:
        lines.append(f"{pad}out.append({gen.const(tmpl.render)}(i))\n")
    else:
        lines.append(f"{pad}out.append(i)\n")
    tail = "    return out\n"
    if distinct:
        tail = "    seen = []\n    for x in out:\n        if x not in seen:\n            seen.append(x)\n    return seen\n"
    return gen.build_function("def select(v):\n    out = []\n" + "".join(lines) + tail, "select")


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
        lookup = self.source.get("lookup")
        if lookup is not None:
            out += [(lookup["from"], where + ("lookup",))]
            out += [(f"{lookup['from']}[].{lookup[k]}", where + ("lookup", k)) for k in ("key", "value")]
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
    paths = [("from", spec["from"].replace("[].", "."))]
    pluck = spec.get("pluck")
    paths += [("pluck", p) for p in ([pluck] if isinstance(pluck, str) else pluck or [])]
    lookup = spec.get("lookup")
    if lookup is not None:
        paths += [("lookup", lookup.get(k)) for k in ("from", "key", "value")] if isinstance(lookup, dict) \
            else [("lookup", lookup)]
    for key, path in paths:
        if not isinstance(path, str) or (path != "." and "" in path.split(".")):
            faults.append(Fault("bad-field", f"binding '{name}': {key} must be a dotted path, got {path!r}",
                                where + (key,)))
    cond = compile_condition(spec["where"], where + ("where",), faults) if "where" in spec else None
    tmpl = compile_template(spec["format"], where + ("format",), faults) if "format" in spec else None
    distinct = spec.get("distinct", False) is True
    if len(faults) != before:
        return None
    if lookup is not None and pluck is None:
        faults.append(Fault("bad-binding", f"binding '{name}' has 'lookup' but no 'pluck'", where + ("lookup",),
                            "lookup maps plucked values: add pluck: <field>"))
        return None
    select = _generate(spec["from"], cond, pluck, tmpl, distinct, lookup)
    return Binding(name, spec, select, cond, tmpl)
