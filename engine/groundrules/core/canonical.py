"""Canonical JSON and the envelope every cross-process output wears.

Key order is the order in which our code builds each object (the schema's order), never sorted
and never set-derived, so identical input gives identical bytes in every process.
"""
from __future__ import annotations

import hashlib
import json
import math
from typing import Any, Mapping


# Python cannot print an int of more than 4300 digits; 14,000 bits stay below that.
MAX_INT_BITS = 14_000


def dumps(obj: Any, *, indent: int | None = 2) -> str:
    """UTF-8 text, ensure_ascii=False, no NaN; the one serialiser for outputs and snapshots."""
    separators = (",", ": ") if indent is not None else (",", ":")
    return json.dumps(obj, ensure_ascii=False, indent=indent, separators=separators, allow_nan=False)


def digest(obj: Any) -> str:
    """Content hash of a JSON-able object, independent of dict insertion order."""
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def encodable(text: str) -> bool:
    """False for a string holding a lone surrogate: Python allows it, UTF-8 (and SQLite) do not."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def json_problem(value: Any, *, max_depth: int | None = None,
                 max_int_bits: int | None = None) -> tuple[tuple, str] | None:
    """(path, problem) of the first place where `value` is not JSON that `dumps` can write: a
    non-JSON type, a non-string key, NaN or infinity, a lone surrogate, a value that contains
    itself; optionally nesting past `max_depth` or integers past `max_int_bits`. Iterative, so no
    input can make it raise. The C encoder answers "all JSON" first, fast; the limits then need
    only a walk over the containers."""
    if json_text(value) is None:
        return _first_problem(value, max_depth, max_int_bits)
    if max_depth is None and max_int_bits is None:
        return None
    return beyond_limits(value, max_depth, max_int_bits)


def json_text(value: Any) -> str | None:
    """The JSON text of `value` (ensure_ascii=False, default separators), or None when it is not
    JSON `dumps` can write: the first, fast half of `json_problem`, whose text a caller may keep
    (the decision log keeps the arguments and answer it checked, at no further cost)."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
        return None
    return text


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError("not a JSON number")
    return number


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number")


_STRICT = json.JSONDecoder(parse_float=_finite, parse_constant=_no_constant)


def decoded(text: str) -> Any:
    """The value of a JSON text `json_text` wrote, or ValueError. What it returns is JSON `dumps`
    can write, proven by the decoding instead of by encoding it again: only dicts with string keys,
    lists, strings, ints, finite floats, booleans and None; a number that reads as infinity or NaN
    is refused, and so is a text holding a \\ud escape (it may decode to a lone surrogate, which
    `json_text` never writes: a caller checks such a value in full)."""
    if "\\ud" in text or "\\uD" in text:
        raise ValueError("may hold a lone surrogate")
    return _STRICT.decode(text)


def beyond_limits(value: Any, max_depth: int | None, max_int_bits: int | None) -> tuple[tuple, str] | None:
    """Nesting past max_depth or an integer past max_int_bits, in a value the encoder could write;
    and what the encoder writes though it is no JSON value (a tuple, a non-string key): the second
    half of `json_problem`. A pass that builds no paths answers "within" for what is plainly JSON
    (a caller's 10,000 objects: 59 ms with a path per value, 8 ms without); only a value it cannot
    vouch for is walked again with paths."""
    if _plainly_within(value, max_depth if max_depth is not None else 1 << 30,
                       max_int_bits if max_int_bits is not None else 1 << 30):
        return None
    return _beyond_at(value, max_depth, max_int_bits)


_SCALARS = frozenset((str, float, bool, type(None)))


