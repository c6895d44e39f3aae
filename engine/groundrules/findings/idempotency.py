"""Retries (docs/spec/findings.md): a write carrying an idempotency_key answers a retry with its first
answer and creates nothing; the same key with other arguments, or for another tool, is refused."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import canonical, codes
if TYPE_CHECKING:
    from .call import Call

NOT_COMPARED = ("idempotency_key", "project")   # a retry need not repeat these to be the same call


class Retry:
    """The idempotency key of one write call, if it has one, and the digest of its arguments:
    canonical JSON, so a retry whose keys come in another order is the same call."""

    def __init__(self, call: Call, arguments: dict):
        self.call = call
        self.key = arguments.get("idempotency_key")
        self.payload = None if self.key is None else canonical.digest(
            {k: v for k, v in arguments.items() if k not in NOT_COMPARED})

    def first_answer(self) -> tuple[dict, list] | None:
        """The answer the key's first call gave, or None when there was none (or no key)."""
        if self.key is None:
            return None
        call = self.call
        first = call.tx.remembered(call.project, self.key)
        if first is None:
            return None
        if (first["tool"], first["payload_hash"]) != (call.tool, self.payload):
            raise call.refuse(codes.INVALID_ARGUMENT, "idempotency_reused", field="idempotency_key")
        return first["response"]["data"], first["response"]["warnings"]

    def remember(self, data: dict, warnings: list) -> None:
        """Keep the answer under the key, in the same transaction as the write it answers."""
        if self.key is not None and self.payload is not None:      # a payload digest exactly when a key
            call = self.call
            call.tx.remember(call.project, self.key, call.tool, self.payload, {"data": data, "warnings": warnings},
                             call.now)
