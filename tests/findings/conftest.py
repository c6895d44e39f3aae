"""Ledger fixtures: only the finding ledger's own tables, a fixed clock and sequential ids."""
from __future__ import annotations

from pathlib import Path

import pytest

from groundrules import load_rulebook
from groundrules.findings import Ledger, SequentialIds, StepClock

from findings_support import ROOT, TABLES


@pytest.fixture(scope="session")
def book():
    return load_rulebook(ROOT, TABLES)


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "ledger.db"


@pytest.fixture
def make_ledger(book, db):
    opened = []

    def make(project: str = "p1", path: Path | None = None) -> Ledger:
        # each further ledger counts from another hundred thousand, so ledgers sharing a file never collide
        ledger = Ledger(path or db, project=project, rulebook=book, clock=StepClock(),
                        ids=SequentialIds(start=100_000 * len(opened)))
        opened.append(ledger)
        return ledger
    yield make
    for ledger in opened:
        ledger.close()


@pytest.fixture
def ledger(make_ledger) -> Ledger:
    return make_ledger()
