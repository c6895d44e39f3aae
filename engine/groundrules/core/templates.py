"""Safe label and detail templates: `{name}` and `{name|filter:arg}`, nothing executable.

A name is a binding of the table or a dotted path into the evaluated value. `{{` and `}}` are
literal braces. Filters are a closed set (FILTERS); an unknown filter or name is a load error.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable


from .condgen import Gen
from .operators import MISSING, path_parts
from .errors import Fault, did_you_mean


def render_value(value: Any) -> str:
    """How a value reads inside a sentence: lists joined with 、, null and missing as ''."""
    cls = value.__class__
    if cls is str:
        return value
    if cls is int:
        return str(value)
    if value is MISSING or value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return json.dumps(value)
    if isinstance(value, list):
        return "、".join(render_value(v) for v in value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _join(value: Any, sep: str) -> Any:
    if value.__class__ is not list:
        return value
    return sep.join([v if v.__class__ is str else render_value(v) for v in value])


def _count(value: Any, _arg: str) -> Any:
    return len(value) if value.__class__ in (list, dict, str) else 0


def _default(value: Any, arg: str) -> Any:
    return arg if value is MISSING or value is None or value == "" or value == [] else value


def _prefix(value: Any, arg: str) -> Any:
    """Text before a value that is there: `{labels|join:、|prefix:：}` renders nothing when empty."""
    text = render_value(value)
    return arg + text if text else ""


def _excerpt(value: Any, arg: str) -> Any:
    """At most N characters of the value, with … when cut: messages that quote input stay short."""
    text = render_value(value)
    limit = int(arg)
    return text if len(text) <= limit else text[:limit] + "…"


def _map(value: Any, arg: str) -> Any:
    """A word of the message's language for a code (`{kind|map:withdrawal=撤回,prohibition=禁止}`):
    a message says an identifier in one language; a value the map lacks is kept."""
    pairs = dict(p.split("=", 1) for p in arg.split(",") if "=" in p)
    return pairs.get(value, value) if value.__class__ is str else value


def _first(value: Any, _arg: str) -> Any:
    return value[0] if isinstance(value, list) and value else MISSING


def _comparable(items: list) -> bool:
    """All numbers or all strings (as conditions order them): what min and max can compare."""
    return bool(items) and (all(v.__class__ in (int, float) for v in items)
                            or all(v.__class__ is str for v in items))


def _min(value: Any, _arg: str) -> Any:
    """The least item of a list of numbers or of strings (ISO dates order as strings); nothing for
    an empty or mixed list. Not a list: the value itself."""
    if value.__class__ is not list:
        return value
    return min(value) if _comparable(value) else MISSING


def _max(value: Any, _arg: str) -> Any:
    if value.__class__ is not list:
        return value
    return max(value) if _comparable(value) else MISSING


_KIND_ORDER = {int: 0, float: 0, str: 1, bool: 2, type(None): 3}


def _sort_key(value: Any) -> tuple:
    rank = _KIND_ORDER.get(value.__class__, 4)
    if rank == 4:
        return rank, json.dumps(value, ensure_ascii=False, sort_keys=True)
    return rank, value if value is not None else 0


def _sort(value: Any, _arg: str) -> Any:
    """A sorted copy of a list: numbers, then strings (by code point, the same in every locale),
    then the rest in a fixed order. Not a list: the value itself."""
    if value.__class__ is not list:
        return value
    return sorted(value, key=_sort_key)


NAME = re.compile(r"\.|[\w-]+(?:\.[\w-]+)*")

NUMERIC_ARGS = ("excerpt",)
# ASCII digits only ('²' passes str.isdigit but not int()), and few enough for int() at render time
MAX_NUMBER_DIGITS = 9

# filter name -> (takes an argument?, function)
FILTERS: dict[str, tuple[bool, Callable[[Any, str], Any]]] = {
    "join": (True, _join),
    "count": (False, _count),
    "default": (True, _default),
    "first": (False, _first),
    "min": (False, _min),
    "max": (False, _max),
    "sort": (False, _sort),
    "prefix": (True, _prefix),
    "excerpt": (True, _excerpt),
    "map": (True, _map),
}


# Filters generated code writes inline, as expressions of the value `{x}` and the argument `{a}`
# (repr'd): the functions above stay the semantics (tests/engine/test_templates.py holds the two
# equal), the inline form saves a call per filter on the hot path of every rendered row.
INLINE = {
    _join: "({a}.join([e if e.__class__ is str else {rv}(e) for e in {x}]) if {x}.__class__ is list else {x})",
    _count: "(len({x}) if {x}.__class__ in (list, dict, str) else 0)",
}


@dataclass(frozen=True)
class Template:
    source: str
    parts: tuple                      # str literals and (name, ((filter, arg), ...)) slots
    names: tuple                      # the names of the slots, in order
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def render(self) -> Callable[..., str]:
        """`render(value, bindings=None) -> str`, generated from `parts` on first use (decision rows
        inline their templates instead)."""
        try:
            return self.memo["render"]
        except KeyError:
            fn = self.memo["render"] = _generate(self.parts)
            return fn


def emit(parts: tuple, gen: Gen, read: Callable[[str], str], lines: list[str], pad: str = "    ") -> str:
    """Append to `lines` (indented by `pad`) the statements computing each slot of `parts`, and
    return the expression that joins them; `read(name)` is the expression reading a name. Shared
    by a template's own `render`, a decision row's renderer and a binding's `format`."""
    pieces = []
    for part in parts:
        if isinstance(part, str):
            pieces.append(repr(part))
            continue
        name, filters = part
        x = gen.fresh("x")
        lines.append(f"{pad}{x} = {read(name)}\n")
        for fn, arg in filters:
            inline = INLINE.get(fn)
            call = (inline.format(x=x, a=repr(arg), rv=gen.const(render_value)) if inline is not None
                    else f"{gen.const(fn)}({x}, {arg!r})")
            lines.append(f"{pad}{x} = {call}\n")
        pieces.append(f"({x} if {x}.__class__ is str else {gen.const(render_value)}({x}))")
    return " + ".join(pieces) if pieces else "''"


