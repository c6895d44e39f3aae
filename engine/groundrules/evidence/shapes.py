"""The seed shapes (rules/seed_shapes.yaml): records and events written in the shapes of the
project's first design documents, mapped to the internal shape before the payload is checked.

One table says every mapping; this module only applies it. A shape applies to an item that lacks
its `when.missing` key and has its `when.present` key (either dotted for a nested one), so an item
already in the internal shape is never touched, and what a shape does not map is left for the
contract to refuse by name. An id a shape makes is deterministic: by position (`{n}`) or by the
item's own content (`{digest}`), so the fold and the ledger give the same record the same id.
"""
from __future__ import annotations

import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator

from ..core.canonical import detached, digest
from ..core.examples import ExampleResult

if TYPE_CHECKING:
    from ..core.tables import CompileContext

KIND = "shape_map"


@dataclass(frozen=True)
class Shape:
    id: str
    applies_to: str           # records | events
    missing: str
    present: str
    rename: tuple             # (dotted source key, dotted target key)
    set: tuple                # (key, constant) when absent
    id_template: str          # the id of an item that has none ("{n}": 1-based position, "{digest}": of its content)
    examples: tuple

    def applies(self, item: Any) -> bool:
        return type(item) is dict and _get(item, self.missing) is _ABSENT and _get(item, self.present) is not _ABSENT

    def apply(self, item: dict, position: int) -> dict:
        out = detached(item)
        for source, target in self.rename:
            value = _pop(out, source)
            if value is not _ABSENT:
                _put(out, target, value)
        for key, value in self.set:
            out.setdefault(key, value)
        if self.id_template and "id" not in out:
            out["id"] = self.id_template.format(n=position + 1, digest=digest(item)[:16])
        return out


@dataclass(frozen=True)
class ShapeMap:
    kind: str
    id: str
    file: str
    shapes: tuple

    def translate(self, payload: Any) -> Any:
        """`payload` with every seed-shaped record and event in the internal shape (a new object;
        the caller's payload is never changed). Anything else is returned as it came."""
        if type(payload) is not dict:
            return payload
        out = dict(payload)
        records = payload.get("records")
        if type(records) is list:
            out["records"] = [self._one("records", r, n) for n, r in enumerate(records)]
        interps = payload.get("interpretations")
        if type(interps) is list:
            out["interpretations"] = [self._interp(i) for i in interps]
        return out

    def record(self, item: Any, position: int = 0) -> Any:
        """One record in the internal shape (a new object when a shape applies): what the ledger's
        append path stores, so that a host appending the seed's record gets what fold() reads."""
        return self._one("records", item, position)

    def _interp(self, interp: Any) -> Any:
        if type(interp) is not dict or type(interp.get("events")) is not list:
            return interp
        return dict(interp, events=[self._one("events", e, n) for n, e in enumerate(interp["events"])])

    def _one(self, where: str, item: Any, position: int) -> Any:
        for shape in self.shapes:
            if shape.applies_to == where and shape.applies(item):
                return shape.apply(item, position)
        return item

    def check_examples(self) -> Iterator[ExampleResult]:
        for i, shape in enumerate(self.shapes):
            for n, ex in enumerate(shape.examples):
                got = shape.apply(ex["given"], 0) if shape.applies(ex["given"]) else ex["given"]
                ok = got == ex["expect"]
                yield ExampleResult(f"{self.id}:{shape.id}:{n + 1}", ok, "" if ok else f"got {got}",
                                    ("shapes", i, "examples", n))


_ABSENT = object()


def _get(item: dict, dotted: str) -> Any:
    for part in dotted.split("."):
        if type(item) is not dict or part not in item:
            return _ABSENT
        item = item[part]
    return item


def _put(item: dict, dotted: str, value: Any) -> None:
    """item[a][b] = value for 'a.b' unless it is already given (an object on the way is made)."""
    *heads, last = dotted.split(".")
    for head in heads:
        inner = item.setdefault(head, {})
        if type(inner) is not dict:
            return
        item = inner
    item.setdefault(last, value)


def _pop(item: dict, dotted: str) -> Any:
    """Remove and return item[a][b] for 'a.b' (an emptied parent object is removed too)."""
    head, _, rest = dotted.partition(".")
    if head not in item:
        return _ABSENT
    if not rest:
        return item.pop(head)
    inner = item[head]
    if type(inner) is not dict:
        return _ABSENT
    value = _pop(inner, rest)
    if not inner:
        del item[head]
    return value


ID_FIELDS = {"n", "digest"}


def compile_shapes(data: dict, ctx: CompileContext) -> ShapeMap | None:
    shapes = []
    for i, raw in enumerate(data["shapes"]):
        targets = [t for _, t in raw.get("rename", {}).items()]
        if len(targets) != len(set(targets)):
            ctx.fault("duplicate-target", "two keys are renamed to the same key", ("shapes", i, "rename"))
        fields = {f for _, f, _, _ in string.Formatter().parse(raw.get("new_id", "")) if f is not None}
        if fields - ID_FIELDS:
            ctx.fault("unknown-placeholder", f"new_id may name only {{n}} and {{digest}}, not {sorted(fields - ID_FIELDS)}",
                      ("shapes", i, "new_id"))
        shapes.append(Shape(raw["id"], raw["applies_to"], raw["when"]["missing"], raw["when"]["present"],
                            tuple(raw.get("rename", {}).items()), tuple(raw.get("set", {}).items()),
                            raw.get("new_id", ""), tuple(raw["examples"])))
    if any(f.severity == "error" for f in ctx.faults):
        return None
    return ShapeMap(KIND, data["id"], ctx.source.file, tuple(shapes))
