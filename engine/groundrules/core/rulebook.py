"""Tables -> one immutable, versioned Rulebook; a bad table fails the whole load.

Each table kind has a metaschema (`schemas/kinds/<kind>.schema.json`) and a compiler listed in
`compilers.COMPILERS`. A compiler gets the table's data and a CompileContext, reports Faults by key
path and returns the compiled table; the loader turns faults into file:line:col Problems.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from types import MappingProxyType
from collections.abc import Mapping
from typing import Any

from . import canonical, limits, rulecache
from .compilers import COMPILERS
from .errors import Fault, Problem, RulesError
from .resources import TABLE_DIRS, data_root  # noqa: F401 - re-exported for the CLI
from .tables import (CompileContext, FileSet, Memoized, Schemas, load_schemas, location, read_files, read_source,
                     shape_faults)
from .yamlsrc import Source


@dataclass(frozen=True)
class Rulebook(Memoized):
    """Compiled tables by id; `version` is the content hash of every table's data and every schema.
    On a cached verdict (rulecache.py) `tables` and `sources` compile each table on first use."""

    version: str
    root: str
    tables: Mapping[str, Any]
    sources: Mapping[str, Source]
    schemas: Schemas = field(repr=False, compare=False)
    warnings: tuple = ()
    memo: dict = field(default_factory=dict, compare=False, repr=False)
    kinds: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)   # id -> kind

    def table(self, table_id: str) -> Any:
        return self.tables[table_id]

    def speaking(self, lang: str) -> "Rulebook":
        """This rulebook with every table's messages in `lang` (a language the message catalogue
        declares): the same tables, version and schemas, so it decides exactly as this one does and
        only its sentences differ. One view per language, kept."""
        from .messages import speaking
        return self.memoized(("speaking", lang), lambda: replace(
            self, tables=_Speaking(self.tables, lang, speaking), memo={}))

    def of_kind(self, kind: str) -> tuple:
        return tuple(self.tables[i] for i in sorted(self.kinds) if self.kinds[i] == kind)

    def decision_tables(self) -> list[tuple[Any, Source, tuple]]:
        """Every decision table with its file and the key path of its data in that file: the tables
        of kind decision_table (path ()), and those inside another table (a merge policy's
        `resolve`: id `merge.resolve`, path ("resolve",))."""
        from .decide import DecisionTable
        out: list[tuple[Any, Source, tuple]] = []
        for table_id in sorted(self.tables):
            table, source = self.tables[table_id], self.sources[table_id]
            if isinstance(table, DecisionTable):
                out.append((table, source, ()))
                continue
            names = [f.name for f in fields(table)] if is_dataclass(table) else getattr(table, "_fields", ())
            out += [(getattr(table, name), source, (name,)) for name in names
                    if isinstance(getattr(table, name), DecisionTable)]
        return out


def load(root: Path | str | None = None, files: list[Path] | None = None, *, cache: bool = True,
         overrides: Mapping[str, bytes] | None = None) -> Rulebook:
    """Load every table under root/rules and root/locks (or just `files`); raise RulesError listing
    every problem. A whole root whose exact bytes loaded clean before (and `cache`) comes back
    from the cached verdict, its tables compiled on first use. `overrides` (display path -> bytes)
    stands in for the files it names (read_files)."""
    base = Path(root) if root is not None else data_root()
    if not (base / "schemas").is_dir():
        raise RulesError([Problem(str(base), 1, 1, "no-schemas", "folder has no schemas/ directory",
                                  hint="point the loader at a folder holding rules/, locks/ and schemas/")])
    found = read_files(base, TABLE_DIRS, files, overrides)
    content_key = rulecache.key(found) if cache and files is None else None
    verdict = rulecache.find(content_key) if content_key else None
    if verdict is not None:
        return _from_verdict(base, found, verdict)
    book = _compile_all(base, found)
    if content_key:
        rulecache.keep(content_key, {
            "version": book.version, "warnings": [w.as_dict() for w in book.warnings],
            "tables": [[t, book.kinds[t], book.sources[t].file] for t in book.tables]}, prune=False)
        data = dict(found.tables)
        for source in book.sources.values():
            source_key = rulecache.source_key(data[source.file])
            if not rulecache.touch(source_key):
                rulecache.keep_source(source_key, source, prune=False)
        rulecache.prune()
    return book


class _Compiled:
    """What checking and compiling one table file gave, remembered per process by its name, its
    bytes and the schemas' bytes (a pure function of them): a host or a test that loads many edits
    of one rulebook compiles only the tables an edit touched (each one's YAML parse, metaschema
    check and compile cost ~40 ms; a whole uncached load 1.2 s). The compiler is remembered too,
    so an engine changed in place (a test's stand-in compiler) compiles afresh."""

    SIZE = 512

    def __init__(self) -> None:
        self._entries: dict[tuple, tuple] = {}
        self._unchecked: dict[tuple, tuple] = {}
        self._parsed: dict[tuple, tuple] = {}
        self._schemas: dict[tuple, tuple[Schemas, str]] = {}
        self._lock = threading.Lock()

    def schemas(self, base: Path, files: tuple) -> tuple[Schemas, str]:
        with self._lock:
            hit = self._schemas.get(files)
        if hit is None:
            hit = (load_schemas(base, files), canonical.digest([[n, d.hex() if isinstance(d, bytes) else d]
                                                               for n, d in files]))
            with self._lock:
                if len(self._schemas) >= 8:
                    self._schemas.pop(next(iter(self._schemas)))
                self._schemas[files] = hit
        return hit

    def parsed(self, display: str, data: bytes | str) -> tuple:
        """(source or None, syntax problems) of one file: read once for the limits it holds and
        once for compiling, parsed once."""
        key = (display, data)
        with self._lock:
            hit = self._parsed.get(key)
        if hit is None:
            hit = read_source(data, display)
            with self._lock:
                if len(self._parsed) >= self.SIZE:
                    self._parsed.pop(next(iter(self._parsed)))
                self._parsed[key] = hit
        return hit

    def table(self, display: str, data: bytes | str, schemas: Schemas, schemas_key: str,
              table_budget_s: float) -> tuple:
        """(source, syntax problems, faults, compiled) of one file, its patterns bound to `table_budget_s`."""
        key = (display, data, schemas_key, table_budget_s)
        with self._lock:
            hit = self._entries.get(key)
        if hit is not None and hit[4] is _compiler_of(hit[0]):
            return hit[:4]
        entry = (*_check_and_compile(display, data, schemas, table_budget_s), None)
        entry = (*entry[:4], _compiler_of(entry[0]))
        with self._lock:
            if len(self._entries) >= self.SIZE:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key] = entry
        return entry[:4]

    def unchecked(self, display: str, data: bytes, kind: str, schemas: Schemas, schemas_key: str,
                  table_budget_s: float) -> tuple[Any, Source | None]:
        """(compiled or None, source) of one file of a cached verdict, without the metaschema
        check those bytes passed before: every load of that verdict in this process shares it (a
        test process loads the bundled tables dozens of times; each compile of them cost ~0.4 s)."""
        key = (display, data, schemas_key, table_budget_s)
        compiler = COMPILERS.get(kind)
        with self._lock:
            hit = self._entries.get(key) or self._unchecked.get(key)
        if hit is not None and hit[4] is compiler and hit[3] is not None and _clean(hit[2]):
            return hit[3], hit[0]
        source = _source(data, display)
        compiled = None
        if compiler is not None and source is not None and isinstance(source.data, dict) \
                and source.data.get("kind") == kind:
            ctx = CompileContext(schemas, source, table_budget_s=table_budget_s)
            compiled = compiler(source.data, ctx)
            if any(f.severity == "error" for f in ctx.faults):
                compiled = None
        with self._lock:
            if len(self._unchecked) >= self.SIZE:
                self._unchecked.pop(next(iter(self._unchecked)))
            self._unchecked[key] = (source, (), (), compiled, compiler)
        return compiled, source


