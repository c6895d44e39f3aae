"""YAML with positions, so every problem can name file:line:col.

PyYAML's node graph keeps marks; we build plain Python data from it and remember, for every
key path, where its key (or item) starts. Duplicate keys, which PyYAML silently overwrites,
are reported instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

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


def parse(text: str, file: str) -> Source:
    """Parse one YAML document; raises YamlProblem on syntax errors, duplicate keys, absurd depth."""
    positions: dict = {(): (1, 1)}
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = None if root is None else _build(root, (), positions, yaml.SafeLoader(""))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise YamlProblem("yaml-syntax", f"{exc.problem or exc.context}", line, col) from None
    except yaml.YAMLError as exc:
        raise YamlProblem("yaml-syntax", str(exc).splitlines()[0], 1, 1) from None
    except RecursionError:
        raise YamlProblem("too-deep", "the document is nested too deeply to read", 1, 1) from None
    return Source(file=file, data=data, positions=positions)


def _build(node: yaml.Node, path: Path, positions: dict, constructor: yaml.SafeLoader) -> Any:
    if isinstance(node, yaml.MappingNode):
        constructor.flatten_mapping(node)
        out: dict = {}
        for key_node, value_node in node.value:
            key = _build(key_node, path + ("<key>",), {}, constructor)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                line, col = _mark(key_node)
                raise YamlProblem("yaml-syntax", "mapping keys must be plain scalars", line, col)
            if key in out:
                line, col = _mark(key_node)
                raise YamlProblem("duplicate-key", f"key '{key}' appears twice in one mapping",
                                  line, col, dotted(path + (key,)))
            positions[path + (key,)] = _mark(key_node)
            out[key] = _build(value_node, path + (key,), positions, constructor)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, item in enumerate(node.value):
            positions[path + (index,)] = _mark(item)
            items.append(_build(item, path + (index,), positions, constructor))
        return items
    return constructor.construct_object(node, deep=True)


def dotted(path: Path) -> str:
    """Key path as analysts read it: rows[3].when.all[0]."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


