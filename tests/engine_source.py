"""The package's modules, each parsed and walked once per test process.

Several checks read every module's syntax tree (error codes, catalogued refusals, the analysts'
docs, imports, the SDK seam); parsing and walking the ~260 modules cost about 1.5 s a pass, and the
checks made a dozen passes. The trees are only read, never changed.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import NamedTuple

ENGINE = Path(__file__).resolve().parents[1] / "engine"
PACKAGE = ENGINE / "groundrules"


class Module(NamedTuple):
    path: Path
    tree: ast.Module
    nodes: tuple          # every node of the tree, in ast.walk's order


@functools.cache
def modules(root: Path = PACKAGE) -> tuple[Module, ...]:
    """Every module under `root` (the package by default), in path order."""
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        out.append(Module(path, tree, tuple(ast.walk(tree))))
    return tuple(out)