def _clean(faults: Any) -> bool:
    return not isinstance(faults, RulesError) and not any(f.severity == "error" for f in faults)


def _compiler_of(source: Source | None) -> Any:
    kind = source.data.get("kind") if source is not None and isinstance(source.data, dict) else None
    return COMPILERS.get(kind) if isinstance(kind, str) else None


def _check_and_compile(display: str, data: bytes | str, schemas: Schemas, table_budget_s: float) -> tuple:
    source, syntax = _COMPILED.parsed(display, data)
    if source is None:
        return None, syntax, [], None
    try:
        faults = shape_faults(source, schemas)
    except RulesError as exc:
        return source, [], exc, None
    compiled = None
    if not faults and source.data["kind"] not in COMPILERS:
        faults = [Fault("unknown-kind", f"table kind '{source.data['kind']}' has a metaschema but no "
                        "compiler", ("kind",), "register the kind's compiler in compilers.COMPILERS")]
    if not faults:
        ctx = CompileContext(schemas, source, table_budget_s=table_budget_s)
        compiled = COMPILERS[source.data["kind"]](source.data, ctx)
        faults = ctx.faults
    return source, syntax, faults, compiled


_COMPILED = _Compiled()


def _compile_all(base: Path, found: FileSet) -> Rulebook:
    """Every table checked against its metaschema and compiled; RulesError with every problem."""
    schemas, schemas_key = _COMPILED.schemas(base, found.schemas)
    problems: list[Problem] = []
    warnings: list[Problem] = []
    tables: dict[str, Any] = {}
    sources: dict[str, Source] = {}
    hashed: dict[str, Any] = {}
    budget_s = _table_budget_s(found)
    for display, data in found.tables:
        source, syntax, faults, compiled = _COMPILED.table(display, data, schemas, schemas_key, budget_s)
        if source is None:
            problems += [Problem(display, line, col, f.code, f.message, key, f.hint)
                         for f, line, col, key in syntax]
            continue
        if isinstance(faults, RulesError):
            problems += faults.problems
            continue
        for f in faults:
            line, col, key = location(source, f.path)
            message = f.message
            if f.also:
                other = location(source, f.also)
                message += f" (also at line {other[0]}:{other[1]})"
            problem = Problem(display, line, col, f.code, message, key, f.hint, f.severity)
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
                    schemas=schemas, warnings=tuple(sorted(warnings)),
                    kinds=MappingProxyType({t: sources[t].data["kind"] for t in tables}))