def _generate(parts: tuple) -> Callable[..., str]:
    """`render(v, b=None)`: each slot reads binding `b[name]` if given, else the path in `v`."""
    gen = Gen()
    lines: list[str] = []
    body = emit(parts, gen, lambda name: f"b[{name!r}] if b is not None and {name!r} in b else "
                f"{gen.get('v', path_parts(name))}", lines)
    return gen.build_function("def render(v, b=None):\n" + "".join(lines) + f"    return {body}\n", "render")


def compile_template(text: Any, where: tuple, faults: list[Fault],
                     names: Callable[[str], bool] | None = None, name_choices: tuple = (),
                     hint: Callable[[str], str] | None = None) -> Template | None:
    """Parse once; `names(name)` says whether a name may be used (None: any); the hint for one that
    may not is `hint(name)`, else a did-you-mean among `name_choices`."""
    if not isinstance(text, str):
        faults.append(Fault("bad-template", "a template must be a string", where))
        return None
    parts: list = []
    literal = []
    i, n, before = 0, len(text), len(faults)
    while i < n:
        ch = text[i]
        if ch == "{" and text.startswith("{{", i) or ch == "}" and text.startswith("}}", i):
            literal.append(ch)
            i += 2
            continue
        if ch == "}":
            faults.append(Fault("bad-template", f"lone '}}' at character {i + 1}", where,
                                "write '}}' for a literal brace"))
            return None
        if ch != "{":
            literal.append(ch)
            i += 1
            continue
        end = text.find("}", i)
        if end < 0:
            faults.append(Fault("bad-template", f"unclosed '{{' at character {i + 1}", where,
                                "close it with '}', or write '{{' for a literal brace"))
            return None
        slot = _slot(text[i + 1:end], where, faults, names, hint or (lambda n: did_you_mean(n, name_choices)))
        if slot is not None:
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append(slot)
        i = end + 1
    if literal:
        parts.append("".join(literal))
    if len(faults) != before:
        return None
    parts_t = tuple(parts)
    return Template(text, parts_t, tuple(p[0] for p in parts_t if not isinstance(p, str)))


def _slot(body: str, where: tuple, faults: list[Fault], names, hint: Callable[[str], str]):
    # a filter's argument keeps its spaces (`join:, ` joins with a comma and a space)
    name, *filter_specs = body.split("|") if body else [""]
    name = name.strip()
    if not name:
        faults.append(Fault("bad-template", "empty '{}' in template", where))
        return None
    if names is not None and not names(name):
        faults.append(Fault("unknown-field", f"template names '{name}', which is neither a binding "
                            "nor a field of the input contract", where, hint(name)))
        return None
    filters = []
    for spec in filter_specs:
        fname, sep, arg = spec.partition(":")
        fname = fname.strip()
        arg = arg if sep else arg.strip()
        if fname not in FILTERS:
            faults.append(Fault("unknown-filter", f"unknown template filter '{fname}'", where,
                                did_you_mean(fname, FILTERS) or "filters: " + ", ".join(FILTERS)))
            return None
        takes_arg, fn = FILTERS[fname]
        if takes_arg and not sep:
            faults.append(Fault("bad-template", f"filter '{fname}' needs an argument ({fname}:…)", where))
            return None
        if fname in NUMERIC_ARGS and not (arg.isascii() and arg.isdigit() and len(arg) <= MAX_NUMBER_DIGITS):
            faults.append(Fault("bad-template", f"filter '{fname}' takes a whole number of at most "
                                f"{MAX_NUMBER_DIGITS} digits, got '{arg}'", where))
            return None
        filters.append((fn, arg))
    if not NAME.fullmatch(name) or (name != "." and "" in name.split(".")):
        faults.append(Fault("bad-template", f"'{name}' is not a name or dotted path", where,
                            "names are letters, digits, _ and -, joined by dots"))
        return None
    return (name, tuple(filters))
