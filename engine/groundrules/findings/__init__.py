"""Part 4: the finding ledger (docs/spec/findings.md) — the domain: tools, states, evidence rules, proposals."""
from .clock import RandomIds, SequentialIds, StepClock, SystemClock
from .ledger import FindingLedger

__all__ = ["FindingLedger", "RandomIds", "SequentialIds", "StepClock", "SystemClock"]
