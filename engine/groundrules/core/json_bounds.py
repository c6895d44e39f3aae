"""Bounds on the values of a JSON text, read off its bytes at C speed.

A walk over a caller's 10,000 objects costs tens of milliseconds of Python per check, and a big
refused body was walked twice before the cap that refuses it was read: CPU a flooding caller takes
from everyone. These read the text with `bytes` methods (no Python per value, a fraction of a
millisecond for 100 KB): how deep it nests, how long its digit runs are, whether an escape may
decode to a lone surrogate or a number to infinity. `within` answers "proven" (True) or "not
proven" (False, never "beyond"): a caller that gets False walks the value as before, so every
refusal still names its place.
"""
from __future__ import annotations

import re

SMALL = 2048            # below this many bytes a walk costs no more than the proof
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_ONE_KIND = bytes.maketrans(b"{}", b"[]")


def _numbers_table() -> bytes:
    """Digits read as 0, an exponent's e as e, its sign as +, everything else as a space."""
    table = bytearray(b" " * 256)
    for digit in b"0123456789":
        table[digit] = ord("0")
    for letter in b"eE":
        table[letter] = ord("e")
    for sign in b"+-":
        table[sign] = ord("+")
    return bytes(table)


_NUMBERS = _numbers_table()


def digits_within(bits: int) -> int:
    """The most digits an integer may have and still be proven to fit in `bits` bits."""
    return int(bits * 0.30102999566398114)       # 10**d <= 2**bits: d <= bits·log10(2), rounded down


def within(data: bytes, depth: int, int_digits: int) -> bool:
    """`data`, a valid JSON text in UTF-8 (so a lone surrogate can only be an escape), proven to nest at most `depth` deep (the outermost container
    being 1), to hold no integer of more than `int_digits` digits, no escape that may be a lone
    surrogate and no number that may read as infinity."""
    if b"\\" in data:
        if _SURROGATE_ESCAPE.search(data) is not None:
            return False
        bare = _STRING.sub(b"", data)              # strings out: their brackets and digits are text
    else:                                          # no escapes: every quote opens or closes a string
        bare = b"".join(data.split(b'"')[::2])
    numbers = bare.translate(_NUMBERS)
    if b"0" * (int_digits + 1) in numbers or b"e000" in numbers or b"e+000" in numbers:
        return False                               # 1e309 is infinity; 1e99 is not
    return nesting_within(bare.translate(_ONE_KIND, _NOT_BRACKETS), depth)


def nesting_within(brackets: bytes, depth: int) -> bool:
    """A balanced run of `[` and `]` nested at most `depth` deep: each round takes out the
    innermost pairs (adjacent `[]`, never overlapping), one level; what is left after `depth`
    rounds nests deeper."""
    for _ in range(depth):
        if not brackets:
            return True
        brackets = brackets.replace(b"[]", b"")
    return not brackets
