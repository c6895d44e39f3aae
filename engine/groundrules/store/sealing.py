"""Personal values as the stores keep them: sealed (AES-256-GCM) under a data key of the key store.

A sealed value is the JSON object {"key": <data key id>, "sealed": <base64 of nonce, ciphertext and
tag>}: the id names a key of the key store (store/keystore.py) and reveals nothing of it; the
associated data binds the value to its row (the project and the row's id), so a sealed value moved
to another row does not open. `open` answers None when the key was destroyed (the value is erased).
"""
from __future__ import annotations

import base64
import json
import os
from typing import Any, Iterable

from .keystore import MemoryKeyStore

NONCE_BYTES = 12


class Sealer:
    """Seals and opens values under the data keys of `keys` (a key store)."""

    def __init__(self, keys: MemoryKeyStore):
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
        self.keys = keys
        self._aead = AESGCM

    def seal(self, value: Any, associated: str) -> dict:
        """`value` (JSON) sealed under a new data key."""
        key_id, material = self.keys.take()
        return {"key": key_id, "sealed": self.seal_bytes(material, json.dumps(
            value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), associated)}

    def seal_bytes(self, material: bytes, plaintext: bytes, associated: str) -> str:
        nonce = os.urandom(NONCE_BYTES)
        return base64.b64encode(nonce + self._aead(material).encrypt(
            nonce, plaintext, associated.encode("utf-8"))).decode("ascii")

    def materials(self, sealed: Iterable[Any]) -> dict[str, bytes]:
        """The keys of these sealed values that still exist, read in one go."""
        return self.keys.get(sorted({s["key"] for s in sealed if is_sealed(s)}))

    def open(self, sealed: dict, associated: str, materials: dict[str, bytes] | None = None) -> Any:
        """The value, or None when its key is destroyed. Raises ValueError when it does not open
        (altered, or moved from another row)."""
        material = (materials if materials is not None else self.materials([sealed])).get(sealed["key"])
        if material is None:
            return None
        from cryptography.exceptions import InvalidTag
        raw = base64.b64decode(sealed["sealed"])
        try:
            plain = self._aead(material).decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], associated.encode("utf-8"))
        except InvalidTag:
            raise ValueError("a sealed value does not open") from None
        return json.loads(plain)

    def destroy(self, key_ids: Iterable[str]) -> None:
        self.keys.destroy(key_ids)


def is_sealed(value: Any) -> bool:
    return isinstance(value, dict) and value.keys() == {"key", "sealed"}


def record_data(project: str, record_id: str) -> str:
    """The associated data of a record's personal values."""
    return f"record\x00{project}\x00{record_id}"


def interpretation_data(project: str) -> str:
    """The associated data of an interpretation's body."""
    return f"interpretation\x00{project}"
