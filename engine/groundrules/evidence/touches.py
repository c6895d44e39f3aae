"""What an interpretation touches, as keys the store finds stored interpretations by (issue 19).

append_interpretation checks a new interpretation with the fold, but not against the whole project:
against the records it cites and the stored interpretations whose check could come out otherwise
with it (and, in turn, theirs). Which those are follows from what the fold compares across
interpretations, and each is a key:

  i:<id>         the interpretation's id (used twice: DUPLICATE_ID)
  e:<id>         an event id, and an id an event resolves (DUPLICATE_ID, UNKNOWN_EVENT)
  src:<source>   a raw source (message, tool receipt, injected field) it cites, cites a span or a
                 lock of, or disposes of a lock of: dispositions, the locks an event rests on,
                 LOCK_CONFLICT, DISPOSITION_CONFLICT, INSUFFICIENT_EVIDENCE all stay within one source
  rec:<id>       any other record it cites (a derived claim)
  +open:<scope>  a scope it opens; need:+open:<scope> a scope it names or folds into (an explicit
                 scope or parent, a reading's scope, the subject of the records a field event cites:
                 UNKNOWN_SCOPE, SCOPE_EXISTS)
  whole          it has a field event with no value that does not clear its slot (a confirm of the
                 value held): whether the slot holds one depends on every earlier event that
                 folded into its scope, through the current scope too, so it is checked against
                 the whole project, as before

The keys are computed once, as the interpretation is stored: the records it cites never change (a
ledger is append-only, a name never moves), so neither do they. `i:`, `e:`, `src:` and `rec:` are
looked up from both sides; `+open:` only by those who need it; `whole` never.
"""
from __future__ import annotations

from typing import Any, Callable

WHOLE = "whole"
NEED = "need:"
SYMMETRIC = ("i:", "e:", "src:", "rec:")


def lookups(keys) -> set[str]:
    """The keys whose holders a check with these keys must read: the symmetric ones, and what each
    need names."""
    out = set()
    for key in keys:
        if key.startswith(SYMMETRIC):
            out.add(key)
        elif key.startswith(NEED):
            out.add(key[len(NEED):])
    return out


def of(interpretation: Any, *, book: Any, policy: Any, clearing: tuple,
       resolve: Callable[[str], tuple[str, str | None] | None]) -> set[str]:
    """The keys of an interpretation (in the fold's internal shape once the seed's shapes are
    mapped). `resolve(name)` says what a cited name is: (its key, the subject of its record) or None
    when the ledger has no such record. Anything malformed adds no key: the fold refuses it."""
    for shapes in book.of_kind("shape_map"):
        interpretation = shapes.translate({"interpretations": [interpretation]})["interpretations"][0]
    if not isinstance(interpretation, dict):
        return set()
    keys: set[str] = set()
    if isinstance(interpretation.get("id"), str):
        keys.add("i:" + interpretation["id"])

    def cite(name: Any) -> str | None:
        found = resolve(name) if isinstance(name, str) else None
        if found is None:
            return None
        keys.add(found[0])
        return found[1]

    for d in _items(interpretation.get("dispositions")):
        cite(d.get("lock"))
    for event in _items(interpretation.get("events")):
        kind = event.get("type")
        op = policy.ops.get(kind) if isinstance(kind, str) else None
        if isinstance(event.get("id"), str):
            keys.add("e:" + event["id"])
        for ref in event.get("resolves", []) if isinstance(event.get("resolves"), list) else []:
            if isinstance(ref, str):
                keys.add("e:" + ref)
        subjects = set()
        for c in event.get("evidence", []) if isinstance(event.get("evidence"), list) else []:
            subject = cite(c.get("message_id") if isinstance(c, dict) else c)
            if subject is not None:
                subjects.add(subject)
        scope = event.get("scope")
        named: list[Any] = [scope] if isinstance(scope, str) else []      # only the strings name a scope
        if isinstance(scope, dict):
            named += [r.get("scope") for r in _items(scope.get("unresolved"))]
        if op == "open":
            if isinstance(scope, str):
                keys.add("+open:" + scope)
            named.append(event.get("parent"))
        layer = policy.layer(kind) if op is not None else None
        if layer == "field" and not isinstance(scope, dict):
            if scope is None:
                named += sorted(subjects)
            if "value" not in event and op not in clearing:
                keys.add(WHOLE)
        keys.update(NEED + "+open:" + s for s in named if isinstance(s, str))
    return keys


def _items(value: Any) -> list[dict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
