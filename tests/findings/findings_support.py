"""Helpers shared by the finding ledger tests (imported by name: tests/ has no packages)."""
from __future__ import annotations

import json
from pathlib import Path

from groundrules import Caller, FindingLedger, Service

ROOT = Path(__file__).resolve().parents[2]
TABLES = [ROOT / "rules" / name for name in (
    "finding_states.yaml", "findings_vocabulary.yaml", "applicability.yaml", "findings_material_change.yaml",
    "findings_warnings.yaml", "independent_support.yaml", "roles.yaml", "messages.yaml", "rule_targets.yaml",
    "finding_provenance.yaml")]


class Client:
    """A finding ledger as a host reaches it: every call through the tool registry, as one caller
    (a reviewer by default, so that every tool and option is open to the tests)."""

    def __init__(self, ledger: FindingLedger, project: str, *, principal: str = "tester", role: str = "reviewer"):
        self.ledger, self.store, self.book = ledger, ledger.store, ledger.book
        self.service = Service(ledger.book, findings=ledger)
        self.caller = Caller(principal, role, (project,))

    def call(self, tool: str, arguments) -> dict:
        return self.service.call(tool, arguments, self.caller)

    def close(self) -> None:
        self.ledger.close()

# the finding ledger's own codes (seed 001 §4), and the tool registry's (envelope v1)
CODES = set(json.loads((ROOT / "schemas" / "finding-ledger.v1.schema.json").read_text(encoding="utf-8"))
            ["$defs"]["error_code"]["enum"])
SURFACE_CODES = {alt["const"] for alt in json.loads((ROOT / "schemas" / "envelope.v1.schema.json").read_text(
    encoding="utf-8"))["$defs"]["surface_error_code"]["oneOf"]}


def open_client(store, project: str = "p1", *, rulebook, principal: str = "tester", role: str = "reviewer",
                root=None, **ledger_options) -> Client:
    """A Client over a new FindingLedger on `store` (a path or a store object)."""
    return Client(FindingLedger(store, rulebook=rulebook, rules_root=root, **ledger_options), project,
                  principal=principal, role=role)


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


def sql(store, query: str, params: tuple = ()) -> list[tuple]:
    """Rows of `query` (`?` placeholders) run on the store's own database, whichever backend."""
    if hasattr(store, "conn"):
        return [tuple(row) for row in store.conn.execute(query, params)]
    with store.pool.connection() as conn:
        return [tuple(row.values()) for row in conn.execute(query.replace("?", "%s"), params)]


def database_errors() -> tuple[type, ...]:
    """What either driver raises when the database refuses a statement."""
    import sqlite3
    errors: list[type] = [sqlite3.DatabaseError]
    try:
        import psycopg
        errors.append(psycopg.DatabaseError)
    except ImportError:
        pass
    return tuple(errors)


def counts(ledger: Client) -> dict:
    tables = ("findings", "finding_tags", "evidence", "finding_evidence", "finding_relations", "finding_events",
              "document_links", "rule_proposals", "idempotency_keys")
    return {t: sql(ledger.store, f"SELECT COUNT(*) FROM {t}")[0][0] for t in tables}
