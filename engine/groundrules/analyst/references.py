"""Names one table uses for what another defines: lock kinds, lock patterns, slots, states, codes.

Renaming a lock kind in its table leaves the merge slot that lists it, and the drop rule of another
lock table that reads it, naming something nothing produces: both load, and both silently never
match again. A schema says which of its values are such names with the annotation `x-names`
(`"x-names": "lock_kinds"`, `"states:epistemic"`, `"codes:support_reason"`), on a table kind's
metaschema (a slot's `locks.kinds`) or on an input contract (a guard's `finding.epistemic_state`,
a resolve row's `event.slot`); lint then checks every such value, in the table's own data and in
the literals its conditions compare those fields with, against what the rulebook defines.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

from ..core.fieldtypes import contract_named, field_tests
from ..core.contracts import normalise
from ..core.errors import did_you_mean
from ..locks.rules import NEIGHBOUR_FACTS
from ..vocabularies import VOCABULARIES, known  # noqa: F401 - what lint checks names against

if TYPE_CHECKING:
    from ..core.tables import Schemas

ANNOTATION = "x-names"
# the candidate facts a lock table's rules read (locks/rules.py): their items' kind and pattern
LOCK_FACT_NAMES = {**{f"{fact}[].kind": "lock_kinds" for fact in NEIGHBOUR_FACTS},
                   **{f"{fact}[].pattern": "lock_patterns" for fact in NEIGHBOUR_FACTS}}
_MAX_DEPTH = 40


def in_data(data: Any, schema: dict, schemas: "Schemas", doc: str) -> Iterator[tuple[tuple, str, str]]:
    """(key path, value, vocabulary) for every string of `data` whose schema node says `x-names`
    (a list of names: each item), following `$ref`s within and across schema files."""
    seen: set = set()
    for path, value, names in _walk(data, schema, doc, schemas, (), 0):
        if (path, names) not in seen:
            seen.add((path, names))
            yield path, value, names


def _walk(value: Any, node: Any, doc: str, schemas: "Schemas", path: tuple, depth: int) -> Iterator:
    if depth > _MAX_DEPTH or not isinstance(node, dict):
        return
    names = node.get(ANNOTATION)
    if isinstance(names, str) and isinstance(value, str):
        yield path, value, names
    ref = node.get("$ref")
    if isinstance(ref, str):
        target_doc, target = _resolve(ref, doc, schemas)
        if target is not None:
            if isinstance(names, str) and not isinstance(target.get(ANNOTATION), str):
                target = {**target, ANNOTATION: names}
            yield from _walk(value, target, target_doc, schemas, path, depth + 1)
    for key in ("allOf", "anyOf", "oneOf"):
        for branch in node.get(key, ()):
            yield from _walk(value, branch, doc, schemas, path, depth + 1)
    if isinstance(value, dict):
        props = node.get("properties", {})
        extra = node.get("additionalProperties")
        for key, item in value.items():
            sub = props.get(key, extra if isinstance(extra, dict) else None)
            yield from _walk(item, sub, doc, schemas, path + (key,), depth + 1)
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for i, item in enumerate(value):
            yield from _walk(item, node["items"], doc, schemas, path + (i,), depth + 1)


def _resolve(ref: str, doc: str, schemas: "Schemas") -> tuple[str, dict | None]:
    """The schema node a `$ref` names: `#/…` in `doc`, `file#/…` beside it or under schemas/."""
    file, _, pointer = ref.partition("#")
    if file:
        folder = doc.rpartition("/")[0]
        doc = next((name for name in (f"{folder}/{file}" if folder else file, file)
                    if schemas.get(name) is not None), "")
    node: Any = schemas.get(doc)
    for part in [p for p in pointer.split("/") if p]:
        node = node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(node, dict) else None
    return doc, node if isinstance(node, dict) else None


def in_condition(cond: Any, shapes: dict | Callable[[str], str | None], prefix: str = "") -> Iterator[tuple]:
    """(key path of the literal, literal, vocabulary) for every literal `cond` compares with a field
    whose values are names (eq, ne: the literal; in, not_in: each item)."""
    lookup = shapes if callable(shapes) else (lambda path: getattr(shapes.get(path), "names", None))
    for path, node in field_tests(cond, prefix):
        names = lookup(normalise(path))
        if not names or node.ref:
            continue
        if node.op in ("eq", "ne") and isinstance(node.arg, str):
            yield node.where + (node.op,), node.arg, names
        elif node.op in ("in", "not_in"):
            for i, item in enumerate(node.arg):
                if isinstance(item, str):
                    yield node.where + (node.op, i), item, names


def in_given(given: Any, shapes: dict, where: tuple, prefix: str = "") -> Iterator[tuple]:
    """(key path, value, vocabulary) for every string an example's `given` puts in a field whose
    values are names."""
    if isinstance(given, dict):
        for key, item in given.items():
            yield from in_given(item, shapes, where + (key,), f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(given, list) and prefix:
        for i, item in enumerate(given):
            yield from in_given(item, shapes, where + (i,), prefix + "[]")
    elif isinstance(given, str) and prefix:
        names = getattr(shapes.get(normalise(prefix)), "names", None)
        if names:
            yield where, given, names


def examples_given(data: dict, shapes: dict, where: tuple = ()) -> Iterator[tuple]:
    """in_given over a table's examples and its rows' or guards' examples."""
    items = [(where + ("rows", i), row) for i, row in enumerate(data.get("rows", ()))]
    items += [(where + ("guards", g), guard) for g, guard in data.get("guards", {}).items()]
    for at, item in [(where, data)] + items:
        for n, ex in enumerate(item.get("examples", ())):
            if isinstance(ex, dict) and "given" in ex:
                yield from in_given(ex["given"], shapes, at + ("examples", n, "given"))


def contract_shapes(schemas: "Schemas", name: str) -> dict:
    """Field path -> Shape of the input contract `name` (empty when there is none)."""
    contract = contract_named(schemas, name)
    return contract.shapes if contract is not None else {}


def message(value: str, what: str, defined: tuple) -> tuple[str, str]:
    """The problem's sentence and hint for a name nothing defines."""
    hint = did_you_mean(value, defined) or f"known: {', '.join(sorted(defined)[:12]) or 'none'}"
    return (f"'{value}' names a {what}, and no table defines it any more (renamed or removed there?)",
            f"{hint}; rename it here too, or remove it")
