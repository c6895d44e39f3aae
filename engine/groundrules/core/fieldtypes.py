"""What each field of a contract may hold, so a literal a row compares it with is checked at load.

`{field: support_status, eq: partail}` or `{field: support_status, gt: 3}` load fine as grammar but
can never fire: the contract's enum has no `partail`, and a status is a string. The shapes come from
the schema's own `type`, `enum` and `const` (through local `$ref`s and `allOf`/`anyOf`/`oneOf`); a
field the schema leaves open accepts any literal.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, NamedTuple

from .conditions import Condition
from .contracts import normalise
from . import punctuation
from .errors import Fault, did_you_mean
from .operators import same

if TYPE_CHECKING:
    from .tables import CompileContext

ORDERING = ("lt", "le", "gt", "ge")
SCALAR_OPS = ("eq", "ne") + ORDERING
LIST_OPS = ("in", "not_in")
_MAX_DEPTH = 12


class Shape(NamedTuple):
    """The JSON types a field may have and the values it may take (None: not constrained);
    `names`: the vocabulary its values are names from (the schema's `x-names`, e.g. `slots`: see
    analyst/references.py), checked by lint."""

    types: frozenset | None
    enum: tuple | None
    names: str | None = None

    def union(self, other: "Shape") -> "Shape":
        types = None if self.types is None or other.types is None else self.types | other.types
        enum = None if self.enum is None or other.enum is None else self.enum + other.enum
        return Shape(types, enum, self.names if self.names == other.names else None)


OPEN = Shape(None, None)


class Contract(NamedTuple):
    """A table's input contract as the loader checks tables against it: every field path with its
    shape, and where in the schema file each object's fields are declared."""

    name: str                 # the file under schemas/
    shapes: dict              # field path -> Shape
    declared: dict            # object path ("" for the whole value) -> JSON pointer of its properties

    def knows(self, path: str) -> bool:
        return path == "." or normalise(path) in self.shapes

    def unknown_field_hint(self, path: str, also: tuple = ()) -> str:
        """A did-you-mean among the fields beside the unknown one (never a field elsewhere in the
        contract; `also`: other names allowed at the top, such as a table's bindings), then where
        to declare a new field: the schema file and the JSON pointer of its properties."""
        parts = normalise(path).split(".")
        depth = 1
        while depth < len(parts) and ".".join(parts[:depth]) in self.shapes:
            depth += 1                                   # parts[depth - 1] is the first unknown one
        parent, leaf = ".".join(parts[:depth - 1]), parts[depth - 1]
        siblings = sorted(self.children(parent))
        choices = siblings + (list(also) if not parent else [])
        import difflib                                   # only a hint needs it
        close = difflib.get_close_matches(leaf, choices, n=1, cutoff=0.6)
        owner = f"'{parent}'" if parent else "the input"
        where = self.declared.get(parent)
        declare = (f"to add a field to {owner}, declare it in schemas/{self.name} under {where}" if where
                   else f"{owner} has no declared fields in schemas/{self.name}")
        if parent.endswith("[]") and leaf in self.children(""):
            return (f"'{leaf}' is a field of the input, not of {owner}: inside a list test write "
                    f"{{field: $.{leaf}}} to read it ({declare})")
        if parent.endswith("[]"):
            declare += "; inside a list test, $.name reads a field of the whole input"
        if close:
            shown = close[0] if close[0] in also or not parent else f"{parent}.{close[0]}"
            return f"did you mean '{shown}'? ({declare})"
        return f"{owner} has: {', '.join(siblings[:12]) or 'nothing'}; {declare}"

    def children(self, parent: str) -> list[str]:
        """The names of the fields directly inside `parent` ('' for the top level)."""
        head = f"{parent}." if parent else ""
        return [p[len(head):] for p in self.shapes
                if p.startswith(head) and "." not in p[len(head):] and not p.endswith("[]")]


def contract_of(data: dict, ctx: CompileContext) -> Contract | None:
    """The contract a table names under `input:` (None when it names none, or an unknown one:
    that is reported here)."""
    name = data.get("input")
    if not name:
        return None
    schema = ctx.schemas.get(name)
    if schema is None:
        ctx.fault("unknown-contract", f"input contract '{name}' is not under schemas/", ("input",),
                  did_you_mean(name, ctx.schemas.by_name))
        return None
    return ctx.schemas.memoized(("contract", "fields", name), lambda: _contract(name, schema))


def contract_named(schemas: Any, name: str) -> Contract | None:
    """The contract `name` under schemas/ (None when there is none), built once per Schemas."""
    schema = schemas.get(name) if name else None
    if schema is None:
        return None
    return schemas.memoized(("contract", "fields", name), lambda: _contract(name, schema))


def _contract(name: str, schema: dict, node: dict | None = None, pointer: str = "#") -> Contract:
    shapes: dict[str, Shape] = {}
    declared: dict[str, str] = {}
    _walk(schema if node is None else node, schema, "", pointer, 0, shapes, declared)
    return Contract(name, shapes, declared)


