"""Analyst edits in a copy of the tables, placed by what the table holds: the line and column where
a key or an item starts, read with the engine's own YAML positions (yamlparse), never by searching
the file for fixed text. So an edit made elsewhere in the same table (a code inserted, a state
added, a label reworded) neither moves nor breaks the edits a test makes (issue 23, item 4)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from groundrules.core.yamlparse import parse
from groundrules.core.yamlsrc import Source


class TableFile:
    """One YAML table, edited in place; every edit re-reads the positions it needs."""

    def __init__(self, path: Path):
        self.path = Path(path)

    @property
    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")

    @property
    def source(self) -> Source:
        return parse(self.text, self.path.name)

    @property
    def data(self) -> Any:
        return self.source.data

    def at(self, *path) -> Any:
        value = self.data
        for part in path:
            value = value[part]
        return value

    def _where(self, path: tuple) -> tuple[int, int]:
        source = self.source
        if tuple(path) not in source.positions:
            raise KeyError(f"{self.path.name}: no {path}")
        return source.positions[tuple(path)]

    def _write_lines(self, lines: list[str]) -> None:
        self.path.write_text("".join(lines), encoding="utf-8")

    # -- entries (a key of a block mapping, an item of a block list) ---------------------------
    def _next_line(self, path: tuple) -> int:
        """The 1-based line of the first entry after `path` that is not inside it (or past the end)."""
        source = self.source
        start = source.positions[tuple(path)]
        after = [pos for p, pos in source.positions.items() if pos[0] > start[0] and p[:len(path)] != tuple(path)]
        return min(after)[0] if after else len(self.text.splitlines()) + 1

    def insert_after(self, path: tuple, snippet: str) -> None:
        """Insert `snippet` (YAML, indented as if at column 1) as the next sibling of the block entry
        at `path`: a mapping key, or a list item (then the snippet starts with '- ')."""
        line, col = self._where(path)
        indent = col - 1 - (2 if isinstance(path[-1], int) else 0)
        lines = self.text.splitlines(keepends=True)
        if isinstance(path[-1], int) and lines[line - 1][indent:indent + 2] != "- ":
            raise ValueError(f"{self.path.name}: {path} is not an item of a block list")
        at = self._next_line(path) - 1
        while at > line and (not lines[at - 1].strip() or lines[at - 1].lstrip().startswith("#")):
            at -= 1                                           # before the blank lines and comments ending it
        block = "".join(" " * indent + row + "\n" if row else "\n" for row in snippet.rstrip("\n").split("\n"))
        self._write_lines(lines[:at] + [block] + lines[at:])

    # -- list items ------------------------------------------------------------------------------
    def add_item(self, path: tuple, value: str, after: int | None = None) -> None:
        """Add the plain scalar `value` to the list at `path`, after its item `after` (default: the last),
        whether the list is written as a block (- a) or in flow style ([a, b])."""
        items = self.at(*path)
        index = len(items) - 1 if after is None else after
        line, col = self._where(tuple(path) + (index,))
        lines = self.text.splitlines(keepends=True)
        if lines[line - 1][col - 3:col - 1] == "- ":
            self.insert_after(tuple(path) + (index,), f"- {value}")
            return
        text = lines[line - 1]
        end = col - 1 + len(str(items[index]))
        assert text[col - 1:end] == str(items[index]), (self.path.name, path, text)
        lines[line - 1] = text[:end] + f", {value}" + text[end:]
        self._write_lines(lines)

    def swap_items(self, path: tuple, i: int, j: int) -> None:
        """Exchange two plain scalar items of the list at `path` (block or flow), each where it is."""
        items = [str(v) for v in self.at(*path)]
        spots = sorted(((self._where(tuple(path) + (k,)), k) for k in (i, j)), reverse=True)
        lines = self.text.splitlines(keepends=True)
        for (line, col), k in spots:                          # the later one first: columns stay right
            other = items[j if k == i else i]
            text = lines[line - 1]
            assert text[col - 1:col - 1 + len(items[k])] == items[k], (self.path.name, path, text)
            lines[line - 1] = text[:col - 1] + other + text[col - 1 + len(items[k]):]
        self._write_lines(lines)

    # -- scalar values -----------------------------------------------------------------------------
    def _value_at(self, path: tuple) -> tuple[list[str], int, int]:
        """(the file's lines, the 1-based line and the 0-based column where the scalar at `path`
        starts: the value of a key, after its colon and blanks, or an item of a list)."""
        line, col = self._where(path)
        lines = self.text.splitlines(keepends=True)
        text = lines[line - 1]
        start = col - 1
        if not isinstance(path[-1], int):
            key = str(path[-1])
            assert text[start:start + len(key) + 1] == key + ":", (self.path.name, path, text)
            start += len(key) + 1
            while text[start] == " ":
                start += 1
        return lines, line, start

    def prefix_value(self, path: tuple, prefix: str) -> None:
        """Put `prefix` before the scalar value of the key at `path` (inside its quotes, if quoted)."""
        lines, line, start = self._value_at(path)
        text = lines[line - 1]
        if text[start] in "'\"":
            start += 1
        lines[line - 1] = text[:start] + prefix + text[start:]
        self._write_lines(lines)

    def replace_value(self, path: tuple, value: str) -> None:
        """Write the plain scalar `value` in place of the plain scalar value of the key at `path`."""
        old = str(self.at(*path))
        lines, line, start = self._value_at(path)
        text = lines[line - 1]
        assert text[start:start + len(old)] == old, (self.path.name, path, text)
        lines[line - 1] = text[:start] + value + text[start + len(old):]
        self._write_lines(lines)

    def write_scalar(self, path: tuple, value: Any) -> None:
        """Write `value` (a string, number or bool) in place of the one-line scalar at `path`, the
        value of a key or an item of a list, plain or quoted, in block or flow style."""
        lines, line, start = self._value_at(path)
        text = lines[line - 1]
        end = _scalar_end(text, start)
        written = json.dumps(value) if isinstance(value, (str, bool)) else str(value)
        lines[line - 1] = text[:start] + written + text[end:]
        self._write_lines(lines)
        assert self.at(*path) == value, (self.path.name, path)

    def rename_key(self, path: tuple, new: str) -> None:
        """Rename the key at `path` (block or flow mapping), its value left as it is."""
        line, col = self._where(path)
        lines = self.text.splitlines(keepends=True)
        text = lines[line - 1]
        key = str(path[-1])
        assert text[col - 1:col - 1 + len(key) + 1] == key + ":", (self.path.name, path, text)
        lines[line - 1] = text[:col - 1] + new + text[col - 1 + len(key):]
        self._write_lines(lines)


def _scalar_end(text: str, start: int) -> int:
    """Where the one-line scalar starting at `start` ends: its closing quote, or (plain) the flow
    indicator, comment or line end after it."""
    quote = text[start]
    if quote in "'\"":
        at = start + 1
        while True:
            if text[at] == "\\" and quote == '"':
                at += 2
            elif text[at] == quote and quote == "'" and text[at + 1:at + 2] == "'":
                at += 2
            elif text[at] == quote:
                return at + 1
            else:
                at += 1
    at = start
    while at < len(text) and text[at] not in ",]}\n" and text[at:at + 2] != " #":
        at += 1
    return len(text[:at].rstrip())
