"""The key store: the data keys that personal values are sealed under, kept apart from the database.

Erasure by crypto-shredding (docs/erasure.md): the ledgers and the decision log keep personal values
only sealed under a data key, and the data key only here, never in the database. Destroying a key
makes every copy of what it sealed unreadable, the database's rows, its WAL, a replica and a backup
taken before the redaction alike. So the key store is a separate SQLite file, which the operator
keeps out of the database's backups, in rollback-journal mode with `secure_delete` (a destroyed key
is zeroed in the file, and no WAL keeps a copy) and `synchronous = FULL` (a key is on disk before the
row it opens is committed). Keys are made in batches (`MemoryKeyStore` and `SqliteKeyStore` both
answer `take`): one write per `batch` keys, not one per record.
"""
from __future__ import annotations

import os
import secrets
import sqlite3
import threading
from pathlib import Path
from typing import Iterable

from ..core.errors import StorageFailure
from .sqlite_base import ROWS_PER_STATEMENT, failures

KEY_BYTES = 32
SCHEMA = "CREATE TABLE IF NOT EXISTS data_keys (id TEXT PRIMARY KEY, material BLOB NOT NULL) WITHOUT ROWID"


class _Pool:
    """Fresh keys made ahead (stored, not yet handed out), and the keys read lately (a bounded cache)."""

    def __init__(self, batch: int, cached: int):
        self._batch, self._cached = batch, cached
        self._fresh: list[tuple[str, bytes]] = []
        self._known: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def take(self, store: "MemoryKeyStore | SqliteKeyStore") -> tuple[str, bytes]:
        with self._lock:
            if not self._fresh:
                made = [(secrets.token_hex(12), os.urandom(KEY_BYTES)) for _ in range(self._batch)]
                store._put(made)
                self._fresh = made[::-1]
            key_id, material = self._fresh.pop()
            self._remember(key_id, material)
            return key_id, material

    def _remember(self, key_id: str, material: bytes) -> None:
        if len(self._known) >= self._cached:
            self._known.pop(next(iter(self._known)))
        self._known[key_id] = material

    def known(self, ids: Iterable[str]) -> tuple[dict[str, bytes], list[str]]:
        with self._lock:
            found, missing = {}, []
            for i in ids:
                m = self._known.get(i)
                if m is None:
                    missing.append(i)
                else:
                    found[i] = m
            return found, missing

    def learn(self, keys: dict[str, bytes]) -> None:
        with self._lock:
            for i, m in keys.items():
                self._remember(i, m)

    def drop(self, ids: Iterable[str]) -> None:
        with self._lock:
            for i in ids:
                self._known.pop(i, None)


class MemoryKeyStore:
    """Keys in this process only (an in-memory ledger's: both go with the process)."""

    def __init__(self, *, batch: int = 64, cached: int = 100_000):
        self._keys: dict[str, bytes] = {}
        self._pool = _Pool(batch, cached)
        self._lock = threading.Lock()

    def take(self) -> tuple[str, bytes]:
        """A new key (its id, its material), stored before it is handed out."""
        return self._pool.take(self)

    def _put(self, keys: list[tuple[str, bytes]]) -> None:
        with self._lock:
            self._keys.update(keys)

    def get(self, ids: Iterable[str]) -> dict[str, bytes]:
        """The keys among `ids` that exist (a destroyed or unknown one is absent)."""
        found, missing = self._pool.known(ids)
        with self._lock:
            read = {i: self._keys[i] for i in missing if i in self._keys}
        self._pool.learn(read)
        return found | read

    def destroy(self, ids: Iterable[str]) -> None:
        ids = list(ids)
        with self._lock:
            for i in ids:
                self._keys.pop(i, None)
        self._pool.drop(ids)

    def close(self) -> None:
        """Nothing to release."""


class SqliteKeyStore(MemoryKeyStore):
    """Keys in a SQLite file of their own (`path`), shared by every process that opens it."""

    def __init__(self, path: str | Path, *, batch: int = 64, cached: int = 100_000, busy_timeout_ms: int = 5000):
        self.path = str(path)
        self._pool = _Pool(batch, cached)
        self._lock = threading.Lock()
        with failures():
            self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                        timeout=busy_timeout_ms / 1000)
            for pragma in (f"busy_timeout = {int(busy_timeout_ms)}", "secure_delete = ON", "journal_mode = DELETE",
                           "synchronous = FULL"):
                self.conn.execute(f"PRAGMA {pragma}")
            self.conn.execute(SCHEMA)
        if os.name == "posix":
            try:
                os.chmod(self.path, 0o600)
            except OSError:
                pass

    def _put(self, keys: list[tuple[str, bytes]]) -> None:
        with self._lock, failures():
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.executemany("INSERT INTO data_keys (id, material) VALUES (?, ?)", keys)
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    def get(self, ids: Iterable[str]) -> dict[str, bytes]:
        found, missing = self._pool.known(ids)
        if not missing:
            return found
        read: dict[str, bytes] = {}
        with self._lock, failures():
            for start in range(0, len(missing), ROWS_PER_STATEMENT):
                chunk = missing[start:start + ROWS_PER_STATEMENT]
                read.update((r[0], bytes(r[1])) for r in self.conn.execute(
                    f"SELECT id, material FROM data_keys WHERE id IN ({', '.join('?' * len(chunk))})", chunk))
        self._pool.learn(read)
        return found | read

    def destroy(self, ids: Iterable[str]) -> None:
        """Delete these keys for good (zeroed in the file by secure_delete) before returning."""
        ids = sorted(set(ids))
        if not ids:
            return
        with self._lock, failures():
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                for start in range(0, len(ids), ROWS_PER_STATEMENT):
                    chunk = ids[start:start + ROWS_PER_STATEMENT]
                    self.conn.execute(f"DELETE FROM data_keys WHERE id IN ({', '.join('?' * len(chunk))})", chunk)
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        self._pool.drop(ids)

    def close(self) -> None:
        self.conn.close()


def open_key_store(path: str | Path | None) -> MemoryKeyStore:
    """The key store in the file `path` (made when missing), or in memory for None."""
    if path is None:
        return MemoryKeyStore()
    if not Path(path).parent.is_dir():
        raise StorageFailure("key_store_folder_missing")
    return SqliteKeyStore(path)
