"""YAML with positions, so every problem can name file:line:col.

PyYAML's node graph keeps marks; we build plain Python data from it and remember, for every
key path, where its key (or item) starts. Duplicate keys, which PyYAML silently overwrites,
are reported instead. Nodes come from libyaml's C parser where PyYAML has it (15x faster than
the pure-Python one; same nodes and marks); a document libyaml refuses is read again by the pure
parser, so a syntax problem is always reported with PyYAML's own position and words.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import yaml

from .errors import echo

Path = tuple  # a key path: str keys and int indices


@dataclass(frozen=True)
class Source:
    """One parsed YAML document with the 1-based position of every key path."""

    file: str
    data: Any
    positions: dict

    def where(self, path: Path) -> tuple[int, int]:
        """Position of the deepest prefix of `path` that exists (a missing key points at its parent)."""
        path = tuple(path)
        while path not in self.positions and path:
            path = path[:-1]
        return self.positions.get(path, (1, 1))


class YamlProblem(Exception):
    def __init__(self, code: str, message: str, line: int, column: int, key: str = ""):
        super().__init__(message)
        self.code, self.message, self.line, self.column, self.key = code, message, line, column, key


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


FAST_LOADER = getattr(yaml, "CSafeLoader", None)     # None where PyYAML was built without libyaml


def parse(text: str, file: str) -> Source:
    """Parse one YAML document; raises YamlProblem on syntax errors, duplicate keys, absurd depth."""
    positions: dict = {(): (1, 1)}
    try:
        root = _compose(text)
        data = None if root is None else _Builder(positions).build(root, ())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise YamlProblem("yaml-syntax", f"{exc.problem or exc.context}", line, col) from None
    except yaml.YAMLError as exc:
        raise YamlProblem("yaml-syntax", str(exc).splitlines()[0], 1, 1) from None
    except RecursionError:
        raise YamlProblem("too-deep", "the document is nested too deeply to read", 1, 1) from None
    return Source(file=file, data=data, positions=positions)


def _compose(text: str) -> yaml.Node | None:
    if FAST_LOADER is not None:
        try:
            return yaml.compose(text, Loader=FAST_LOADER)
        except yaml.YAMLError:
            pass                       # the pure parser says where and what, as it always has
    return yaml.compose(text, Loader=yaml.SafeLoader)


STR_TAG = "tag:yaml.org,2002:str"

# A table is a few thousand values at most (the largest bundled one has ~2,400); far more means
# aliases expanding into each other ("billion laughs"), which must fail, not fill the memory.
MAX_VALUES = 100_000


class _Builder:
    """Plain JSON data from a node graph: string keys, finite numbers, no YAML-only types
    (dates, binary, NaN), every value counted so aliases cannot expand without bound."""

    def __init__(self, positions: dict):
        self.positions = positions
        self.constructor = yaml.SafeLoader("")
        self.count = 0

    def build(self, node: yaml.Node, path: Path) -> Any:
        self.count += 1
        if self.count > MAX_VALUES:
            line, col = _mark(node)
            raise YamlProblem("too-large", f"the document expands to more than {MAX_VALUES} values "
                              "(aliases that repeat aliases?)", line, col)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            items = []
            for index, item in enumerate(node.value):
                self.positions[path + (index,)] = _mark(item)
                items.append(self.build(item, path + (index,)))
            return items
        return self._scalar(node)

    def _mapping(self, node: yaml.MappingNode, path: Path) -> dict:
        self.constructor.flatten_mapping(node)
        out: dict = {}
        for key_node, value_node in node.value:
            key = self._scalar(key_node) if isinstance(key_node, yaml.ScalarNode) else None
            line, col = _mark(key_node)
            if not isinstance(key, str):
                raise YamlProblem("bad-key", "mapping keys must be strings"
                                  + (f": quote {key_node.value!r}" if isinstance(key_node, yaml.ScalarNode)
                                     else ""), line, col, dotted(path))
            if key in out:
                raise YamlProblem("duplicate-key", f"key '{key}' appears twice in one mapping",
                                  line, col, dotted(path + (key,)))
            self.positions[path + (key,)] = (line, col)
            out[key] = self.build(value_node, path + (key,))
        return out

    def _scalar(self, node: yaml.Node) -> Any:
        if node.tag == STR_TAG and node.__class__ is yaml.ScalarNode:
            return node.value
        line, col = _mark(node)
        try:
            value = self.constructor.construct_object(node, deep=True)
        except ValueError:               # int() of a number with thousands of digits
            raise YamlProblem("bad-value", "number too long to read", line, col) from None
        if value is None or value.__class__ in (str, bool, int):
            return value
        if value.__class__ is float and math.isfinite(value):
            return value
        raise YamlProblem("bad-value", f"{node.value!r} reads as a YAML {type(value).__name__}, which is "
                          "not JSON data (tables hold strings, finite numbers, true/false, null): quote it",
                          line, col)


def dotted(path: Path) -> str:
    """Key path as analysts read it: rows[3].when.all[0]. A key is cut like any echoed input
    (errors.echo): a path may hold a caller's megabyte-long key."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + echo(str(part))
    return out


