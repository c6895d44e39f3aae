"""A table's data with the position of every key path, so every problem can name file:line:col.

Reading YAML into a Source is yamlparse.py's job; a Source can also come back from the verdict
cache (rulecache.py), which is why this module does not need PyYAML.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from .errors import echo

Path = tuple  # a key path: str keys and int indices


class Source(NamedTuple):
    """One parsed YAML document with the 1-based position of every key path."""

    file: str
    data: Any
    positions: dict
    # (key path, text) of every unquoted value YAML 1.1 reads as a boolean though it is not
    # true/false (`yes`, `no`, `on`, `off`, `y`, `n`): lint asks which was meant
    yaml11_booleans: tuple = ()

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


def undotted(text: str) -> Path:
    """The key path a dotted text names (`rows[3].when.all[0]` -> ('rows', 3, 'when', 'all', 0)):
    the inverse of `dotted` for the keys of table grammar, which hold no '.' or '['."""
    out: list = []
    for part in text.split(".") if text else ():
        name, *indices = part.split("[")
        if name:
            out.append(name)
        out += [int(i.rstrip("]")) for i in indices]
    return tuple(out)


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


