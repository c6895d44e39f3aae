"""Finding, reading, parsing and shape-checking table files against their kind's metaschema.

Problems come from jsonschema's structured fields (validator, path, instance), never from its
message text, and every one is pinned to file:line:col with a did-you-mean where one helps.
jsonschema is imported only when a shape is checked or explained: a process that runs on a cached
verdict (rulecache.py) never needs it.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, NamedTuple

from . import bounded_patterns, capped, limits, punctuation
from .errors import Fault, Problem, RulesError, did_you_mean, echo
from .yamlsrc import Source, YamlProblem, dotted

if TYPE_CHECKING:
    import jsonschema

SCHEMA_GLOB = "*.schema.json"


class Memoized:
    """For frozen dataclasses with a `memo: dict` field: values derived from the object, built once."""

    memo: dict

    def memoized(self, key: Any, build: Callable[[], Any]) -> Any:
        """Compiled checkers, flattened pattern lists: built on first use, then kept on the object,
        so they live and die with it and no id() can ever alias another one."""
        try:
            return self.memo[key]
        except KeyError:
            value = self.memo[key] = build()
            return value


@dataclass(frozen=True)
class Schemas(Memoized):
    """Every JSON Schema under schemas/, by file name relative to it, plus a $ref registry."""

    by_name: dict
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def registry(self) -> Any:
        """Every schema under its path and its bare file name, for `$ref`s (built on first use)."""
        return self.memoized("registry", self._registry)

    def _registry(self) -> Any:
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012
        resources = []
        for name, schema in self.by_name.items():
            resource = Resource.from_contents(schema, default_specification=DRAFT202012)
            resources.append((name, resource))
            resources.append((name.rsplit("/", 1)[-1], resource))
        return Registry().with_resources(resources)

    def get(self, name: str) -> dict | None:
        return self.by_name.get(name)

    def kind_schema(self, kind: str) -> dict | None:
        return self.by_name.get(f"kinds/{kind}.schema.json")

    def kinds(self) -> list[str]:
        return sorted(n[len("kinds/"):-len(".schema.json")] for n in self.by_name
                      if n.startswith("kinds/") and n != "kinds/common.schema.json")

    def validator(self, schema: dict) -> "jsonschema.protocols.Validator":
        """A jsonschema validator for `schema`, built when first asked something: the compiled fast
        checks answer "valid?" on hot paths, and jsonschema runs only to explain a failure. Its
        `pattern`s run within their time budget (bounded_patterns)."""
        return _Deferred(lambda: self._validator(schema))

    def _validator(self, schema: dict) -> "jsonschema.protocols.Validator":
        import jsonschema
        cls = bounded_patterns.bounded(jsonschema.validators.validator_for(
            schema, default=jsonschema.Draft202012Validator))
        return cls(schema, registry=self.registry)


class _Deferred:
    """Stands for an object built on first attribute access (a jsonschema validator: importing
    jsonschema costs more than a whole cached command)."""

    __slots__ = ("_build", "_built")

    def __init__(self, build: Callable[[], Any]):
        self._build, self._built = build, None

    def __getattr__(self, name: str) -> Any:
        if self._built is None:
            self._built = self._build()
        return getattr(self._built, name)


class FileSet(NamedTuple):
    """The bytes of every table and schema file of a root, read once: what a load compiles and what
    its cache key hashes, so the two can never see different contents. An unreadable file holds
    the name of the error instead of bytes."""

    tables: tuple            # ((display path, bytes | error name), ...) in load order
    schemas: tuple           # ((name under schemas/, bytes | error name), ...) sorted

    def digest(self) -> str:
        h = hashlib.sha256()
        for group in (self.tables, self.schemas):
            h.update(b"\x00group")
            for name, data in group:
                h.update(name.encode("utf-8", "surrogatepass") + b"\x00")
                h.update(data if isinstance(data, bytes) else b"\x01" + data.encode())
                h.update(b"\x00")
        return h.hexdigest()


TOO_LARGE = "too-large"


def _read(path: Path) -> bytes | str:
    """The file's bytes (at most capped.TABLE_BYTES: a device or a huge file is not read whole), or
    why they could not be read."""
    try:
        return capped.read_file(path, capped.TABLE_BYTES)
    except capped.TooLarge:
        return TOO_LARGE
    except OSError as exc:
        return type(exc).__name__


def read_files(base: Path, dirs: tuple[str, ...], files: list[Path] | None = None,
               overrides: Mapping[str, bytes] | None = None) -> FileSet:
    """Every table under base/<dirs> (or just `files`, a list of files and folders) and every
    schema under base/schemas, as bytes; a table whose display path `overrides` names is read from
    there instead of the disk (an editor's unsaved copy, checked as if saved)."""
    if files is None:
        paths = [(p, p.relative_to(base).as_posix()) for p in table_files(base, dirs)]
    else:
        paths = []
        for f in files:
            found = sorted(Path(f).rglob("*.yaml")) if Path(f).is_dir() else [Path(f)]
            paths += [(p, p.as_posix()) for p in found]
    schema_base = base / "schemas"
    schemas = tuple((p.relative_to(schema_base).as_posix(), _read(p))
                    for p in sorted(schema_base.rglob(SCHEMA_GLOB)))
    edited = overrides or {}
    return FileSet(tuple((display, edited[display] if display in edited else _read(p)) for p, display in paths),
                   schemas)


@dataclass
class CompileContext:
    """What a compiler may consult: the schemas, the time its table's own patterns may run per
    search (the limits table's patterns.table_budget_ms, bound into what it compiles), and where to
    put its faults."""

    schemas: Schemas
    source: Source
    faults: list = field(default_factory=list)
    table_budget_s: float = limits.DEFAULT_TABLE_BUDGET_MS / 1000

    def fault(self, code: str, message: str, path: tuple = (), hint: str = "",
              severity: str = "error", also: tuple = ()) -> None:
        self.faults.append(Fault(code, message, tuple(path), hint, severity, tuple(also)))


def load_schemas(root: Path, files: tuple | None = None) -> Schemas:
    """Every schema under root/schemas (or the (name, bytes) pairs of `files`, as read_files gives
    them); a file that is not a JSON object fails the load, located."""
    if files is None:
        files = read_files(root, ()).schemas
    by_name, problems = {}, []
    for name, data in files:
        schema, problem = _read_schema(data, f"schemas/{name}")
        if problem is not None:
            problems.append(problem)
        else:
            by_name[name] = schema
    if problems:
        raise RulesError(problems)
    return Schemas(by_name)


def _read_schema(data: bytes | str, display: str) -> tuple[Any, Problem | None]:
    if isinstance(data, str):
        return None, Problem(display, 1, 1, "unreadable", f"cannot read schema: {data}")
    try:
        schema = json.loads(data.decode("utf-8"), parse_constant=_not_json)
    except UnicodeDecodeError as exc:
        return None, Problem(display, 1, 1, "unreadable", f"cannot read schema: {type(exc).__name__}")
    except json.JSONDecodeError as exc:
        return None, Problem(display, exc.lineno, exc.colno, "bad-schema", f"invalid JSON: {exc.msg}")
    except (ValueError, RecursionError) as exc:
        return None, Problem(display, 1, 1, "bad-schema", f"invalid JSON: {exc}"[:120])
    if not isinstance(schema, dict):
        return None, Problem(display, 1, 1, "bad-schema", "a schema file must hold a JSON object")
    return schema, None


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def schema_problems(schemas: Schemas) -> list[Problem]:
    """Schemas that break their JSON Schema metaschema (`"type": "strng"`). Checked by lint, not on
    every load: it costs more than compiling all the tables."""
    out = []
    for name, schema in sorted(schemas.by_name.items()):
        found = _metaschema_fault(json.dumps(schema, ensure_ascii=False))
        if found is not None:
            where, rule = found
            out.append(Problem(f"schemas/{name}", 1, 1, "bad-schema",
                               f"not a valid JSON Schema at {where} ('{rule}' rule)", where))
    return out


@lru_cache(maxsize=1024)
def _metaschema_fault(text: str) -> tuple[str, str] | None:
    """(where, which rule) a schema's text breaks in its metaschema, or None. Remembered per text:
    the check is a pure function of it, and lint over an edited copy of the tables meets the same
    schemas again."""
    import jsonschema
    from jsonschema.exceptions import best_match
    schema = json.loads(text)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    error = best_match(cls(cls.META_SCHEMA).iter_errors(schema))
    if error is None:
        return None
    return dotted(tuple(error.absolute_path)) or "(root)", str(error.validator)


def table_files(root: Path, dirs: tuple[str, ...]) -> list[Path]:
    out: list[Path] = []
    for d in dirs:
        if (root / d).is_dir():
            out += sorted((root / d).rglob("*.yaml"))
    return out


def read_source(data: bytes | str, display: str) -> tuple[Source | None, list[tuple[Fault, int, int, str]]]:
    """Parse one file's bytes (or the name of the error reading it); a syntax problem is returned
    located, never raised."""
    if data == TOO_LARGE:
        return None, [(Fault("too-large", f"a table may be at most {capped.words(capped.TABLE_BYTES)}"), 1, 1, "")]
    if isinstance(data, str):
        return None, [(Fault("unreadable", f"cannot read table: {data}"), 1, 1, "")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [(Fault("unreadable", f"cannot read table: {type(exc).__name__}"), 1, 1, "")]
    from .yamlparse import parse       # PyYAML: only when a table is read, not from the verdict cache
    try:
        return parse(text, display), []
    except YamlProblem as exc:
        hint = ("remove one of the two: YAML would silently keep the last" if exc.code == "duplicate-key"
                else "")
        return None, [(Fault(exc.code, exc.message, (), hint), exc.line, exc.column, exc.key)]


def shape_faults(source: Source, schemas: Schemas) -> list[Fault]:
    """Kind and metaschema checks; an empty list means the table may be compiled. A metaschema that
    jsonschema cannot apply raises RulesError naming the schema file, not the table."""
    data = source.data
    if not isinstance(data, dict):
        return [Fault("bad-table", "a table file must be a mapping with 'kind' and 'id'", (),
                      "start the file with 'kind: <table kind>' and 'id: <table id>'")]
    import jsonschema
    from referencing.exceptions import Unresolvable
    kind = data.get("kind")
    kinds = schemas.kinds()
    schema = schemas.kind_schema(kind) if isinstance(kind, str) else None
    if schema is None:
        return [Fault("unknown-kind", f"unknown table kind {kind!r}", ("kind",),
                      did_you_mean(kind, kinds) or "kinds: " + ", ".join(kinds))]
    validator = schemas.validator(schema)
    try:
        errors = sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.validator))
    except (jsonschema.exceptions.SchemaError, jsonschema.exceptions.UnknownType, Unresolvable) as exc:
        raise RulesError([Problem(f"schemas/kinds/{kind}.schema.json", 1, 1, "bad-schema",
                                  f"the metaschema of kind '{kind}' is broken ({type(exc).__name__}); "
                                  "groundrules lint names the rule")]) from None
    faults: list[Fault] = []
    for error in errors:
        faults.extend(_to_faults(error))
    return faults


