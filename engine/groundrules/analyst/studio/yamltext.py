"""Edits of a table's YAML text that keep everything they do not touch byte for byte.

A full round trip through a YAML library rewrites more than the edit: ruamel.yaml, dumping
rules/support_reason.yaml unchanged, rewrites 474 of its lines (aligned flow mappings, escapes,
sequence indentation). So an edit here is a splice: ruamel.yaml composes the text into nodes with
their marks, the changed scalars (or the smallest changed subtree) are found by comparing the old
value with the new, and only their characters are replaced, each new piece rendered by ruamel.yaml
in the style of the node it replaces (plain, quoted, block, flow). Rows are added, deleted and
moved as blocks of whole lines, comments directly above a row moving with it. Every result is read
back and compared with the value intended; an edit that would read back differently is refused.
"""
from __future__ import annotations

import io
import json
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

Path = tuple            # key path: str keys and int indices


class EditError(ValueError):
    """An edit that cannot be made as asked (a path that leads nowhere, text that would read back
    as something else)."""


def compose(text: str) -> Node:
    return YAML(typ="rt", pure=True).compose(text)


def read(text: str) -> Any:
    """The text's value, read as the engine reads it (PyYAML's safe loader)."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def node_at(root: Node, path: Path) -> Node:
    node = root
    for part in path:
        found = child(node, part)
        if found is None:
            raise EditError(f"no {'.'.join(map(str, path))} in the table")
        node = found
    return node


def child(node: Node, part: Any) -> Node | None:
    if isinstance(node, MappingNode) and isinstance(part, str):
        return next((v for k, v in node.value if k.value == part), None)
    if isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
        return node.value[part]
    return None


def key_node(node: MappingNode, key: str) -> Node | None:
    return next((k for k, _ in node.value if k.value == key), None)


def end_of(node: Node) -> int:
    """The index just after the node's last character (a block collection's own end mark lies at
    the next token, past trailing comments and blank lines)."""
    if isinstance(node, ScalarNode) and node.style in ("|", ">"):     # its mark is past the line breaks
        buffer = node.end_mark.buffer or ""
        return node.start_mark.index + len(buffer[node.start_mark.index:node.end_mark.index].rstrip())
    if isinstance(node, ScalarNode) or getattr(node, "flow_style", False):
        return node.end_mark.index
    inner = [v for pair in node.value for v in pair] if isinstance(node, MappingNode) else list(node.value)
    return max((end_of(n) for n in inner), default=node.start_mark.index)


def lines_of(node: Node) -> tuple[int, int]:
    """The node's first and last line, 1-based."""
    return node.start_mark.line + 1, _line_at(node, end_of(node))


def _line_at(node: Node, index: int) -> int:
    buffer = node.start_mark.buffer if node.start_mark.buffer is not None else ""
    return buffer.count("\n", 0, max(index - 1, 0)) + 1 if buffer else node.start_mark.line + 1


# ---- setting a value ----------------------------------------------------------------------------

def set_value(text: str, path: Path, value: Any) -> str:
    """`text` with the value at `path` replaced by `value` (a missing last key added to its
    mapping; `value` None on a mapping key removes the key)."""
    root = compose(text)
    data = read(text)
    intended = _with(data, path, value)
    parent = node_at(root, path[:-1])
    target = child(parent, path[-1])
    if target is None:
        if not isinstance(parent, MappingNode) or not isinstance(path[-1], str):
            raise EditError(f"no {'.'.join(map(str, path))} in the table")
        out = _add_key(text, parent, path[-1], value)
        return _checked(out, intended)
    old = get(data, path)
    try:            # plain scalars where they were plain, unless that reads back otherwise
        return _checked(_apply(text, _changes(text, target, old, value, quote=False)), intended)
    except EditError:
        return _checked(_apply(text, _changes(text, target, old, value, quote=True)), intended)


