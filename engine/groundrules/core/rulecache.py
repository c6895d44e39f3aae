"""Verdicts of clean loads, keyed by content, so that a command compiles only the tables it uses.

A full load reads every table and schema, checks each table against its kind's metaschema and
compiles it: most of a CLI call's cost, paid again by every process. Once a set of files has
loaded clean, its verdict (the rulebook version, the warnings, and which table id sits in which
file) is kept under a key that hashes every table's and schema's bytes and the engine's own source
files. A later process with the same key compiles tables on first use, from the bytes it hashed.
A table file's parsed form (its data and the position of every key) is kept the same way, under
its own bytes: a process on a warm cache reads JSON and never loads PyYAML.

Only plain JSON is stored, never code or pickles. An entry is two lines: an HMAC, under a per-cache
secret (created 0600 beside the entries), of its key and of the JSON text's bytes, then that text.
The HMAC is checked on the bytes before they are parsed: an entry that was edited, truncated or
copied in from elsewhere fails the check and counts as absent. `GROUNDRULES_CACHE` names the folder; `off` (or an
empty value) turns the cache off. Failing to read or write the cache never fails a load.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import importlib.util
from pathlib import Path
from typing import Any

from .tables import FileSet
from .yamlsrc import Source

FORMAT = 3
ENV = "GROUNDRULES_CACHE"
MAX_ENTRIES = 256          # oldest entries beyond this are removed when a new one is written
_SECRET = "secret"
SUFFIX = ".entry"
_PACKAGE = Path(__file__).resolve().parents[1]


def folder() -> Path | None:
    """Where entries live: $GROUNDRULES_CACHE, else $XDG_CACHE_HOME/groundrules, else
    ~/.cache/groundrules; None when turned off."""
    chosen = os.environ.get(ENV)
    if chosen is not None:
        return None if chosen.strip() in ("", "off") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "groundrules"


def key(files: FileSet) -> str:
    """The content key: the cache format, the engine's and the YAML reader's source files (a
    changed check may change a verdict), and every table's and schema's bytes."""
    h = hashlib.sha256(f"groundrules-verdict-{FORMAT}\x00".encode())
    h.update(_engine_fingerprint().encode())
    h.update(files.digest().encode())
    return h.hexdigest()


def source_key(data: bytes) -> str:
    """The key of one table file's parsed form: its bytes, read by this engine and YAML reader."""
    h = hashlib.sha256(f"groundrules-source-{FORMAT}\x00".encode())
    h.update(_engine_fingerprint().encode())
    h.update(data)
    return "src-" + h.hexdigest()


_fingerprint: list[str] = []


def _engine_fingerprint() -> str:
    """Name, size and modification time of every module of the package and of PyYAML (found, not
    imported): cheap to read at start-up and changed by any edit or reinstall. Computed once."""
    if _fingerprint:
        return _fingerprint[0]
    h = hashlib.sha256()
    spec = importlib.util.find_spec("yaml")
    roots = [_PACKAGE] + ([Path(spec.origin).parent] if spec is not None and spec.origin else [])
    for root in roots:
        for directory, dirs, names in os.walk(root):
            dirs.sort()
            for name in sorted(names):
                if name.endswith((".py", ".so")):
                    st = os.stat(os.path.join(directory, name))
                    rel = os.path.relpath(os.path.join(directory, name), root)
                    h.update(f"{root.name}/{rel}\x00{st.st_size}\x00{st.st_mtime_ns}\x00".encode())
    _fingerprint.append(h.hexdigest())
    return _fingerprint[0]


def find(content_key: str) -> dict | None:
    """The verdict stored under `content_key`, if there is one and its HMAC holds."""
    verdict = _read(content_key)
    return verdict if _well_formed(verdict) else None


def find_source(content_key: str, file: str) -> Source | None:
    """The parsed form of a table file stored under `content_key` (named `file`), if its HMAC holds."""
    stored = _read(content_key)
    try:
        positions = {tuple(p[:-2]): (p[-2], p[-1]) for p in stored["positions"]}
        booleans = tuple((tuple(path), text) for path, text in stored["yaml11_booleans"])
        if not all(isinstance(line, int) and isinstance(col, int) for line, col in positions.values()):
            return None
        return Source(file, stored["data"], positions, booleans)
    except (KeyError, TypeError, ValueError):
        return None


def keep_source(content_key: str, source: Source, *, prune: bool = True) -> None:
    keep(content_key, {"data": source.data,
                       "positions": [list(path) + [line, col] for path, (line, col) in source.positions.items()],
                       "yaml11_booleans": [[list(path), text] for path, text in source.yaml11_booleans]},
         prune=prune)


def _read(content_key: str) -> Any:
    where = folder()
    if where is None:
        return None
    try:
        mac, _, text = (where / f"{content_key}{SUFFIX}").read_bytes().partition(b"\n")
        secret = (where / _SECRET).read_bytes()
        if not hmac.compare_digest(mac, _mac(secret, content_key, text).encode()):
            return None
        return json.loads(text)
    except (OSError, ValueError, RecursionError):
        return None


def keep(content_key: str, verdict: Any, *, prune: bool = True) -> None:
    """Store `verdict` (plain JSON) under `content_key`, atomically: a reader sees the old file or
    the new one. `prune=False` leaves removing the oldest entries to a later `prune()` (a load
    writing many entries prunes once)."""
    where = folder()
    if where is None:
        return
    try:
        where.mkdir(parents=True, exist_ok=True)
        secret = _secret(where)
        # key order is kept as is: a table's mappings are ordered (slots, issues, outputs)
        text = json.dumps(verdict, ensure_ascii=False).encode("utf-8")
        import tempfile                   # only a writer needs it
        fd, tmp = tempfile.mkstemp(dir=where, prefix=".entry-", suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(_mac(secret, content_key, text).encode() + b"\n" + text)
        os.replace(tmp, where / f"{content_key}{SUFFIX}")
        if prune:
            _prune(where)
    except OSError:
        return


def touch(content_key: str) -> bool:
    """Mark the entry under `content_key` as recently used; False when there is none (a load after
    an edit writes only the entries of the tables that changed)."""
    where = folder()
    if where is None:
        return False
    try:
        os.utime(where / f"{content_key}{SUFFIX}")
        return True
    except OSError:
        return False


def prune() -> None:
    """Remove the oldest entries beyond MAX_ENTRIES (after writing with `prune=False`)."""
    where = folder()
    if where is None:
        return
    try:
        _prune(where)
    except OSError:
        return


def _secret(where: Path) -> bytes:
    path = where / _SECRET
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes()
    with os.fdopen(fd, "wb") as out:
        out.write(os.urandom(32))
    return path.read_bytes()


def _mac(secret: bytes, content_key: str, text: bytes) -> str:
    """The HMAC binding an entry's JSON text to the key it is stored under."""
    return hmac.new(secret, content_key.encode() + b"\x00" + text, hashlib.sha256).hexdigest()


def _well_formed(verdict: Any) -> bool:
    return (isinstance(verdict, dict) and isinstance(verdict.get("version"), str)
            and isinstance(verdict.get("warnings"), list)
            and all(isinstance(w, dict) for w in verdict["warnings"])
            and isinstance(verdict.get("tables"), list)
            and all(isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) for x in t)
                    for t in verdict["tables"]))


def _prune(where: Path) -> None:
    entries = sorted(where.glob(f"*{SUFFIX}"), key=lambda p: p.stat().st_mtime_ns)
    for old in entries[:-MAX_ENTRIES]:
        old.unlink(missing_ok=True)
