"""Ledger fixtures: only the finding ledger's own tables, a fixed clock and sequential ids.

`db` is the ledger's database on each backend in turn: a SQLite file, then a fresh PostgreSQL
database (tests/pg_cluster.py). A test that is about one backend's machinery asks for `sqlite_db`
and says so in its name."""
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
def sqlite_db(tmp_path) -> Path:
    return tmp_path / "ledger.db"


@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path) -> Path | str:
    """A SQLite file path, or a postgresql:// URI of a fresh database."""
    return tmp_path / "ledger.db" if request.param == "sqlite" else request.getfixturevalue("pg_db")


@pytest.fixture
def make_ledger(book, db):
    opened = []

    def make(project: str = "p1", path: Path | str | None = None, root: Path | None = None, **caller) -> Client:
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
