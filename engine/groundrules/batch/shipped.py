"""Tables shipped to a cluster's workers: the rules/, locks/ and schemas/ folders of a rulebook as
one tar, made once on the driver (and broadcast by the engine), unpacked once per worker process
into a folder named by the tar's digest, which `answer.answerer` then loads once and reuses. The
bundled tables need no shipping: they are in the package every worker imports."""
from __future__ import annotations

import hashlib
import io
import os
import tarfile
import tempfile
from pathlib import Path

FOLDERS = ("rules", "locks", "schemas")


def pack(root: str | Path) -> bytes:
    """The tables under `root` as a tar, the same bytes for the same files."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for folder in FOLDERS:
            base = Path(root) / folder
            for path in sorted(p for p in base.rglob("*") if p.is_file()) if base.is_dir() else []:
                data = path.read_bytes()
                info = tarfile.TarInfo(path.relative_to(root).as_posix())
                info.size, info.mode, info.mtime = len(data), 0o644, 0
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def unpack(packed: bytes, under: str | Path | None = None) -> Path:
    """The folder holding the shipped tables on this worker, unpacked on first use."""
    digest = hashlib.sha256(packed).hexdigest()[:16]
    target = Path(under or tempfile.gettempdir()) / f"groundrules-tables-{digest}"
    if target.is_dir():
        return target
    staging = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    with tarfile.open(fileobj=io.BytesIO(packed), mode="r") as tar:
        tar.extractall(staging, filter="data")
    try:
        os.rename(staging, target)          # another worker may have won the race: its copy is the same
    except OSError:
        pass
    return target