def _plainly_within(value: Any, max_depth: int, max_int_bits: int) -> bool:
    stack = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        cls = node.__class__
        if cls is dict:
            children: Any = node.values()
            if any(k.__class__ is not str for k in node):
                return False
        elif cls is list:
            children = node
        elif cls is int:
            if node.bit_length() > max_int_bits:
                return False
            continue
        else:
            if cls not in _SCALARS:
                return False
            continue
        if depth >= max_depth:
            return False
        for child in children:
            kind = child.__class__
            if kind is dict or kind is list:
                push((child, depth + 1))
            elif kind is int:
                if child.bit_length() > max_int_bits:
                    return False
            elif kind not in _SCALARS:
                return False
    return True


def _beyond_at(value: Any, max_depth: int | None, max_int_bits: int | None) -> tuple[tuple, str] | None:
    stack: list = [(value, (), 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if max_depth is not None and depth >= max_depth:
                return path, f"the value is nested deeper than {max_depth} levels"
            if isinstance(node, dict):
                key = next((k for k in node if not isinstance(k, str)), None)
                if key is not None:
                    return path, f"an object key is {type(key).__name__}, not a string"
                items = list(node.items())
            else:
                items = list(enumerate(node))
            for key, child in reversed(items):      # first child first, as the full walk reports
                if isinstance(child, (dict, list, int, tuple)):
                    stack.append((child, path + (key,), depth + 1))
        elif isinstance(node, tuple):
            return path, "a tuple is not a JSON value"
        elif (max_int_bits is not None and isinstance(node, int) and not isinstance(node, bool)
              and node.bit_length() > max_int_bits):
            return path, "the integer is too large"
    return None


def _first_problem(value: Any, max_depth: int | None, max_int_bits: int | None) -> tuple[tuple, str] | None:
    stack: list = [(value, (), 0, False)]
    open_ids: set = set()
    while stack:
        node, path, depth, leaving = stack.pop()
        if leaving:
            open_ids.discard(id(node))
            continue
        if isinstance(node, str):
            if not node.isascii() and not encodable(node):
                return path, "holds a lone surrogate, which is not Unicode text"
        elif node is None or isinstance(node, bool):
            continue
        elif isinstance(node, int):
            if max_int_bits is not None and node.bit_length() > max_int_bits:
                return path, "the integer is too large"
        elif isinstance(node, float):
            if not math.isfinite(node):
                return path, f"{node!r} is not a JSON number"
        elif isinstance(node, (dict, list)):
            if max_depth is not None and depth >= max_depth:
                return path, f"the value is nested deeper than {max_depth} levels"
            if id(node) in open_ids:
                return path, "the value contains itself"
            open_ids.add(id(node))
            stack.append((node, path, depth, True))
            if isinstance(node, list):
                stack += [(node[i], path + (i,), depth + 1, False) for i in reversed(range(len(node)))]
                continue
            for key in node:
                if not isinstance(key, str):
                    return path, f"an object key is {type(key).__name__}, not a string"
                if not key.isascii() and not encodable(key):
                    return path, "an object key holds a lone surrogate"
            stack += [(node[k], path + (k,), depth + 1, False) for k in reversed(list(node))]
        else:
            return path, f"a {type(node).__name__} is not a JSON value"
    return None


def detached(value: Any) -> Any:
    """A copy of a JSON value that shares nothing mutable with the original: an output a host may
    edit without editing the input it came from (recursive: for values already depth-checked)."""
    if isinstance(value, dict):
        return {k: detached(v) for k, v in value.items()}
    if isinstance(value, list):
        return [detached(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """A copy in the exact JSON classes (dict, list, str, int, float) that generated code compares
    by class: a host's OrderedDict, str or IntEnum subclass reads as the JSON value it stands for."""
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    for cls in (str, int, float):
        if isinstance(value, cls):
            return cls(value)
    return value


def envelope(*, ok: bool, data: Any = None, warnings: list | None = None,
             error: Mapping[str, Any] | None = None, rulebook: str | None = None) -> dict:
    """The design's output envelope: {ok, data, warnings, error, rulebook}."""
    return {"ok": ok, "data": data, "warnings": list(warnings or []), "error": error,
            "rulebook": rulebook}