def remove_key(text: str, path: Path) -> str:
    """`text` without the mapping key at `path` (its lines, in a block mapping)."""
    root = compose(text)
    intended = _without(read(text), path)
    parent = node_at(root, path[:-1])
    if not isinstance(parent, MappingNode) or (value := child(parent, path[-1])) is None:
        raise EditError(f"no key {'.'.join(map(str, path))} to remove")
    if parent.flow_style:
        return _checked(_apply(text, [_whole(text, parent, get(intended, path[:-1]))]), intended)
    key = key_node(parent, path[-1])
    assert key is not None, "the key of the value found above"
    start, end = _line_span(text, key.start_mark.index, end_of(value))
    return _checked(text[:start] + text[end:], intended)


def _changes(text: str, node: Node, old: Any, new: Any, quote: bool) -> list[tuple[int, int, str]]:
    """The splices turning `node` (holding `old`) into `new`: scalars replaced one by one while the
    shapes agree, the smallest subtree that differs in shape rendered whole."""
    if old == new and type(old) is type(new):
        return []
    if isinstance(node, MappingNode) and isinstance(old, dict) and isinstance(new, dict) \
            and list(old) == list(new):
        return [s for (k, v) in node.value for s in _changes(text, v, old[k.value], new[k.value], quote)]
    if isinstance(node, SequenceNode) and isinstance(old, list) and isinstance(new, list) \
            and len(old) == len(new):
        return [s for n, o, w in zip(node.value, old, new) for s in _changes(text, n, o, w, quote)]
    if isinstance(node, ScalarNode) and not isinstance(new, (dict, list)):
        return [(node.start_mark.index, end_of(node), _scalar(text, node, new, quote))]
    return [_whole(text, node, new)]


def _whole(text: str, node: Node, new: Any) -> tuple[int, int, str]:
    """The node replaced by `new`: on one line in flow style where the node was flow or a scalar,
    else as a block at the node's column."""
    start, end = node.start_mark.index, end_of(node)
    if getattr(node, "flow_style", False) or isinstance(node, ScalarNode) or not new:
        return start, end, flow(new)
    column = node.start_mark.column
    body = block(new).rstrip("\n").split("\n")
    return start, end, ("\n" + " " * column).join(body)


def _scalar(text: str, node: ScalarNode, value: Any, quote: bool) -> str:
    """`value` written as the scalar it replaces was: plain where it was plain (unless `quote`), a
    quoted string where it was quoted, a block scalar stays a block scalar."""
    if node.style == ">" and isinstance(value, str) and value and "\n" not in value.rstrip("\n") \
            and value == value.strip(" "):       # folded stays folded: one line folds to itself
        chomp = "" if value.endswith("\n") else "-"
        return ">" + chomp + "\n" + " " * _content_indent(text, node) + value.rstrip("\n")
    if node.style in ("|", ">") and isinstance(value, str):
        indent = _content_indent(text, node)
        chomp = "" if value.endswith("\n") and not value.endswith("\n\n") else "-"
        lines = value[:-1].split("\n") if chomp == "" else value.split("\n")
        return "|" + chomp + "".join("\n" + (" " * indent + line if line else "") for line in lines)
    if node.style == "'" and isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, str) and (quote or node.style == '"' or not value or value != value.strip()
                                   or "\n" in value):
        return json.dumps(value, ensure_ascii=False)
    return value if isinstance(value, str) else flow(value)


def _content_indent(text: str, node: ScalarNode) -> int:
    line_start = text.rfind("\n", 0, node.start_mark.index) + 1
    key_indent = len(text[line_start:]) - len(text[line_start:].lstrip(" "))
    after = text.find("\n", node.start_mark.index) + 1
    for line in text[after:node.end_mark.index].split("\n"):
        if line.strip():
            return len(line) - len(line.lstrip(" "))
    return key_indent + 2


def _add_key(text: str, mapping: MappingNode, key: str, value: Any) -> str:
    if mapping.flow_style or not mapping.value:
        current = read(text[mapping.start_mark.index:end_of(mapping)]) if mapping.value else {}
        return _apply(text, [_whole(text, mapping, dict(current or {}, **{key: value}))])
    column = mapping.value[0][0].start_mark.column
    at = _line_end(text, end_of(mapping))
    rendered = block({key: value}).rstrip("\n").split("\n")
    return text[:at] + "".join("\n" + " " * column + line for line in rendered) + text[at:]