def tool_data_contract(schemas: Any, tool: str) -> Contract | None:
    """The contract of what a registry tool answers (`$defs.data` of schemas/tools/<tool>.schema.json,
    following a `$ref` into another schema file), or None when the tool declares none."""
    def build() -> Contract | None:
        own = schemas.get(f"tools/{tool}.schema.json")
        data = (own or {}).get("$defs", {}).get("data")
        if not isinstance(data, dict):
            return None
        ref = data.get("$ref")
        if not isinstance(ref, str) or ref.startswith("#"):
            return _contract(f"tools/{tool}.schema.json", own, data, "#/$defs/data")
        file, _, pointer = ref.partition("#")
        name = file.removeprefix("../") if file.startswith("../") else f"tools/{file}"
        root = schemas.get(name)
        node: Any = root
        for part in [p for p in pointer.split("/") if p]:
            node = node.get(part) if isinstance(node, dict) else None
        return _contract(name, root, node, "#" + pointer) if isinstance(node, dict) else None
    return schemas.memoized(("contract", "tool-data", tool), build)


def check_fields(fields: list[tuple[str, tuple]], contract: Contract | None, faults: list[Fault],
                 also: tuple = (), of: str = "the input contract") -> None:
    """A fault for every (field, key path) the contract does not define (`of`: what it is, in words)."""
    if contract is None:
        return
    for path, where in fields:
        if not contract.knows(path):
            wide = punctuation.note(path)
            faults.append(Fault("unknown-field", f"'{path}' is not a field of {of}" + (f": {wide}" if wide else ""),
                                where, contract.unknown_field_hint(path, also)))


def field_shapes(schema: dict) -> dict[str, Shape]:
    """Dotted field path (`missing[].reason`, as contracts.field_paths names them) -> Shape."""
    return _contract("", schema).shapes


def _walk(node: Any, root: dict, prefix: str, pointer: str, depth: int, out: dict, declared: dict) -> None:
    if depth > _MAX_DEPTH or not isinstance(node, dict):
        return
    target = _ref(node, root)
    if target is not None:
        _walk(target, root, prefix, node["$ref"], depth + 1, out, declared)
    for key in ("allOf", "anyOf", "oneOf"):
        for n, sub in enumerate(node.get(key, [])):
            _walk(sub, root, prefix, f"{pointer}/{key}/{n}", depth + 1, out, declared)
    properties = node.get("properties")
    if isinstance(properties, dict):
        declared.setdefault(prefix.rstrip("."), f"{pointer}/properties")
    for name, sub in (properties.items() if isinstance(properties, dict) else ()):
        path = f"{prefix}{name}"
        _add(out, path, _shape(sub, root, depth + 1))
        _walk(sub, root, path + ".", f"{pointer}/properties/{name}", depth + 1, out, declared)
    items = node.get("items")
    if isinstance(items, dict):
        base = prefix.rstrip(".") + "[]"
        _add(out, base, _shape(items, root, depth + 1))
        _walk(items, root, base + ".", f"{pointer}/items", depth + 1, out, declared)


def _add(out: dict, path: str, shape: Shape) -> None:
    out[path] = out[path].union(shape) if path in out else shape


def _ref(node: dict, root: dict) -> Any:
    ref = node.get("$ref")
    if not (isinstance(ref, str) and ref.startswith("#/")):
        return None
    target: Any = root
    for part in ref[2:].split("/"):
        target = target.get(part) if isinstance(target, dict) else None
    return target


def _shape(node: Any, root: dict, depth: int) -> Shape:
    """The shape one subschema gives a value: its own type/enum/const, else what its $ref or
    combinators give (allOf: the first constrained part; anyOf/oneOf: the union of the branches)."""
    if depth > _MAX_DEPTH or not isinstance(node, dict):
        return OPEN
    names = node.get("x-names")
    shape = _own_shape(node, root, depth)
    return shape._replace(names=names) if isinstance(names, str) else shape


def _own_shape(node: dict, root: dict, depth: int) -> Shape:
    enum = tuple(node["enum"]) if isinstance(node.get("enum"), list) else None
    if "const" in node:
        enum = (node["const"],)
    kind = node.get("type")
    types = frozenset([kind] if isinstance(kind, str) else kind) if isinstance(kind, (str, list)) else None
    if types is not None or enum is not None:
        return Shape(types, enum)
    target = _ref(node, root)
    if target is not None:
        return _shape(target, root, depth + 1)
    for part in node.get("allOf", []):
        shape = _shape(part, root, depth + 1)
        if shape != OPEN:
            return shape
    for key in ("anyOf", "oneOf"):
        branches = node.get(key)
        if isinstance(branches, list) and branches:
            shape = _shape(branches[0], root, depth + 1)
            for branch in branches[1:]:
                shape = shape.union(_shape(branch, root, depth + 1))
            return shape
    return OPEN


def json_types(value: Any) -> set[str]:
    """The JSON Schema types a literal satisfies (1.0 is an integer, as jsonschema says)."""
    if value is None:
        return {"null"}
    if value.__class__ is bool:
        return {"boolean"}
    if value.__class__ is int:
        return {"integer", "number"}
    if value.__class__ is float:
        return {"number", "integer"} if value.is_integer() else {"number"}
    if value.__class__ is str:
        return {"string"}
    return set()


