"""Ledger fixtures: only the finding ledger's own tables, a fixed clock and sequential ids."""
from __future__ import annotations

from pathlib import Path

import pytest

from groundrules import load_rulebook
from groundrules.findings import FindingLedger, SequentialIds, StepClock

from findings_support import ROOT, TABLES, Client


@pytest.fixture(scope="session")
def book():
    return load_rulebook(ROOT, TABLES)


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "ledger.db"


@pytest.fixture
def make_ledger(book, db):
    opened = []

    def make(project: str = "p1", path: Path | None = None, root: Path | None = None, **caller) -> Client:
        # each further ledger counts from another hundred thousand, so ledgers sharing a file never collide
        ledger = Client(FindingLedger(path or db, rulebook=book, clock=StepClock(), rules_root=root,
                                      ids=SequentialIds(start=100_000 * len(opened))), project, **caller)
        opened.append(ledger)
        return ledger
    yield make
    for ledger in opened:
        ledger.close()


@pytest.fixture
def ledger(make_ledger) -> Client:
    return make_ledger()