# ---- rows: sequence items and mapping entries as blocks of lines --------------------------------

def insert_item(text: str, path: Path, index: int, value: Any) -> str:
    """`value` inserted at `index` of the sequence at `path` (or, for a mapping, `value` = {key:
    entry} added before its `index`-th key)."""
    root = compose(text)
    data = read(text)
    seq = node_at(root, path)
    holder = get(data, path)
    if isinstance(seq, SequenceNode):
        intended_list = list(holder)
        intended_list.insert(index, value)
        intended = _with(data, path, intended_list)
        if seq.flow_style or not seq.value:
            return _checked(_apply(text, [_whole(text, seq, intended_list)]), intended)
        column = seq.value[0].start_mark.column - 2
        first, *rest = _block_lines(value, 100) if isinstance(value, dict) and value else [flow(value)]
        lines = ["- " + first] + ["  " + line for line in rest]
        piece = "".join(" " * column + line + "\n" for line in lines)
    elif isinstance(seq, MappingNode) and isinstance(value, dict) and len(value) == 1:
        (key, entry), = value.items()
        if key in holder:
            raise EditError(f"'{key}' is already a key here")
        items = list(holder.items())
        items.insert(index, (key, entry))
        intended = _with(data, path, dict(items))
        if seq.flow_style or not seq.value:
            return _checked(_apply(text, [_whole(text, seq, dict(items))]), intended)
        column = seq.value[0][0].start_mark.column
        lines = block(value).rstrip("\n").split("\n")
        piece = "".join(" " * column + line + "\n" for line in lines)
    else:
        raise EditError("rows are added to a list or a mapping")
    blocks = _blocks(text, seq)
    at = blocks[index][0] if index < len(blocks) else blocks[-1][1]
    return _checked(text[:at] + piece + text[at:], intended)


def delete_item(text: str, path: Path, index: int) -> str:
    """The `index`-th item (or mapping entry) of the collection at `path` removed, with its lines."""
    root = compose(text)
    data = read(text)
    node = node_at(root, path)
    holder = get(data, path)
    if isinstance(holder, list):
        intended = _with(data, path, holder[:index] + holder[index + 1:])
    else:
        keys = list(holder)
        intended = _with(data, path, {k: v for k, v in holder.items() if k != keys[index]})
    if getattr(node, "flow_style", False) or len(node.value) == 1:
        return _checked(_apply(text, [_whole(text, node, get(intended, path))]), intended)
    start, end = _blocks(text, node)[index]
    return _checked(text[:start] + text[end:], intended)


def move_item(text: str, path: Path, index: int, to: int) -> str:
    """The `index`-th item (or entry) of the collection at `path` moved to position `to`."""
    root = compose(text)
    data = read(text)
    node = node_at(root, path)
    holder = get(data, path)
    items = list(holder) if isinstance(holder, list) else list(holder.items())
    if not (0 <= index < len(items) and 0 <= to < len(items)):
        raise EditError(f"no row {index} or no place {to} in a collection of {len(items)}")
    items.insert(to, items.pop(index))
    intended = _with(data, path, items if isinstance(holder, list) else dict(items))
    if getattr(node, "flow_style", False):
        return _checked(_apply(text, [_whole(text, node, get(intended, path))]), intended)
    blocks = _blocks(text, node)
    pieces = [text[a:b] for a, b in blocks]
    gaps = [text[blocks[i][1]:blocks[i + 1][0]] for i in range(len(blocks) - 1)]
    pieces = [_ended(p) for p in pieces]
    pieces.insert(to, pieces.pop(index))
    middle = pieces[0] + "".join(g + p for g, p in zip(gaps, pieces[1:]))
    tail = text[blocks[-1][1]:]
    if not text[blocks[-1][0]:blocks[-1][1]].endswith("\n"):
        middle = middle[:-1] if middle.endswith("\n") else middle
    return _checked(text[:blocks[0][0]] + middle + tail, intended)


def _ended(piece: str) -> str:
    return piece if piece.endswith("\n") else piece + "\n"


