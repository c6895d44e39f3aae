"""The evidence part (seed 003): the append-only ledger, interpretation checks, and the fold."""
from .fold import fold
from .ledger import EvidenceLedger

__all__ = ["EvidenceLedger", "fold"]
