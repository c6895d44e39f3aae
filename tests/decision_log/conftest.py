"""Decision log fixtures: the database on each backend in turn (a SQLite file, then a fresh
PostgreSQL database), a key kept outside it, reproducible ids and clocks."""
from __future__ import annotations

from pathlib import Path

import pytest

from groundrules import EvidenceLedger, FindingLedger, Service
from groundrules.decision_log.crypto import DecisionKey
from groundrules.decision_log.log import DecisionLog
from groundrules.findings import SequentialIds, StepClock
from groundrules.store.keystore import SqliteKeyStore

from decision_support import KEY_MATERIAL, START


@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path) -> Path | str:
    return tmp_path / "ledger.db" if request.param == "sqlite" else request.getfixturevalue("pg_db")


@pytest.fixture
def key() -> DecisionKey:
    return DecisionKey(KEY_MATERIAL)


@pytest.fixture
def make_service(rulebook, db, key, tmp_path):
    """make(**log options) -> a Service over both ledgers and a decision log on `db`, their
    personal values sealed under data keys of one key store (tmp_path/keys)."""
    opened = []

    def make(book=None, *, logged: bool = True, **options) -> Service:
        book = book or rulebook
        ids = SequentialIds(start=100_000 * len(opened))
        keys = SqliteKeyStore(f"{db}.keys" if isinstance(db, Path) else tmp_path / "keys")
        evidence = EvidenceLedger(db, ids=lambda: ids.new("R"), clock=StepClock(START), rulebook=book, keys=keys)
        findings = FindingLedger(db, rulebook=book, clock=StepClock(START), ids=ids)
        log = None
        if logged:
            options.setdefault("ids", SequentialIds(start=100_000 * len(opened)))
            options.setdefault("clock", StepClock(START))
            log = DecisionLog(db, key=options.pop("key", key), data_keys=keys, rulebook=book, **options)
        service = Service(book, findings=findings, evidence=evidence, decisions=log)
        opened.append(service)
        return service
    yield make
    for service in opened:
        for part in (service.decisions, service.findings, service.evidence):
            if part is not None:
                part.close()


@pytest.fixture
def service(make_service) -> Service:
    return make_service()


@pytest.fixture
def rulebook_with(tmp_path):
    """rulebook_with(edit) -> the bundled tables with rules/decision_masking.yaml edited by
    edit(data) (a copy in tmp_path)."""
    import shutil

    import yaml

    from groundrules import load_rulebook
    from groundrules.core.rulebook import data_root

    def make(edit, name: str = "tables") -> object:
        root = tmp_path / name
        for part in ("rules", "locks", "schemas"):
            shutil.copytree(Path(data_root()) / part, root / part)
        table = root / "rules" / "decision_masking.yaml"
        data = yaml.safe_load(table.read_text(encoding="utf-8"))
        edit(data)
        table.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
        return load_rulebook(root)
    return make
