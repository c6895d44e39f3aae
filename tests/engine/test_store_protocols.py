"""The seam between a ledger and its stores is typed (store/protocols.py, issue 23 item 8): mypy
accepts every backend's store where a ledger takes one, and refuses a store that lacks a method
the ledger calls. mypy over the package's imports takes a while: extended."""
from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.extended

BACKENDS = """
from groundrules.store.decisions_postgres import PostgresDecisionStore
from groundrules.store.decisions_sqlite import SqliteDecisionStore
from groundrules.store.evidence_memory import MemoryEvidenceStore
from groundrules.store.evidence_postgres import PostgresEvidenceStore
from groundrules.store.evidence_sqlite import SqliteEvidenceStore
from groundrules.store.findings_postgres import PostgresFindingStore
from groundrules.store.findings_sqlite import SqliteFindingStore
from groundrules.store.protocols import DecisionStore, EvidenceStore, FindingStore


def seam(a: SqliteDecisionStore, b: PostgresDecisionStore, c: SqliteFindingStore, d: PostgresFindingStore,
         e: SqliteEvidenceStore, f: PostgresEvidenceStore, g: MemoryEvidenceStore) -> None:
    decisions: list[DecisionStore] = [a, b]
    findings: list[FindingStore] = [c, d]
    evidence: list[EvidenceStore] = [e, f, g]
"""
LACKING = """
from groundrules.store.decisions_sqlite import SqliteDecisionStore
from groundrules.store.protocols import DecisionStore


class Forgetful(SqliteDecisionStore):
    purge = None


def seam(a: Forgetful) -> None:
    decision: DecisionStore = a
"""


def mypy(path: Path) -> tuple[str, int]:
    api = pytest.importorskip("mypy.api")
    out, err, code = api.run(["--no-incremental", "--follow-imports=silent", "--ignore-missing-imports", str(path)])
    return out + err, code


def test_every_backends_store_is_what_its_ledger_takes(tmp_path):
    (tmp_path / "seam.py").write_text(BACKENDS, encoding="utf-8")
    report, code = mypy(tmp_path / "seam.py")
    assert code == 0, report


def test_a_store_without_a_method_the_ledger_calls_is_refused(tmp_path):
    (tmp_path / "seam.py").write_text(LACKING, encoding="utf-8")
    report, code = mypy(tmp_path / "seam.py")
    assert code != 0 and "purge" in report, report
