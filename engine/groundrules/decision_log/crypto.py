"""The decision log's key and its authenticated encryption (AES-256-GCM from `cryptography`).

The key is key material the server reads from its configuration: a file (`--decision-key FILE`,
or the path in GROUNDRULES_DECISION_KEY_FILE) or the environment (GROUNDRULES_DECISION_KEY); it
never enters the database. What the database holds per decision is a key id (HKDF of the material:
it names which key sealed a row, and reveals nothing of it) and the sealed payload: a version byte,
a random 96-bit nonce, the ciphertext and its tag. The decision's project and id are the associated
data, so a payload moved to another row, or edited, does not open.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from ..core import codes
from ..core.errors import refusal

if TYPE_CHECKING:
    from ..store.keystore import MemoryKeyStore

MIN_KEY_BYTES = 32
ENV_KEY, ENV_KEY_FILE = "GROUNDRULES_DECISION_KEY", "GROUNDRULES_DECISION_KEY_FILE"
VERSION = b"\x01"
NONCE_BYTES = 12
_AES_INFO = b"groundrules decision log v1: AES-256-GCM"
_ID_INFO = b"groundrules decision log v1: key id"


def _hkdf(material: bytes, info: bytes, length: int) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=info).derive(material)


class DecisionKey:
    """AES-256-GCM under a key derived from the operator's material; `id` names it in the rows."""

    def __init__(self, material: bytes):
        try:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        except ImportError:
            raise refusal(codes.NOT_CONFIGURED, "decisions.cryptography") from None
        if len(material) < MIN_KEY_BYTES:
            raise refusal(codes.USAGE, "decisions.key_short", bytes=MIN_KEY_BYTES)
        self._aead = AESGCM(_hkdf(material, _AES_INFO, 32))
        self.id = _hkdf(material, _ID_INFO, 8).hex()

    def __repr__(self) -> str:                      # never the material, in a log or a traceback
        return f"DecisionKey(id={self.id})"

    def seal(self, plaintext: bytes, associated: bytes) -> bytes:
        nonce = os.urandom(NONCE_BYTES)
        return VERSION + nonce + self._aead.encrypt(nonce, plaintext, associated)

    def open(self, sealed: bytes, associated: bytes) -> bytes:
        """The plaintext, or DECISION_UNREADABLE when the payload was sealed under another key,
        belongs to another row, or was altered."""
        from cryptography.exceptions import InvalidTag
        sealed = bytes(sealed)
        if sealed[:1] != VERSION:
            raise refusal(codes.DECISION_UNREADABLE, "decisions.format")
        try:
            return self._aead.decrypt(sealed[1:1 + NONCE_BYTES], sealed[1 + NONCE_BYTES:], associated)
        except InvalidTag:
            raise refusal(codes.DECISION_UNREADABLE, "decisions.wrong_key") from None


class DecisionKeyring:
    """The decision keys an operator holds: `current` seals new rows (and rows re-sealed by
    `groundrules decisions rekey`); the retired ones only open the rows sealed under them, until
    those expire or are re-sealed. A row names its key by id, so any of them opens it."""

    def __init__(self, current: DecisionKey, retired: "tuple[DecisionKey, ...] | list[DecisionKey]" = ()):
        self.current = current
        self.keys = {k.id: k for k in (*retired, current)}
        self.id = current.id

    def __repr__(self) -> str:
        return f"DecisionKeyring(current={self.id}, retired={sorted(set(self.keys) - {self.id})})"

    def seal(self, plaintext: bytes, associated: bytes) -> bytes:
        return self.current.seal(plaintext, associated)

    def open(self, sealed: bytes, associated: bytes, key_id: str | None = None) -> bytes:
        """The plaintext under the key the row names (DECISION_UNREADABLE when the ring lacks it)."""
        key = self.keys.get(key_id) if key_id is not None else self.current
        if key is None:
            raise refusal(codes.DECISION_UNREADABLE, "decisions.key_missing", key=key_id)
        return key.open(sealed, associated)


def ring(key: "DecisionKey | DecisionKeyring") -> DecisionKeyring:
    return key if isinstance(key, DecisionKeyring) else DecisionKeyring(key)


DATA_KEYED = b"\x00dek:"               # a payload sealed under a data key of the key store, not JSON
_KEY_ID_CHARS = 24


def seal_with_data_key(keys: MemoryKeyStore, plaintext: bytes, associated: bytes) -> bytes:
    """`plaintext` under a new data key of the key store `keys` (store/keystore.py), its id before it:
    destroying that key erases the payload in every copy of the database."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    key_id, material = keys.take()
    nonce = os.urandom(NONCE_BYTES)
    return DATA_KEYED + key_id.encode("ascii") + nonce + AESGCM(material).encrypt(nonce, plaintext, associated)


def data_key_of(inner: bytes) -> str | None:
    """The id of the data key an inner payload is sealed under (None: sealed under none)."""
    return inner[len(DATA_KEYED):len(DATA_KEYED) + _KEY_ID_CHARS].decode("ascii") if inner.startswith(DATA_KEYED) \
        else None


def open_with_data_key(keys: MemoryKeyStore | None, inner: bytes, associated: bytes) -> bytes | None:
    """The payload, or None when its data key was destroyed (erased)."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    key_id = data_key_of(inner)
    if key_id is None:
        return inner
    if keys is None:
        raise refusal(codes.DECISION_UNREADABLE, "decisions.no_key_store")
    material = keys.get([key_id]).get(key_id)
    if material is None:
        return None
    body = inner[len(DATA_KEYED) + _KEY_ID_CHARS:]
    try:
        return AESGCM(material).decrypt(body[:NONCE_BYTES], body[NONCE_BYTES:], associated)
    except InvalidTag:
        raise refusal(codes.DECISION_UNREADABLE, "decisions.data_key") from None


def associated(project: str, decision_id: str) -> bytes:
    return f"{project}\x00{decision_id}".encode("utf-8")


def key_from_file(path: str | Path) -> DecisionKey:
    """The key from its file (a trailing newline is not part of it)."""
    try:
        material = Path(path).read_bytes().rstrip(b"\r\n")
    except OSError as exc:
        raise refusal(codes.USAGE, "decisions.key_unread", path=str(path), reason=exc.strerror or type(exc).__name__) \
            from None
    return DecisionKey(material)


def key_from_environment(environ: Mapping[str, str] | None = None) -> DecisionKey | None:
    """The key GROUNDRULES_DECISION_KEY holds, or the file GROUNDRULES_DECISION_KEY_FILE names;
    None when neither is set."""
    environ = os.environ if environ is None else environ
    if environ.get(ENV_KEY):
        return DecisionKey(environ[ENV_KEY].encode("utf-8"))
    if environ.get(ENV_KEY_FILE):
        return key_from_file(environ[ENV_KEY_FILE])
    return None
