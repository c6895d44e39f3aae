"""The shared server as operators run it (issue 20, items 1-4): health, metrics, one log line per
call, live rule reloads; against a real server on loopback."""
from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families

from groundrules import EvidenceLedger, FindingLedger, Service, load_rulebook
from groundrules.findings import RandomIds, SystemClock
from groundrules.transports.http_ops import JsonLines
from groundrules.transports.mcp_http import GrantsVerifier, Reloader
from groundrules.transports.settings import ServerSettings
from http_support import CALLERS, running, serving, write_tokens
from wire import Wire, envelope

ROOT = Path(__file__).resolve().parents[2]
MESSAGE = {"id": "m1", "role": "user", "content": "手机 13800138000"}
SECRET_STATEMENT = "只在参数里出现的陈述"


def open_service(folder: Path, rulebook) -> Service:
    ids = RandomIds()
    db = folder / "ledger.db"
    return Service(rulebook, findings=FindingLedger(db, rulebook=rulebook),
                   evidence=EvidenceLedger(db, ids=lambda: ids.new("R"), clock=SystemClock(), rulebook=rulebook))


@pytest.fixture(scope="module")
def ops(rulebook, tmp_path_factory):
    folder = tmp_path_factory.mktemp("ops")
    token = folder / "metrics.token"
    token.write_text("metrics-secret-0123456789\n", encoding="utf-8")
    service = open_service(folder, rulebook)
    with running(service, write_tokens(folder / "tokens.yaml", CALLERS),
                 ServerSettings(metrics_token_file=str(token))) as url:
        yield url, url.removesuffix("/mcp"), service


def test_healthz_and_readyz_answer_without_a_token_and_say_nothing_of_a_project(ops):
    url, base, service = ops
    assert httpx2.get(base + "/healthz").json() == {"status": "ok"}
    ready = httpx2.get(base + "/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ready", "rulebook": service.book.version, "findings": "ok", "evidence": "ok",
                            "credentials": "ok"}


def test_readyz_names_the_part_that_fails(rulebook, tmp_path):
    service = open_service(tmp_path, rulebook)

    def broken() -> None:
        raise OSError("disk gone")
    service.evidence.ping = broken
    with running(service, write_tokens(tmp_path / "tokens.yaml", CALLERS)) as url:
        ready = httpx2.get(url.removesuffix("/mcp") + "/readyz")
    assert ready.status_code == 503
    assert ready.json()["status"] == "not ready" and ready.json()["findings"] == "ok"
    assert ready.json()["evidence"].startswith("unreachable (OSError")


def test_metrics_count_calls_by_tool_role_and_outcome_and_name_no_project_or_principal(ops):
    url, base, service = ops
    alpha, review = Wire(url, "tok-alpha"), Wire(url, "tok-review")
    assert envelope(alpha.call(None, "lock_message", {"message": MESSAGE}))["ok"]
    assert envelope(alpha.call(None, "log_finding", {"claim_kind": "diagnosis", "statement": SECRET_STATEMENT,
                                                      "retrieval_policy": "relevant"}))["ok"]
    refused = envelope(alpha.call(None, "get_finding", {"finding_id": "F-999999", "project": "beta"}))
    assert refused["error"]["code"] == "PROJECT_SCOPE_MISMATCH"
    review.session()
    assert httpx2.get(base + "/metrics").status_code == 401
    text = httpx2.get(base + "/metrics", headers={"Authorization": "Bearer metrics-secret-0123456789"}).text
    families = {f.name: f for f in text_string_to_metric_families(text)}
    calls = {(s.labels["tool"], s.labels["role"], s.labels["outcome"]): s.value
             for s in families["groundrules_calls"].samples if s.name == "groundrules_calls_total"}
    assert calls[("lock_message", "agent", "ok")] >= 1
    assert calls[("get_finding", "agent", "PROJECT_SCOPE_MISMATCH")] >= 1
    assert any(s.name.endswith("_bucket") and s.labels["tool"] == "log_finding"
               for s in families["groundrules_call_duration_seconds"].samples)
    assert {s.labels["role"]: s.value for s in families["groundrules_sessions_open"].samples}.get("reviewer", 0) >= 1
    assert [s.labels["version"] for s in families["groundrules_rulebook_info"].samples] == [service.book.version]
    labels = {v for f in families.values() for s in f.samples for v in s.labels.values()}
    never = {p for _, (principal, _, projects) in CALLERS.items() for p in [principal, *projects]}
    assert not labels & never and SECRET_STATEMENT not in text


