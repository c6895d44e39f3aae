"""Helpers shared by the finding ledger tests (imported by name: tests/ has no packages)."""
from __future__ import annotations

from pathlib import Path

from groundrules.findings import Ledger

ROOT = Path(__file__).resolve().parents[2]
TABLES = [ROOT / "rules" / name for name in (
    "finding_states.yaml", "findings_vocabulary.yaml", "applicability.yaml", "findings_material_change.yaml",
    "findings_warnings.yaml")]

CODES = {"INVALID_ARGUMENT", "NOT_FOUND", "PROJECT_SCOPE_MISMATCH", "INVALID_STATE_TRANSITION",
         "EVIDENCE_REQUIRED", "RELATION_CYCLE", "CONCURRENT_MODIFICATION", "STORAGE_ERROR"}


def ok(envelope: dict) -> dict:
    assert envelope["ok"] is True, envelope["error"]
    assert envelope["error"] is None
    return envelope["data"]


def refused(envelope: dict, code: str) -> dict:
    assert envelope["ok"] is False, envelope["data"]
    assert envelope["data"] is None
    assert envelope["error"]["code"] == code, envelope["error"]
    return envelope["error"]


EXPERIMENT = {"source_kind": "experiment_run", "source_ref": "run:4472", "locator": "probe:shift-verify",
              "revision": "0862527", "excerpt": "shift -1/0/+1 的均值指标近似", "relation": "supports",
              "method": "experiment", "rationale": "当前结果没有显示明显的 shift 差异"}
COUNTER = {"source_kind": "log", "source_ref": "log:gpu-temp", "excerpt": "温度升高 8℃ 后误差翻倍",
           "relation": "contradicts", "method": "log_inspection"}
USER_SAYS = {"source_kind": "conversation", "source_ref": "msg:17", "excerpt": "用户说肯定是 off-by-one",
             "relation": "supports", "method": "user_statement"}


def finding(**overrides) -> dict:
    base = {"claim_kind": "diagnosis", "statement": "当前探针结果不支持 off-by-one 是该差异的主因",
            "details": "shift -1/0/+1 的指标近似，尚需其他来源佐证",
            "scope": {"match": {"runtime.backend": "vLLM"}, "context": {"commit": "0862527"},
                      "revalidate_on": ["code_change", "config_change"]},
            "tags": ["excluded-candidate", "debugging"], "retrieval_policy": "relevant"}
    base.update(overrides)
    return base


def counts(ledger: Ledger) -> dict:
    tables = ("findings", "finding_tags", "evidence", "finding_evidence", "finding_relations", "finding_events",
              "document_links", "rule_proposals", "idempotency_keys")
    conn = ledger.store.conn
    return {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}