def _to_faults(error: "jsonschema.ValidationError") -> Iterator[Fault]:
    path = tuple(error.absolute_path)
    v, value, instance = error.validator, error.validator_value, error.instance
    if v in ("oneOf", "anyOf") and error.context:
        from jsonschema.exceptions import best_match
        yield from _to_faults(best_match(error.context))
        return
    if v == "required":
        for key in value:
            if isinstance(instance, dict) and key not in instance:
                yield Fault("missing-key", f"missing required key '{key}'", path, f"add '{key}:'")
        return
    if v == "additionalProperties":
        allowed = tuple(error.schema.get("properties", {}))
        patterns = tuple(error.schema.get("patternProperties", {}))
        for key in instance:
            if key not in allowed and not any(_pattern_ok(p, key) for p in patterns) and punctuation.found(key):
                yield Fault("full-width-punctuation", *punctuation.fault_words(key)[:1], path + (key,),
                            punctuation.fault_words(key)[1])
            elif key not in allowed and not any(_pattern_ok(p, key) for p in patterns):
                yield Fault("unknown-key", f"unknown key '{echo(key)}'", path + (key,),
                            did_you_mean(key, allowed) or "allowed keys: " + ", ".join(allowed))
        return
    if v == "propertyNames":
        yield Fault("bad-key", f"key {show(error.instance, strings=True)} is not allowed here", path)
        return
    if v in ("enum", "const"):
        choices = value if v == "enum" else [value]
        shown = ", ".join(show(a, strings=True) for a in choices)
        yield Fault("bad-value", f"{show(instance, strings=True)} is not one of: {shown}", path,
                    did_you_mean(instance, [a for a in choices if isinstance(a, str)]))
        return
    if v == "type":
        yield Fault("bad-type", f"expected {_type_words(value)}, got {_json_type(instance)}", path)
        return
    words = {"minItems": "at least {} item(s)", "maxItems": "at most {} item(s)",
             "minLength": "at least {} character(s)", "pattern": "text matching /{}/",
             "minimum": "a number ≥ {}", "maximum": "a number ≤ {}", "uniqueItems": "unique items",
             "minProperties": "at least {} key(s)"}
    if v in words:
        yield Fault("bad-value", f"expected {words[v].format(value)}, got {show(instance)}", path)
        return
    yield Fault("schema-violation", f"does not satisfy the table's '{v}' rule", path)


def show(value: Any, strings: bool = False) -> str:
    """A value as JSON (null, 3, "text"), shortened. Strings only where asked (`strings`, for
    enum/const mismatches, whose values are codes): elsewhere a string may be personal data, so
    only its length is said."""
    if isinstance(value, str) and not strings:
        return f"a string of {len(value)} characters"
    if isinstance(value, (list, dict)):
        return f"an {'array' if isinstance(value, list) else 'object'} of {len(value)} items"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _pattern_ok(pattern: str, key: str) -> bool:
    return bounded_patterns.search(pattern, key) is not None     # the pattern may be a caller's


def _type_words(value: Any) -> str:
    return " or ".join(value) if isinstance(value, list) else str(value)


def _json_type(instance: Any) -> str:
    if instance is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(instance), type(instance).__name__)


def location(source: Source, path: tuple) -> tuple[int, int, str]:
    line, col = source.where(path)
    return line, col, dotted(path)
