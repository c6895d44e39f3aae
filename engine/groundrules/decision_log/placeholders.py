"""Placeholders for the values the locks find, that keep the lock behaviour: a valid mobile stays a
valid mobile, an ID with a bad check digit stays one with the same reason.

Every string of a value is locked as a user's sent message; each lock span (but kinds the table
leaves alone) is rewritten in place, with the same length and shape: its separators, widths and
any prefix before the value stay, and the letters and digits of the value are the table's
placeholder for the kind (tried first) or filled afresh, deterministically, until the locks read
the new text exactly as they read the original (same patterns, spans, validity, reasons). The
same original value gets the same placeholder everywhere in one case (a quote that must occur
verbatim in its source still does); its normalized value is replaced wherever it occurs too.
"""
from __future__ import annotations

import random
import string
from typing import Any

from ..core import codes
from ..core.errors import refusal
from ..locks import lock

LEAVE_KINDS = ("flow_marker",)        # markers the system writes: no person's value
_FULLWIDTH_ZERO = 0xFF10


class Placeholders:
    def __init__(self, book: Any, table: Any, seed: str):
        self._book, self._table, self._seed = book, table, seed
        self.quotes: dict[str, str] = {}
        self.values: dict[str, str] = {}
        self._used: set = set()

    def value(self, doc: Any) -> Any:
        """`doc` with every string's lock spans replaced, then every replaced value wherever it occurs."""
        first = self._walk(doc, self.text)
        pairs = sorted({**self.quotes, **self.values}.items(), key=lambda kv: -len(kv[0]))
        return self._walk(first, lambda s: _replace_all(s, pairs))

    def _walk(self, doc: Any, f) -> Any:
        if isinstance(doc, str):
            return f(doc)
        if isinstance(doc, list):
            return [self._walk(v, f) for v in doc]
        if isinstance(doc, dict):
            return {k: self._walk(v, f) for k, v in doc.items()}
        return doc

    def text(self, text: str) -> str:
        locks = _locks(text, self._book)
        taken = -1
        for c in locks:
            start, end = c["locator"]["start"], c["locator"]["end"]
            if c["kind"] in LEAVE_KINDS or start < taken:
                continue
            taken = end
            quote = text[start:end]
            new = self.quotes.get(quote) or self._placeholder(text, c, quote)
            text = text[:start] + new + text[end:]
            self.quotes[quote] = new
            after = next(x for x in _locks(text, self._book) if x["locator"]["start"] == start
                         and x["pattern"] == c["pattern"])
            if isinstance(c["normalized_value"], str) and isinstance(after["normalized_value"], str):
                self.values.setdefault(c["normalized_value"], after["normalized_value"])
        return text

    def _placeholder(self, text: str, c: dict, quote: str) -> str:
        start, end = c["locator"]["start"], c["locator"]["end"]
        want = _signature(_locks(text, self._book))
        positions = _positions(quote, c["normalized_value"])
        tries = [_written(quote, positions, v) for v in self._table.placeholders.get(c["kind"], ())]
        rng = random.Random(f"{self._seed}:{c['pattern']}:{quote}")
        tries += [_filled(quote, positions, rng) for _ in range(self._table.fill_attempts)]
        for new in tries:
            if new is None or new == quote or new in self._used:
                continue
            if _signature(_locks(text[:start] + new + text[end:], self._book)) == want:
                self._used.add(new)
                return new
        raise refusal(codes.NO_PLACEHOLDER, "decisions.no_placeholder", kind=c["kind"], pattern=c["pattern"])


def _locks(text: str, book: Any) -> list:
    return lock({"id": "m", "role": "user", "state": "sent", "content": text}, book)


def _signature(locks: list) -> list:
    return [(c["pattern"], c["kind"], c["locator"]["start"], c["locator"]["end"], c["valid"], c["invalid_reason"])
            for c in locks]


def _alnum(ch: str) -> bool:
    return ch.isdecimal() or ch in string.ascii_letters


def _positions(quote: str, normalized: Any) -> list[int]:
    """The places in the quote that hold the value's letters and digits: the last ones, as many as
    the normalized value has (a dialling prefix or a label before them stays)."""
    places = [i for i, ch in enumerate(quote) if _alnum(ch)]
    count = sum(1 for ch in normalized if _alnum(ch)) if isinstance(normalized, str) else len(places)
    return places[-count:] if count else []


def _as_shape(original: str, new: str) -> str | None:
    """`new` (a digit or a letter) written as `original` is: a full-width digit stays full-width."""
    if original.isdecimal():
        if not new.isdecimal():
            return None
        digit = int(new)
        return chr(_FULLWIDTH_ZERO + digit) if 0xFF10 <= ord(original) <= 0xFF19 else str(digit)
    if new.isdecimal() or new not in string.ascii_letters:
        return None
    return new.upper() if original.isupper() else new.lower()


def _written(quote: str, positions: list[int], value: str) -> str | None:
    chars = [ch for ch in value if _alnum(ch)]
    if len(chars) != len(positions):
        return None
    out = list(quote)
    for i, ch in zip(positions, chars):
        out[i] = _as_shape(quote[i], ch) or ch      # a check letter may be a digit (an ID's X) and back
    return "".join(out)


def _filled(quote: str, positions: list[int], rng: random.Random) -> str:
    out = list(quote)
    for i in positions:
        fill = rng.choice(string.digits) if quote[i].isdecimal() else rng.choice(string.ascii_lowercase)
        out[i] = _as_shape(quote[i], fill) or quote[i]
    return "".join(out)


def _replace_all(text: str, pairs: list) -> str:
    for old, new in pairs:
        if old and old in text:
            text = text.replace(old, new)
    return text
