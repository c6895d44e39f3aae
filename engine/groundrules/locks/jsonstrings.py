"""The string values of a JSON text, decoded, with a map from each decoded character back to the
raw text (docs/spec/evidence.md: a tool receipt keeps its raw body; a lock on it points into that body).

A value escaped in the body (`"\\u5fae\\u4fe1 wx_wang01"`) reads as what it says only once decoded,
so the lock tables scan the decoded value too; the offsets of what they find are mapped back, so a
lock's locator and quote are always the raw body's.
"""
from __future__ import annotations

import json
import re

STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})|(.))', re.S)
SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def escaped_strings(text: str) -> list[tuple[str, list[int], list[int]]]:
    """(decoded value, raw start of each decoded character, raw end of each) of every string of
    `text` that holds an escape, when `text` is valid JSON; [] otherwise. In valid JSON every '"'
    outside a string opens one, so a left-to-right scan finds exactly the string tokens."""
    if '\\' not in text:
        return []
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return []
    out = []
    for token in STRING.finditer(text):
        if "\\" in token.group():
            decoded = _decode(text, token.start() + 1, token.end() - 1)
            if decoded is not None:
                out.append(decoded)
    return out


def _decode(text: str, start: int, end: int) -> tuple[str, list[int], list[int]] | None:
    chars, starts, ends = [], [], []
    at = start
    while at < end:
        m = ESCAPE.match(text, at, end) if text[at] == "\\" else None
        if m is None:
            chars.append(text[at]); starts.append(at); ends.append(at + 1)
            at += 1
            continue
        if m.group(1) is None:
            chars.append(SIMPLE[m.group(2)])
        else:
            code = int(m.group(1), 16)
            if 0xD800 <= code < 0xDC00:               # a pair: \\uD83D\\uDE00 is one character
                low = ESCAPE.match(text, m.end(), end)
                if low is None or low.group(1) is None or not 0xDC00 <= int(low.group(1), 16) < 0xE000:
                    return None                       # a lone surrogate is no text a lock can quote
                code = 0x10000 + ((code - 0xD800) << 10) + (int(low.group(1), 16) - 0xDC00)
                m = low
            elif 0xDC00 <= code < 0xE000:
                return None
            chars.append(chr(code))
        starts.append(at); ends.append(m.end())
        at = m.end()
    return "".join(chars), starts, ends