def _blocks(text: str, node: Node) -> list[tuple[int, int]]:
    """Per item (or entry) of a block collection, the span of its whole lines: from the comments
    directly above it (no blank line between) to the end of its last line."""
    starts = [(item.start_mark.index if isinstance(node, SequenceNode) else item[0].start_mark.index)
              for item in node.value]
    ends = [end_of(item if isinstance(node, SequenceNode) else item[1]) for item in node.value]
    if isinstance(node, SequenceNode):      # an item's mark is at its content, after "- "
        starts = [text.rfind("-", 0, s) for s in starts]
    out = []
    for i, (s, e) in enumerate(zip(starts, ends)):
        begin = text.rfind("\n", 0, s) + 1
        floor = _line_end(text, ends[i - 1]) + 1 if i else begin
        while begin > floor:
            prev = text.rfind("\n", 0, begin - 1) + 1
            if not text[prev:begin].strip().startswith("#"):
                break
            begin = prev
        out.append((begin, min(_line_end(text, e) + 1, len(text))))
    return out


def _line_span(text: str, start: int, end: int) -> tuple[int, int]:
    return text.rfind("\n", 0, start) + 1, min(_line_end(text, end) + 1, len(text))


def _line_end(text: str, index: int) -> int:
    found = text.find("\n", index)
    return len(text) if found < 0 else found


# ---- rendering, splicing, checking ----------------------------------------------------------------

def _yaml(flow_style: bool) -> YAML:
    y = YAML(typ="rt", pure=True)
    y.default_flow_style = flow_style
    y.width = 1 << 16
    y.allow_unicode = True
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def flow(value: Any) -> str:
    """`value` on one line, in flow style (as the tables write short rows and conditions)."""
    out = io.StringIO()
    _yaml(True).dump(value, out)
    text = out.getvalue().rstrip("\n")
    return text[:-4].rstrip("\n") if text.endswith("\n...") else text


def block(value: Any, width: int = 100) -> str:
    """`value` in block style at column 0, as the tables are written: a mapping key per line, a
    list item per "- ", and whatever fits in `width` characters on its key's line in flow style."""
    return "\n".join(_block_lines(value, width)) + "\n"


def _block_lines(value: Any, width: int) -> list[str]:
    if isinstance(value, dict) and value:
        out = []
        for key, item in value.items():
            head = flow({key: item})[1:-1]
            if not isinstance(item, (dict, list)) or not item or len(head) <= width:
                out.append(head)
            else:
                out.append(flow(key) + ":")
                out += ["  " * (isinstance(item, dict)) + ("  " if isinstance(item, list) else "") + line
                        for line in _block_lines(item, width - 2)]
        return out
    if isinstance(value, list) and value:
        out = []
        for item in value:
            inner = _block_lines(item, width - 2) if isinstance(item, (dict, list)) and item \
                and len(flow(item)) > width else [flow(item)]
            out.append("- " + inner[0])
            out += ["  " + line for line in inner[1:]]
        return out
    return [flow(value)]


def _apply(text: str, splices: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(splices, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _checked(out: str, intended: Any) -> str:
    try:
        got = read(out)
    except yaml.YAMLError as exc:
        raise EditError(f"the edit would not read back as YAML ({exc.__class__.__name__})") from None
    if got != intended:
        raise EditError("the edit would read back as something else than was typed")
    return out


def get(data: Any, path: Path) -> Any:
    """The value at `path` in `data`."""
    for part in path:
        data = data[part]
    return data


def _with(data: Any, path: Path, value: Any) -> Any:
    """A copy of `data` with `path` set to `value` (a mapping key added where missing)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        out = dict(data)
        out[head] = _with(data.get(head), rest, value) if rest else value
        return out
    if isinstance(data, list) and isinstance(head, int) and 0 <= head < len(data):
        items = list(data)
        items[head] = _with(data[head], rest, value) if rest else value
        return items
    raise EditError(f"no {head} here")


def _without(data: Any, path: Path) -> Any:
    parent = get(data, path[:-1])
    return _with(data, path[:-1], {k: v for k, v in parent.items() if k != path[-1]})
