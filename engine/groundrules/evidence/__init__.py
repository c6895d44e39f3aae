"""The evidence part (docs/spec/evidence.md): the append-only ledger, interpretation checks, and the fold."""
from .fold import fold
from .ledger import EvidenceLedger

__all__ = ["EvidenceLedger", "fold"]
