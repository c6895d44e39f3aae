"""JSON Pointers (RFC 6901) as the verifier reads and writes them."""
from __future__ import annotations

from typing import Any

NOT_FOUND = object()


def encode(*parts: Any) -> str:
    out = ""
    for p in parts:
        token = p if p.__class__ is str else str(p)
        if "~" in token or "/" in token:
            token = token.replace("~", "~0").replace("/", "~1")
        out += "/" + token
    return out


def decode(text: Any) -> list[str] | None:
    """The tokens of a pointer, or None when `text` is not one ('' is the root: [])."""
    if not isinstance(text, str) or (text and not text.startswith("/")):
        return None
    if "~" not in text:                    # most pointers: nothing escaped
        return text.split("/")[1:]
    tokens = []
    for raw in text.split("/")[1:]:
        if "~" in raw.replace("~0", "").replace("~1", ""):
            return None
        tokens.append(raw.replace("~1", "/").replace("~0", "~"))
    return tokens


def field_of(text: Any, selected: tuple) -> str | None:
    """The selected field a '/data/<field>...' pointer lies in, else None."""
    tokens = decode(text)
    return None if tokens is None else field_in(tokens, selected)


def field_in(tokens: list[str], selected: tuple) -> str | None:
    """`field_of` for a pointer decoded already."""
    if len(tokens) < 2 or tokens[0] != "data" or tokens[1] not in selected:
        return None
    return tokens[1]


def resolve(value: Any, tokens: list[str]) -> Any:
    """The value the tokens point at, or NOT_FOUND."""
    for token in tokens:
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and token.isascii() \
                and (token == "0" or not token.startswith("0")) and int(token) < len(value):
            value = value[int(token)]
        else:
            return NOT_FOUND
    return value
