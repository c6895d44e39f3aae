"""Reading YAML into a Source: plain JSON data, and where each key path starts.

PyYAML's node graph keeps marks; we build plain Python data from it and remember, for every
key path, where its key (or item) starts. Duplicate keys, which PyYAML silently overwrites,
are reported instead. Nodes come from libyaml's C parser where PyYAML has it (15x faster than
the pure-Python one; same nodes and marks); a document libyaml refuses is read again by the pure
parser, so a syntax problem is always reported at the line at fault, in plain words.
"""
from __future__ import annotations

import math
from typing import Any

import yaml

from . import punctuation
from .yamlsrc import Path, Source, YamlProblem, dotted


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


FAST_LOADER = getattr(yaml, "CSafeLoader", None)     # None where PyYAML was built without libyaml


def parse(text: str, file: str) -> Source:
    """Parse one YAML document; raises YamlProblem on syntax errors, duplicate keys, absurd depth."""
    positions: dict = {(): (1, 1)}
    builder = _Builder(positions)
    try:
        root = _compose(text)
        data = None if root is None else builder.build(root, ())
    except yaml.MarkedYAMLError as exc:
        message, line, col = plain_words(exc, text)
        raise YamlProblem("yaml-syntax", message, line, col) from None
    except yaml.YAMLError as exc:
        raise YamlProblem("yaml-syntax", str(exc).splitlines()[0], 1, 1) from None
    except RecursionError:
        raise YamlProblem("too-deep", "the document is nested too deeply to read", 1, 1) from None
    return Source(file=file, data=data, positions=positions, yaml11_booleans=tuple(builder.booleans))


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
        self.booleans: list[tuple[Path, str]] = []

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
        value = self._scalar(node)
        if value.__class__ is bool and not node.style and node.value.lower() not in ("true", "false"):
            self.booleans.append((path, node.value))
        return value

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


# PyYAML's problem (and context) -> what it means to an analyst, and whether the line to show is
# where the trouble started (the context mark: an opening bracket or quote) or where it was found.
PLAIN = (
    ("found character '\\t'", "a tab character: YAML indents with spaces only; replace the tab by spaces", "problem"),
    ("mapping values are not allowed", "a second ': ' on one line: a value holding ': ' must be quoted "
     "(key: \"a: b\"), and a nested mapping starts on a new, indented line", "problem"),
    ("could not find expected ':'", "a line inside a mapping that is not 'key: value' (a missing ':', or a "
     "quoted value broken across lines)", "context"),
    ("expected ',' or '}'", "a '{' opened here is not closed with '}' (or a ',' is missing between its entries)",
     "context"),
    ("expected ',' or ']'", "a '[' opened here is not closed with ']' (or a ',' is missing between its items)",
     "context"),
    ("found unexpected end of stream", "a quote opened here is never closed", "context"),
    ("found unknown escape character", "a backslash escape YAML does not know inside double quotes: use single "
     "quotes for regexes ('\\d+'), or double the backslash", "problem"),
    ("did not find expected key", "this line is not indented like the keys of its mapping (or a list item "
     "'- ' appears among keys)", "problem"),
    ("did not find expected '-' indicator", "this line is not indented like the items of its list", "problem"),
    ("expected <block end>", "this line is indented less than the block it belongs to, or a list item "
     "stands where a key was expected", "problem"),
    ("found undefined alias", "an alias (*name) names no anchor (&name) defined before it", "problem"),
    ("that cannot start any token", "a character that cannot start a value here ('@', '`' "
     "or '%' at the start of a value): quote the value", "problem"),
)


def plain_words(exc: yaml.MarkedYAMLError, text: str) -> tuple[str, int, int]:
    """A syntax error in plain words, at the line most likely at fault."""
    said = f"{exc.context or ''} {exc.problem or ''}"
    wide = _full_width_key(exc, text)
    if wide is not None:
        return wide
    for needle, words, at in PLAIN:
        if needle in said:
            mark = (exc.context_mark if at == "context" else exc.problem_mark) or exc.problem_mark or exc.context_mark
            return words, *_located(mark, text)
    mark = exc.problem_mark or exc.context_mark
    return f"YAML syntax: {exc.problem or exc.context}", *_located(mark, text)


def _full_width_key(exc: yaml.MarkedYAMLError, text: str) -> tuple[str, int, int] | None:
    """`key： value` at (or just before) the line at fault: YAML saw no key there, because the colon
    is full-width. Named as such, at its line."""
    lines = text.splitlines()
    for mark in (exc.problem_mark, exc.context_mark):
        if mark is None:
            continue
        for n in (mark.line, mark.line - 1):
            if 0 <= n < len(lines) and punctuation.key_line(lines[n]):
                col = punctuation.key_at(lines[n])
                return (f"'{lines[n].strip()[:60]}' is not 'key: value': {punctuation.note(lines[n])}",
                        n + 1, col + 1)
    return None


def _located(mark: Any, text: str) -> tuple[int, int]:
    """1-based line and column; a mark at the very end of the text moves back to its last line."""
    if mark is None:
        return 1, 1
    lines = text.splitlines()
    line = mark.line
    if line >= len(lines) and lines:
        line = len(lines) - 1
        while line > 0 and not lines[line].strip():
            line -= 1
        return line + 1, 1
    return line + 1, mark.column + 1
