"""Named selections over the evaluated value that outputs and templates refer to.

`{from: missing, where: COND, pluck: label, distinct: true}` yields a list; `format: TEMPLATE`
renders each selected item instead of plucking. Declared once per table, computed only for the
rows that fire, at most once per evaluation.
"""
from __future__ import annotations

import json
from typing import Any, NamedTuple

from .condgen import Gen
from .conditions import Condition, compile_condition, path_parts
from .errors import Fault, did_you_mean
from .templates import Template, compile_template, emit

KEYS = ("from", "where", "pluck", "lookup", "format", "distinct")


def selectors(bindings: dict[str, "Binding"], gen: Gen) -> dict[str, str]:
    """Binding name -> the name of a function `select(v, c, n)` added to `gen`'s helpers, which
    stores the selection in the evaluation's cache `c` under the binding's name (`n`: the caller's
    now, for date filters). Bindings over the same
    list with the same filter share one loop (`gaps` and `gap_ids` walk `missing` once), which
    stores every selection of its group."""
    groups: dict[tuple, list[Binding]] = {}
    for b in bindings.values():
        key = (b.source["from"], json.dumps(b.source.get("where"), sort_keys=True, ensure_ascii=False))
        groups.setdefault(key, []).append(b)
    out: dict[str, str] = {}
    for members in groups.values():
        name = _generate(members, gen)
        out.update((m.name, name) for m in members)
    return out


def _generate(members: list["Binding"], gen: Gen) -> str:
    """One generated loop: `evidence[].supports` nests a loop per `[]`, then filter once and pick
    for every member; a `lookup` maps each picked string through a key -> value table read from the
    input, built once per evaluation and kept in `c` for every binding using the same one."""
    first = members[0]
    segments = first.source["from"].split("[].")
    lines, var, pad = [], "v", "    "
    for m, b in enumerate(members):
        lines.append(f"    o{m} = []\n")
        lookup = b.source.get("lookup")
        if lookup is not None:
            key = repr(("lookup", lookup["from"], lookup["key"], lookup["value"]))
            lines.append(
                f"    lk{m} = c.get({key}, M)\n    if lk{m} is M:\n"
                f"        lk{m} = c[{key}] = {{}}\n        rs = {gen.get('v', path_parts(lookup['from']))}\n"
                f"        if rs.__class__ is list:\n            for r in rs:\n"
                f"                k = {gen.get('r', path_parts(lookup['key']))}\n"
                f"                w = {gen.get('r', path_parts(lookup['value']))}\n"
                f"                if k.__class__ is str and w is not M and w is not None and k not in lk{m}:\n"
                f"                    lk{m}[k] = w\n")
    for n, segment in enumerate(segments):
        items, item = f"_l{n}", ("i" if n == len(segments) - 1 else f"_j{n}")
        lines.append(f"{pad}{items} = {gen.get(var, path_parts(segment))}\n")
        lines.append(f"{pad}if {items}.__class__ is list:\n{pad}    for {item} in {items}:\n")
        var, pad = item, pad + "        "
    if first.where_cond is not None:
        lines.append(f"{pad}if not {gen.expr(first.where_cond, 'i')}:\n{pad}    continue\n")
    for m, b in enumerate(members):
        pluck = b.source.get("pluck")
        if pluck is not None:
            picks = [pluck] if isinstance(pluck, str) else pluck
            lines.append(f"{pad}x = {gen.get('i', path_parts(picks[0]))}\n")
            for p in picks[1:]:         # the first field that holds something
                lines.append(f"{pad}if x is M or x is None:\n{pad}    x = {gen.get('i', path_parts(p))}\n")
            mapped = f"lk{m}.get(x, x) if x.__class__ is str else x" if "lookup" in b.source else "x"
            lines.append(f"{pad}if x is not M and x is not None:\n{pad}    o{m}.append({mapped})\n")
        elif b.item_template is not None:
            text = emit(b.item_template.parts, gen, lambda n: gen.get("i", path_parts(n)), lines, pad)
            lines.append(f"{pad}o{m}.append({text})\n")
        else:
            lines.append(f"{pad}o{m}.append(i)\n")
    for m, b in enumerate(members):
        if b.source.get("distinct", False) is True:
            lines.append(f"    o{m} = {gen.const(distinct)}(o{m})\n")
        lines.append(f"    c[{b.name!r}] = o{m}\n")
    name = gen.fresh("_select")
    gen.helpers.append(f"def {name}(v, c, n=None):\n" + "".join(lines))
    return name


def distinct(items: list) -> list:
    """`items` without repeats, the first of equal ones kept, in one pass: the list scan it replaces
    cost a caller's 30,000 `missing` slots 1.6 s. Equal means Python's == (as `x in seen` did):
    1, 1.0 and True are one value, a dict equals one with the same pairs in any order."""
    seen: set = set()
    out = []
    for item in items:
        key = _hashable(item)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _hashable(value: Any) -> Any:
    """A key equal to another exactly when the values are == (JSON values: dicts, lists, scalars)."""
    if isinstance(value, dict):
        return ("d", frozenset((k, _hashable(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("l", tuple(_hashable(v) for v in value))
    return value


class Binding(NamedTuple):
    name: str
    source: dict
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


def compile_binding(name: str, spec: Any, where: tuple, faults: list[Fault], budget_s: float) -> Binding | None:
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
    cond = (compile_condition(spec["where"], where + ("where",), faults, budget_s=budget_s, eager=False)
            if "where" in spec else None)
    tmpl = compile_template(spec["format"], where + ("format",), faults) if "format" in spec else None
    if len(faults) != before:
        return None
    if lookup is not None and pluck is None:
        faults.append(Fault("bad-binding", f"binding '{name}' has 'lookup' but no 'pluck'", where + ("lookup",),
                            "lookup maps plucked values: add pluck: <field>"))
        return None
    return Binding(name, spec, cond, tmpl)
