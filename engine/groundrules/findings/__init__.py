"""Part 4: the finding ledger (seed 001) — SQLite store, the ten tools, keyword search."""
from .clock import RandomIds, SequentialIds, StepClock, SystemClock
from .service import Ledger
from .store import Store

__all__ = ["Ledger", "RandomIds", "SequentialIds", "StepClock", "Store", "SystemClock"]
