"""A tokens file that fails to load on SIGHUP (issue 35, item 4): a revocation written into it must
not silently leave the revoked token valid. The server keeps the previous grants (or, failing
closed, refuses every token), says it is not ready on /readyz and counts the failure in /metrics
until a reload succeeds; against a real server on loopback."""
from __future__ import annotations

import httpx2
from prometheus_client.parser import text_string_to_metric_families

from groundrules import Service
from groundrules.transports.mcp_http import Reloader
from http_support import CALLERS, serving, write_tokens
from wire import Wire, envelope

CONTEXT = {"query": "q", "support_status": "sufficient"}


def works(url: str, token: str) -> bool:
    """Is a call with `token` answered (200), rather than refused for its token (401)?"""
    response = Wire(url, token).call(None, "explain_support", {"context": CONTEXT})
    assert response.status_code in (200, 401), response.text
    return response.status_code == 200 and "ok" in envelope(response)


def status(base: str) -> tuple[int, dict, dict]:
    ready = httpx2.get(base + "/readyz")
    families = {f.name: f for f in text_string_to_metric_families(httpx2.get(base + "/metrics").text)}
    values = {s.name: s.value for f in families.values() for s in f.samples}
    return ready.status_code, ready.json(), values


def broken(path) -> None:
    """The revocation an operator wrote, with a typo that makes the file fail to load."""
    path.write_text(path.read_text("utf-8").replace("tokens:", "tokens:\n  - sha256: [", 1), encoding="utf-8")


def test_a_tokens_file_that_fails_to_load_marks_the_server_not_ready_until_one_loads(rulebook, tmp_path):
    tokens = write_tokens(tmp_path / "tokens.yaml", CALLERS)
    with serving(Service(rulebook), tokens) as (url, served):
        base = url.removesuffix("/mcp")
        reloader = Reloader(served, served.verifier, None)
        assert works(url, "tok-alpha") and status(base)[0] == 200
        write_tokens(tokens, {k: v for k, v in CALLERS.items() if k != "tok-alpha"})
        broken(tokens)
        reloader.reload()
        code, ready, metrics = status(base)
        assert code == 503 and ready["status"] == "not ready" and ready["credentials"] == "stale"
        assert metrics["groundrules_credential_reload_failures_total"] == 1
        assert metrics["groundrules_credentials_stale"] == 1
        assert works(url, "tok-alpha")                      # the previous grants stay (documented), visibly
        write_tokens(tokens, {k: v for k, v in CALLERS.items() if k != "tok-alpha"})
        reloader.reload()
        code, ready, metrics = status(base)
        assert code == 200 and ready["credentials"] == "ok" and metrics["groundrules_credentials_stale"] == 0
        assert not works(url, "tok-alpha") and works(url, "tok-beta")   # the revocation holds


def test_failing_closed_refuses_every_token_until_a_reload_succeeds(rulebook, tmp_path):
    tokens = write_tokens(tmp_path / "tokens.yaml", CALLERS)
    with serving(Service(rulebook), tokens) as (url, served):
        reloader = Reloader(served, served.verifier, None, fail_closed=True)
        assert works(url, "tok-beta")
        broken(tokens)
        reloader.reload()
        assert not works(url, "tok-alpha") and not works(url, "tok-beta")
        assert status(url.removesuffix("/mcp"))[0] == 503
        write_tokens(tokens, {"tok-beta": CALLERS["tok-beta"]})
        reloader.reload()
        assert works(url, "tok-beta") and not works(url, "tok-alpha")
