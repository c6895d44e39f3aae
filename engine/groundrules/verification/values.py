"""Values derived from their quotes: a `normalized` evidence item claims that a mechanical rule
turns its quote into the field's value; where the tables hold that rule (a lock table, a
normalizer of rules/value_derivations.yaml) the verifier recomputes the value and compares.

`exact` items need no derivation: the value must equal the quote itself (fields.py). A value no
table can check is said to be unchecked, never passed in silence.
"""
from __future__ import annotations

import json
from typing import Any

from ..core.errors import GroundrulesError
from ..locks.scan import scan
from .derivations import Derivations, Kind
from .instances import ExtensionSchema
from .observations import Observation
from .pointers import NOT_FOUND, decode, encode, field_of, resolve

MODE = "normalized"
_ROLE, _STATE = "user", "sent"          # a quote is read as the user's text: the role every lock counts in


def value_observations(ext: ExtensionSchema, selected: tuple, extraction: dict, derivations: Derivations,
                       locks: dict) -> list[Observation]:
    out: list[Observation] = []
    data = extraction["data"]
    for i, item in enumerate(extraction["evidence"]):
        if item["mode"] != MODE:
            continue
        field = field_of(item["path"], selected)
        tokens = decode(item["path"]) if field is not None else None
        value = resolve(data, tokens[1:]) if tokens is not None else NOT_FOUND
        if field is None or tokens is None or value is NOT_FOUND:
            continue                                   # evidence_path_invalid, said by fields.py
        kind = derivations.kind_of(_schema_at(ext.schema, tokens[1:]))
        if kind is None or isinstance(value, bool) or not isinstance(value, (str, int, float)):
            out.append(Observation("value_unchecked", item["path"], {"field": field}))
            continue
        out += _compare(kind, locks, field, value, item, i)
    return out


def _compare(kind: Kind, locks: dict, field: str, value: Any, item: dict, i: int) -> list[Observation]:
    read = []                                          # (source index, quote, derived values)
    for j, src in enumerate(item["sources"]):
        derived = _derive(kind, locks, src["quote"]) if src["quote"] else None
        if derived is None:
            continue
        if any(_same(value, d) for d in derived):
            return []
        read.append((j, src["quote"], derived))
    if read:
        j, quote, derived = read[0]
    elif kind.no_reading == "refuse" and item["sources"]:
        j, quote, derived = 0, item["sources"][0]["quote"], []
    else:
        return [Observation("value_quote_unread", item["path"],
                            {"field": field, "kind": kind.id,
                             "quote": item["sources"][0]["quote"] if item["sources"] else ""})]
    return [Observation("value_not_derived", encode("extraction", "evidence", i, "sources", j, "quote"),
                        {"field": field, "kind": kind.id, "quote": quote, "value": _show(value),
                         "derived": _show(derived)})]


def _derive(kind: Kind, locks: dict, quote: str) -> list | None:
    """The values `kind`'s table derives from `quote`, or None when it reads nothing there."""
    if kind.normalizer is not None:
        found = kind.normalizer.values(quote)
    else:
        try:
            candidates = scan(locks[kind.lock_table], "quote", _ROLE, _STATE, quote)
        except GroundrulesError:                       # LOCK_TIMEOUT: not read, so not derived either
            return None
        found = list(dict.fromkeys(c["normalized_value"] for c in candidates if c["kind"] == kind.lock_kind))
    return found or None


def _same(value: Any, derived: Any) -> bool:
    if isinstance(derived, str):
        return isinstance(value, str) and value == derived
    if isinstance(value, str):
        try:
            return float(value.replace(",", "")) == derived
        except ValueError:
            return False
    return value == derived


def _schema_at(schema: Any, tokens: list) -> Any:
    """The subschema a data path points at, through properties and items ($ref is not followed)."""
    node = schema
    for token in tokens:
        if not isinstance(node, dict):
            return None
        props = node.get("properties")
        if isinstance(props, dict) and isinstance(token, str) and token in props:
            node = props[token]
        elif isinstance(node.get("items"), dict):
            node = node["items"]
        else:
            return None
    return node


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