def _describe(shape: Shape) -> str:
    if shape.enum is not None:
        return "one of " + ", ".join(_show(v) for v in shape.enum)
    return " or ".join(sorted(shape.types or ()))


def _show(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else repr(value) if value is not None else "null"


def _fits(value: Any, shape: Shape) -> bool:
    if shape.enum is not None:
        return any(same(value, allowed) for allowed in shape.enum)
    return shape.types is None or bool(json_types(value) & shape.types)


def _orderable(value: Any, shape: Shape) -> bool:
    """An ordering test can hold only when the field can be a value of the literal's kind."""
    kinds = {"string"} if value.__class__ is str else {"number", "integer"}
    if shape.enum is not None:
        return any(json_types(v) & kinds for v in shape.enum)
    return shape.types is None or bool(shape.types & kinds)


def check_literals(cond: Condition | None, shapes: dict[str, Shape] | None, faults: list[Fault],
                   prefix: str = "") -> None:
    """A fault for every literal that the contract field it is compared with can never equal (or,
    for lt/le/gt/ge, never be ordered with): such a test is always false, and its row dead."""
    if cond is None or shapes is None:
        return
    for path, node in field_tests(cond, prefix):
        shape = shapes.get(normalise(path))
        if shape is None or shape == OPEN or node.ref:
            continue
        if node.op in ORDERING and not _orderable(node.arg, shape):
            faults.append(Fault(
                "literal-type-mismatch",
                f"'{node.op}' compares '{path}' ({_describe(shape)}) with {_show(node.arg)}: the test can "
                "never hold", node.where + (node.op,),
                "compare with a value of the field's type, or test another field"))
        elif node.op in SCALAR_OPS and node.op not in ORDERING:
            _check_value(path, node.arg, shape, node.where + (node.op,), faults)
        elif node.op in LIST_OPS:
            for i, item in enumerate(node.arg):
                _check_value(path, item, shape, node.where + (node.op, i), faults)


def _check_value(path: str, value: Any, shape: Shape, where: tuple, faults: list[Fault]) -> None:
    if _fits(value, shape):
        return
    if shape.enum is not None:
        words = [v for v in shape.enum if isinstance(v, str)]
        faults.append(Fault("literal-not-in-enum",
                            f"{_show(value)} is not a value '{path}' can take ({_describe(shape)})", where,
                            did_you_mean(value, words) or "use one of the contract's values, or extend its enum"))
    else:
        faults.append(Fault("literal-type-mismatch",
                            f"{_show(value)} is not a {_describe(shape)}, which is what '{path}' holds", where,
                            "write the literal in the field's type (quote numbers that are strings, "
                            "unquote numbers)"))


def field_tests(cond: Condition, prefix: str) -> Iterator[tuple[str, Condition]]:
    """(field path, test node) for every test of `cond`, inner tests with their list prefix."""
    if cond.kind != "test":
        for child in cond.children:
            yield from field_tests(child, prefix)
        return
    own = prefix + cond.field if cond.field != "." else prefix.rstrip(".") or "."
    yield own, cond
    inner = cond.inner()
    if inner is not None:
        yield from field_tests(inner, own + "[].")


def check_given(given: Any, contract: Contract | None, where: tuple, faults: list[Fault],
                prefix: str = "", what: str = "the example") -> None:
    """A fault for every key of an example's `given` that the contract does not define, and every
    value the field can never hold: a row tested on a mistyped key passes whatever it says (the
    test reads a missing field, which is false), so the example would test nothing."""
    if contract is None:
        return
    if isinstance(given, dict):
        for key, item in given.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            at = where + (key,)
            if _open(contract, path):
                continue
            if not contract.knows(path):
                wide = punctuation.note(key)
                hint = contract.unknown_field_hint(path)
                vain = ", so it tests nothing" if what == "the example" else ""
                faults.append(Fault("full-width-punctuation" if wide else "unknown-field",
                                    f"{what} gives '{path}', which is not a field of the input contract "
                                    f"(schemas/{contract.name}){vain}" + (f": {wide}" if wide else ""), at,
                                    f"write: {punctuation.fixed(str(key))}" if wide else hint))
                continue
            check_given(item, contract, at, faults, path, what)
    elif isinstance(given, list) and prefix:
        for i, item in enumerate(given):
            check_given(item, contract, where + (i,), faults, prefix + "[]", what)
    elif prefix:
        shape = contract.shapes.get(normalise(prefix))
        if shape is not None and shape != OPEN and not isinstance(given, (dict, list)):
            _check_value(prefix, given, shape, where, faults)


def _open(contract: Contract, path: str) -> bool:
    """`path` lies inside an object the contract leaves open (declared with no properties)."""
    parts = normalise(path).replace("[]", ".[]").split(".")
    for n in range(1, len(parts)):
        head = ".".join(parts[:n]).replace(".[]", "[]")
        shape = contract.shapes.get(head)
        if shape is not None and head not in contract.declared and (shape.types is None or "object" in shape.types):
            return not any(p.startswith(head + ".") for p in contract.shapes)
    return False
