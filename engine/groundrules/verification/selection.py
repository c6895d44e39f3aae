"""The request: its sources and the field selection (docs/spec/verification.md, the field selection).

fields omitted (or null) selects every field of the schema, a list selects those, [] selects
none; an unknown or repeated field refuses the request. The selection only limits `data`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.errors import GroundrulesError, closest, echo
from ..core.messages import say
from .contract import message, problems
from .instances import INVALID_ARGUMENT, ExtensionSchema

INPUT = "input"
CONTEXT_PREFIX = "context/"
USER = "user"


@dataclass(frozen=True)
class Request:
    input: str
    sources: dict              # sourceId -> text: 'input', 'context/0', 'context/1', ...
    selected: tuple            # selected field names, in the schema's order
    turns: tuple = ()          # (sourceId, text) of the user's turns in context, in order: where corrections live


def read_request(request: Any, ext: ExtensionSchema, book) -> Request:
    found = problems(book.schemas, "request", request)
    if found:
        raise GroundrulesError(INVALID_ARGUMENT, say(book, "verify.request", problem=message(found[0])), field="request")
    sources = {INPUT: request["input"]}
    turns = []
    for i, msg in enumerate(request.get("context") or ()):
        sources[f"{CONTEXT_PREFIX}{i}"] = msg["content"]
        if msg.get("role") == USER:
            turns.append((f"{CONTEXT_PREFIX}{i}", msg["content"]))
    return Request(request["input"], sources, select(request.get("fields"), ext, book), tuple(turns))


def select(fields: list | None, ext: ExtensionSchema, book) -> tuple:
    if fields is None:
        return ext.fields
    known = set(ext.fields)
    seen: set = set()
    for name in fields:
        if name not in known:
            close = closest(name, ext.fields)
            words = say(book, "verify.field_unknown_close", name=echo(name), closest=close) if close else \
                say(book, "verify.field_unknown", name=echo(name), fields=list(ext.fields))
            raise GroundrulesError(INVALID_ARGUMENT, words, field="request.fields", name=echo(name))
        if name in seen:
            raise GroundrulesError(INVALID_ARGUMENT, say(book, "verify.field_twice", name=echo(name)),
                                   field="request.fields", name=echo(name))
        seen.add(name)
    return tuple(f for f in ext.fields if f in seen)