def _table_budget_s(found: FileSet) -> float:
    """The time the tables' own patterns may run per search: the limits table's, read before any
    other table compiles (each binds it into its patterns)."""
    for display, data in found.tables:
        source, _ = _COMPILED.parsed(display, data)
        if source is not None and limits.is_limits_table(source.data):
            return limits.table_budget_s(source.data)
    return limits.table_budget_s(None)


def _from_verdict(base: Path, found: FileSet, verdict: dict) -> Rulebook:
    """The rulebook a clean load of these very bytes gave: same version and warnings, each table
    compiled from the bytes that were hashed when first asked for."""
    schemas, schemas_key = _COMPILED.schemas(base, found.schemas)
    store = _OnFirstUse(base, found, schemas, schemas_key,
                        {t: (kind, file) for t, kind, file in verdict["tables"]})
    return Rulebook(version=verdict["version"], root=str(base), tables=store.tables, sources=store.sources,
                    schemas=schemas, warnings=tuple(Problem(**w) for w in verdict["warnings"]),
                    kinds=MappingProxyType({t: kind for t, kind, _ in verdict["tables"]}))


class _OnFirstUse:
    """Tables compiled when first read, under a lock. These bytes compiled clean before, so the
    metaschema check is skipped; should a table not come out as the verdict says (an engine
    changed in place), the whole set is compiled again and its own answer, or its problems, used."""

    def __init__(self, base: Path, found: FileSet, schemas: Schemas, schemas_key: str, index: dict):
        self._base, self._found, self._schemas, self._index = base, found, schemas, index
        self._schemas_key = schemas_key
        self._data = dict(found.tables)
        self._done: dict[str, tuple[Any, Source]] = {}
        self._budget_s: float | None = None
        self._lock = threading.Lock()
        self.tables = _View(self, 0)
        self.sources = _View(self, 1)

    def ids(self) -> list[str]:
        return list(self._index)

    def get(self, table_id: str) -> tuple[Any, Source]:
        with self._lock:
            if table_id not in self._done:
                self._done[table_id] = self._compile(table_id)
            return self._done[table_id]

    def _table_budget_s(self) -> float:
        """The limits table's budget for the tables' own patterns, read from its source once."""
        if self._budget_s is None:
            kind, file = self._index.get(limits.LIMITS_TABLE, (None, ""))
            source = _source(self._data.get(file, "missing"), file) if kind == "limits" else None
            self._budget_s = limits.table_budget_s(source.data if source is not None else None)
        return self._budget_s

    def _compile(self, table_id: str) -> tuple[Any, Source]:
        kind, file = self._index[table_id]
        data = self._data.get(file, "missing")
        compiled, source = (_COMPILED.unchecked(file, data, kind, self._schemas, self._schemas_key,
                                                self._table_budget_s())
                            if isinstance(data, bytes) else (None, None))
        if source is None or compiled is None or getattr(compiled, "id", None) != table_id:
            book = _compile_all(self._base, self._found)          # raises RulesError if it must
            return book.tables[table_id], book.sources[table_id]
        return compiled, source


def _source(data: bytes | str, file: str) -> Source | None:
    """A table file's parsed form: from the cache when these bytes were read before, else read."""
    if not isinstance(data, bytes):
        return None
    content_key = rulecache.source_key(data)
    source = rulecache.find_source(content_key, file)
    if source is None:
        source, _ = read_source(data, file)
        if source is not None:
            rulecache.keep_source(content_key, source)
    return source


class _View(Mapping):
    """A read-only mapping of table id -> compiled table (part 0) or its Source (part 1)."""

    def __init__(self, store: _OnFirstUse, part: int):
        self._store, self._part = store, part

    def __getitem__(self, table_id: str) -> Any:
        if table_id not in self._store._index:
            raise KeyError(table_id)
        return self._store.get(table_id)[self._part]

    def __iter__(self):
        return iter(self._store.ids())

    def __len__(self) -> int:
        return len(self._store._index)

    def __contains__(self, table_id: object) -> bool:
        return table_id in self._store._index


class _Speaking(Mapping):
    """The tables of a rulebook, each with its messages bound to one language on first use."""

    def __init__(self, tables: Mapping, lang: str, bind: Any):
        self._tables, self._lang, self._bind = tables, lang, bind
        self._bound: dict[str, Any] = {}

    def __getitem__(self, table_id: str) -> Any:
        try:
            return self._bound[table_id]
        except KeyError:
            bound = self._bound[table_id] = self._bind(self._tables[table_id], self._lang)
            return bound

    def __iter__(self):
        return iter(self._tables)

    def __len__(self) -> int:
        return len(self._tables)

    def __contains__(self, table_id: object) -> bool:
        return table_id in self._tables


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
