"""The evidence part (seed 003): the append-only ledger, interpretation checks, and the fold."""
from .fold import fold
from .store import Ledger, MemoryLedger, SqliteLedger

__all__ = ["Ledger", "MemoryLedger", "SqliteLedger", "fold"]
