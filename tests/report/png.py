"""Reads an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes) into pixel rows, with the
standard library only, so a test can tell a painted screenshot from a blank one."""
from __future__ import annotations

import struct
import zlib
from pathlib import Path

CHANNELS = {2: 3, 6: 4}         # colour type -> bytes per pixel (RGB, RGBA)


def pixels(path: Path) -> tuple[int, int, int, list[bytes]]:
    """(width, height, bytes per pixel, rows); raises ValueError for what it cannot read."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, head = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        elif kind == b"IEND":
            break
    if head is None or head[2] != 8 or head[3] not in CHANNELS or head[6] != 0:
        raise ValueError("only 8-bit, non-interlaced RGB/RGBA PNGs are read")
    width, height, bpp = head[0], head[1], CHANNELS[head[3]]
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        prev = bytes(line)
        rows.append(prev)
    return width, height, bpp, rows


def ink(path: Path, step: int = 3) -> float:
    """The share of pixels (every `step`th of every `step`th row) that are not near-white: 0.0 for
    a blank page."""
    width, height, bpp, rows = pixels(path)
    seen = [row[x:x + 3] for row in rows[::step] for x in range(0, width * bpp, bpp * step)]
    return sum(1 for rgb in seen if min(rgb) < 200) / len(seen)
