"""What every step of the evidence ledger reads: its tables, its sealer, its redaction key, ids and clock.

The ledger (ledger.py) makes one when it is built and hands it to the modules that do its work
(appending, interpreting, erasure, filing, reach); none of them holds state of its own.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:                      # rulebook imports this part's compilers
    from ..core.rulebook import Rulebook
    from ..store.sealing import Sealer
    from .catalogue import EventCatalogue
    from .policy import MergePolicy
    from .refusals import RefusalCatalogue


@dataclass(frozen=True)
class LedgerContext:
    """The ledger's rulebook and the three tables it reads from it, the sealer its personal values
    are sealed by, the key tombstones are digested under (None: no digest), ids and the clock."""

    book: Rulebook
    catalogue: EventCatalogue
    policy: MergePolicy
    refusals: RefusalCatalogue
    sealer: Sealer
    key: bytes | None
    ids: Callable[[], str]
    clock: Callable[[], str]
