"""Stores are picked by one registry, by the scheme of the URL naming the database (store/backends.py):
each backend declares its kind, a ledger it cannot hold is refused by name, and a bare path is
still a SQLite file."""
from __future__ import annotations

from pathlib import Path

import pytest

from groundrules import EvidenceLedger, FindingLedger
from groundrules.core.errors import GroundrulesError
from groundrules.store import database, open_evidence_store, open_finding_store
from groundrules.store.backends import BACKENDS, LEDGERS, locate, open_store


@pytest.mark.parametrize("db, kind, target", [
    (None, "memory", ""),
    ("memory:", "memory", ""),
    ("sqlite:ledger.sqlite", "sqlite", "ledger.sqlite"),
    ("sqlite:///srv/ledger.sqlite", "sqlite", "/srv/ledger.sqlite"),
    ("SQLite:ledger.sqlite", "sqlite", "ledger.sqlite"),
    ("ledger.sqlite", "sqlite", "ledger.sqlite"),
    (":memory:", "sqlite", ":memory:"),
    ("C:\\ledgers\\a.sqlite", "sqlite", "C:\\ledgers\\a.sqlite"),
    ("notes:2030.sqlite", "sqlite", "notes:2030.sqlite"),
    ("postgresql://u@h/db", "postgresql", "postgresql://u@h/db"),
    ("postgres://u@h/db", "postgresql", "postgres://u@h/db"),
])
def test_a_database_is_named_by_its_scheme_or_is_a_file(db, kind, target):
    assert locate(db) == (kind, target)


def test_a_path_object_is_a_sqlite_file(tmp_path):
    assert locate(tmp_path / "a.sqlite") == ("sqlite", tmp_path / "a.sqlite")


@pytest.mark.parametrize("db", ["mysql://u@h/db", "memory:somewhere"])
def test_an_unknown_url_is_refused_naming_what_is_known(db):
    with pytest.raises(GroundrulesError) as refused:
        locate(db)
    assert refused.value.code == "NOT_CONFIGURED"
    if "://" in db:
        assert all(f"{scheme}:" in refused.value.message for scheme in ("memory", "sqlite", "postgresql"))


def test_every_registered_store_declares_the_kind_it_is_registered_under():
    pytest.importorskip("psycopg")
    for kind, backend in BACKENDS.items():
        assert backend.kind == kind
        assert set(backend.stores) <= set(LEDGERS)
        for ledger in backend.stores:
            assert backend.store_class(ledger).kind == kind


def test_a_ledger_a_backend_cannot_hold_is_refused_by_name():
    with pytest.raises(GroundrulesError) as refused:
        open_finding_store("memory:")
    assert refused.value.code == "NOT_CONFIGURED"
    assert "findings" in refused.value.message and "evidence" in refused.value.message


def test_a_sqlite_url_opens_the_file_it_names(tmp_path):
    path = tmp_path / "f.sqlite"
    ledger = FindingLedger(f"sqlite:{path}")
    try:
        assert ledger.store.kind == "sqlite" and path.exists()
    finally:
        ledger.store.close()
    assert database(f"sqlite:{path}") == path
    assert database("postgresql://u@h/db") == "postgresql://u@h/db"


def test_the_evidence_ledger_in_memory_and_in_a_sqlite_url_keeps_its_keys_where_it_should(tmp_path):
    memory = EvidenceLedger("memory:", ids=iter(f"R{n}" for n in range(99)).__next__, clock=lambda: "2030-01-01T00:00:00Z")
    try:
        assert memory.store.kind == "memory"
        memory.append({"id": "m1", "type": "message", "role": "user", "state": "sent", "content": "微信 wx_wang01"})
        assert [r["id"] for r in memory.records()][0] == "m1"
    finally:
        memory.close()
    assert not list(Path.cwd().glob("memory*"))
    path = tmp_path / "e.sqlite"
    filed = EvidenceLedger(f"sqlite:{path}")
    try:
        assert filed.store.kind == "sqlite"
    finally:
        filed.close()
    assert path.exists() and Path(f"{path}.keys").exists()


def test_open_store_and_the_named_openers_agree():
    assert type(open_store("evidence", None)) is type(open_evidence_store()) is type(open_evidence_store("memory:"))
