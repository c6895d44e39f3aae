"""Reading input with a cap: a file, a device or stdin is read up to a limit and refused past it,
so `explain /dev/zero` or `lint /dev/zero` is a clear refusal, never a MemoryError.

The cap for a command's input is the `limits` table's (inputs.input_bytes); a rule table itself is
read with TABLE_BYTES, fixed here, since it is read before any table exists.
"""
from __future__ import annotations

from typing import BinaryIO

TABLE_BYTES = 8 * 1024 * 1024
DEFAULT_INPUT_BYTES = 64 * 1024 * 1024
_CHUNK = 1 << 20


class TooLarge(Exception):
    """The input holds more than `cap` bytes."""

    def __init__(self, cap: int):
        super().__init__(f"more than {cap} bytes")
        self.cap = cap


def read_stream(stream: BinaryIO, cap: int) -> bytes:
    """At most `cap` bytes of `stream`; TooLarge if there are more."""
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = stream.read(min(_CHUNK, cap + 1 - size))
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > cap:
            raise TooLarge(cap)
        chunks.append(chunk)


def read_file(path, cap: int) -> bytes:
    """At most `cap` bytes of the file at `path` (any kind: a device or FIFO is read, and cut)."""
    with open(path, "rb") as stream:
        return read_stream(stream, cap)


def words(cap: int) -> str:
    """A cap as people read it: 16 MiB, 512 KiB, 100 bytes."""
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if cap >= size and cap % size == 0:
            return f"{cap // size} {unit}"
    return f"{cap} bytes"
