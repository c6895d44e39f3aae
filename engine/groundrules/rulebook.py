"""Tables -> one immutable, versioned Rulebook; a bad table fails the whole load.

Each table kind has a metaschema (`schemas/kinds/<kind>.schema.json`) and a compiler listed in
COMPILERS. A compiler gets the table's data and a CompileContext, reports Faults by key path and
returns the compiled table; the loader turns faults into file:line:col Problems.
"""
from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from . import canonical
from .errors import Fault, Problem, RulesError
from .resources import TABLE_DIRS, data_root  # noqa: F401 - re-exported for the CLI
from .tables import Memoized, Schemas, load_schemas, location, read_source, shape_faults, table_files
from .yamlsrc import Source

# kind -> "module:function" compiling it. Behaviour as data: one dispatch table.
COMPILERS: dict[str, str] = {
    "decision_table": "groundrules.decide:compile_table",
    "transition_table": "groundrules.findings.transitions:compile_transition_table",
    "finding_vocabulary": "groundrules.findings.vocabulary:compile_vocabulary",
    "lock_patterns": "groundrules.locks.compile:compile_lock_patterns",
    "extension_schema": "groundrules.verification.instances:compile_instance",
    "verify_issue_catalogue": "groundrules.verification.catalogue:compile_catalogue",
    "prohibition_phrases": "groundrules.verification.phrases:compile_phrases",
    "intent_heuristics": "groundrules.verification.heuristics:compile_heuristics",
    "event_catalogue": "groundrules.evidence.catalogue:compile_catalogue",
    "merge_policy": "groundrules.evidence.policy:compile_policy",
    "refusal_catalogue": "groundrules.evidence.refusals:compile_refusals",
    "shape_map": "groundrules.evidence.shapes:compile_shapes",
    "role_table": "groundrules.access:compile_role_table",
}


@dataclass
class CompileContext:
    """What a compiler may consult: the schemas, and where to put its faults."""

    schemas: Schemas
    source: Source
    faults: list = field(default_factory=list)

    def fault(self, code: str, message: str, path: tuple = (), hint: str = "",
              severity: str = "error") -> None:
        self.faults.append(Fault(code, message, tuple(path), hint, severity))


@dataclass(frozen=True)
class Rulebook(Memoized):
    """Compiled tables by id; `version` is the content hash of every table's data and every schema."""

    version: str
    root: str
    tables: Mapping[str, Any]
    sources: Mapping[str, Source]
    schemas: Schemas = field(repr=False, compare=False)
    warnings: tuple = ()
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    def table(self, table_id: str) -> Any:
        return self.tables[table_id]

    def of_kind(self, kind: str) -> tuple:
        return tuple(t for _, t in sorted(self.tables.items()) if t.kind == kind)


def _compiler(kind: str):
    module, func = COMPILERS[kind].split(":")
    return getattr(importlib.import_module(module), func)


def load(root: Path | str | None = None, files: list[Path] | None = None) -> Rulebook:
    """Load every table under root/rules and root/locks (or just `files`); raise RulesError listing
    every problem."""
    base = Path(root) if root is not None else data_root()
    if not (base / "schemas").is_dir():
        raise RulesError([Problem(str(base), 1, 1, "no-schemas", "folder has no schemas/ directory",
                                  hint="point the loader at a folder holding rules/, locks/ and schemas/")])
    schemas = load_schemas(base)
    problems: list[Problem] = []
    warnings: list[Problem] = []
    tables: dict[str, Any] = {}
    sources: dict[str, Source] = {}
    hashed: dict[str, Any] = {}
    for path, display in _table_paths(base, files):
        source, syntax = read_source(path, display)
        if source is None:
            problems += [Problem(display, line, col, f.code, f.message, key, f.hint)
                         for f, line, col, key in syntax]
            continue
        try:
            faults = shape_faults(source, schemas)
        except RulesError as exc:
            problems += exc.problems
            continue
        compiled = None
        if not faults and source.data["kind"] not in COMPILERS:
            faults = [Fault("unknown-kind", f"table kind '{source.data['kind']}' has a metaschema but no "
                            "compiler", ("kind",), "register the kind's compiler in rulebook.COMPILERS")]
        if not faults:
            ctx = CompileContext(schemas, source)
            compiled = _compiler(source.data["kind"])(source.data, ctx)
            faults = ctx.faults
        for f in faults:
            line, col, key = location(source, f.path)
            problem = Problem(display, line, col, f.code, f.message, key, f.hint, f.severity)
            (warnings if f.severity == "warning" else problems).append(problem)
        if compiled is None or any(f.severity == "error" for f in faults):
            continue
        table_id = source.data["id"]
        if table_id in tables:
            line, col, key = location(source, ("id",))
            problems.append(Problem(display, line, col, "duplicate-table-id",
                                    f"table id '{table_id}' is also used by {sources[table_id].file}", key,
                                    "give every table a unique id"))
            continue
        tables[table_id] = compiled
        sources[table_id] = source
        hashed[table_id] = source.data
    if problems:
        raise RulesError(problems)
    # the schemas decide too (what a valid input is, which codes a table must produce)
    version = canonical.digest({"tables": hashed, "schemas": schemas.by_name})[:16]
    return Rulebook(version=version, root=str(base),
                    tables=MappingProxyType(tables), sources=MappingProxyType(sources),
                    schemas=schemas, warnings=tuple(sorted(warnings)))


def _table_paths(base: Path, files: list[Path] | None) -> list[tuple[Path, str]]:
    if files is None:
        return [(p, p.relative_to(base).as_posix()) for p in table_files(base, TABLE_DIRS)]
    out = []
    for f in files:
        paths = sorted(Path(f).rglob("*.yaml")) if Path(f).is_dir() else [Path(f)]
        out += [(p, p.as_posix()) for p in paths]
    return out


class Holder:
    """The current rulebook of a long-lived host; `reload` swaps only after a clean compile."""

    def __init__(self, root: Path | str | None = None):
        self._root = root
        self._lock = threading.Lock()
        self._current = load(root)

    @property
    def current(self) -> Rulebook:
        return self._current

    def reload(self) -> Rulebook:
        """Compile anew; on RulesError the old rulebook stays in force and the error propagates."""
        fresh = load(self._root)
        with self._lock:
            self._current = fresh
        return fresh


_default: Rulebook | None = None
_default_lock = threading.Lock()


def default() -> Rulebook:
    """The bundled rulebook, compiled once per process on first use."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = load()
    return _default