def test_every_call_is_one_log_line_without_its_arguments(ops, caplog):
    url, base, _ = ops
    with caplog.at_level(logging.INFO, logger="groundrules.calls"):
        response = Wire(url, "tok-alpha").call(None, "log_finding", {
            "claim_kind": "diagnosis", "statement": SECRET_STATEMENT, "retrieval_policy": "relevant"})
    assert envelope(response)["ok"]
    [record] = [r for r in caplog.records if r.name == "groundrules.calls"]
    line = json.loads(JsonLines().format(record))
    assert {k: line[k] for k in ("principal", "role", "tool", "project", "outcome", "store_attempts")} == {
        "principal": "agent-a", "role": "agent", "tool": "log_finding", "project": "alpha", "outcome": "ok",
        "store_attempts": 1}
    assert line["request_id"] == response.headers["x-request-id"] and line["duration_ms"] > 0
    assert SECRET_STATEMENT not in json.dumps(line, ensure_ascii=False) and "tok-alpha" not in json.dumps(line)


def test_a_request_id_from_the_proxy_is_kept(ops):
    url, _, _ = ops
    wire = Wire(url, "tok-alpha")
    response = wire.http.get(url.removesuffix("/mcp") + "/healthz", headers={"X-Request-Id": "nginx-42"})
    assert response.status_code == 200
    posted = wire.http.post(url, json={"jsonrpc": "2.0", "id": True, "method": "ping"},
                            headers=dict(wire.headers(), **{"X-Request-Id": "nginx-43"}))
    assert posted.headers["x-request-id"] == "nginx-43"
    forged = wire.http.post(url, json={"jsonrpc": "2.0", "id": True, "method": "ping"},
                            headers=dict(wire.headers(), **{"X-Request-Id": "a b" * 40}))
    assert forged.headers["x-request-id"] != "a b" and len(forged.headers["x-request-id"]) == 16


# ------------------------------------------------------------------------------ live rule reloads

def rules_copy(folder: Path) -> Path:
    for name in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / name, folder / name)
    return folder


def test_a_reload_swaps_the_rulebook_new_calls_decide_by_it_and_a_bad_table_keeps_it(tmp_path, caplog):
    root = rules_copy(tmp_path / "root")
    book = load_rulebook(root)
    service = open_service(tmp_path, book)
    context = json.loads((ROOT / "schemas/examples/support_reason/cq-shenlun-partial.json").read_text("utf-8"))
    with serving(service, write_tokens(tmp_path / "tokens.yaml", CALLERS)) as (url, served):
        reloader = Reloader(served, GrantsVerifier(tmp_path / "tokens.yaml", book.table("roles").roles), root)
        wire = Wire(url, "tok-alpha")
        before = envelope(wire.call(None, "explain_support", {"context": context}))
        table = root / "rules" / "support_reason.yaml"
        label = before["data"]["primary_label"]
        table.write_text(table.read_text("utf-8").replace(label, label + "（新）", 1), encoding="utf-8")
        assert reloader.reload() is True
        after = envelope(wire.call(None, "explain_support", {"context": context}))
        assert after["data"]["primary_label"] == label + "（新）" and after["rulebook"] != before["rulebook"]
        table.write_text(table.read_text("utf-8").replace("hit_policy: output_order", "hit_policy: outputorder"),
                         encoding="utf-8")
        with caplog.at_level(logging.ERROR, logger="groundrules.http"):
            assert reloader.reload() is False
        kept = envelope(wire.call(None, "explain_support", {"context": context}))
        assert kept["rulebook"] == after["rulebook"]
        [record] = [r for r in caplog.records if "not reloaded" in r.getMessage()]
        assert any(p.startswith("rules/support_reason.yaml:") for p in record.fields["problems"])
        ready = httpx2.get(url.removesuffix("/mcp") + "/readyz").json()
        assert ready["rulebook"] == after["rulebook"]
