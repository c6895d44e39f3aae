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

KEYS = ("from", "where", "pluck", "format", "distinct")


def _generate(source: str, cond: Condition | None, pluck: Any, tmpl: Template | None,
              distinct: bool) -> Callable[[Any], list]:
    """One generated loop: `evidence[].supports` nests a loop per `[]`, then filter and pick."""
    gen = Gen()
    segments = source.split("[].")
    lines, var, pad = [], "v", "    "
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
            lines.append(f"{pad}x = {gen.get('i', path_parts(p))}\n"
                         f"{pad}if x is not M and x is not None:\n{pad}    out.append(x)\n{pad}    continue\n")
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
    for key, path in paths:
        if not isinstance(path, str) or (path != "." and "" in path.split(".")):
            faults.append(Fault("bad-field", f"binding '{name}': {key} must be a dotted path, got {path!r}",
                                where + (key,)))
    cond = compile_condition(spec["where"], where + ("where",), faults) if "where" in spec else None
    tmpl = compile_template(spec["format"], where + ("format",), faults) if "format" in spec else None
    distinct = spec.get("distinct", False) is True
    if len(faults) != before:
        return None
    select = _generate(spec["from"], cond, pluck, tmpl, distinct)
    return Binding(name, spec, select, cond, tmpl)
