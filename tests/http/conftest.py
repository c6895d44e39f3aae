"""One shared HTTP server per module: three callers (two agents in two projects, one reviewer)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "findings"))   # findings_support

from groundrules import EvidenceLedger, FindingLedger, Service  # noqa: E402
from groundrules.findings import RandomIds, SystemClock  # noqa: E402

from http_support import CALLERS, REDACTION_KEY, running, write_tokens  # noqa: E402



@pytest.fixture(scope="module")
def rules_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("project")


@pytest.fixture(scope="module")
def server(rulebook, tmp_path_factory, rules_root):
    """(url, service) of a running server on a fresh database."""
    where = tmp_path_factory.mktemp("http")
    db, ids = where / "ledger.db", RandomIds()
    service = Service(rulebook, findings=FindingLedger(db, rulebook=rulebook, rules_root=rules_root),
                      evidence=EvidenceLedger(db, ids=lambda: ids.new("R"), clock=SystemClock(), rulebook=rulebook,
                                              redaction_key=REDACTION_KEY))
    with running(service, write_tokens(where / "tokens.yaml", CALLERS)) as url:
        yield url, service
    service.findings.close()
    service.evidence.close()


@pytest.fixture(scope="module")
def url(server) -> str:
    return server[0]
