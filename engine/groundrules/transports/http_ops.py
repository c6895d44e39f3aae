"""What an operator sees of the shared server: health, metrics, one log line per call.

- `/healthz` answers while the process does; `/readyz` answers 200 only while the rulebook is
  loaded, every configured ledger answers within `READY_TIMEOUT_S`, the last SIGHUP loaded the
  tokens file (or claim map) and the server is not draining, else 503 naming the failing part. Neither needs a token, and neither says anything of a project.
- `/metrics` is Prometheus text (prometheus_client, a registry per server), optionally behind its
  own bearer token: calls by tool, role and outcome, latency per tool, open sessions per role,
  calls running per lane, store pool connections and waiters, write retries, the rulebook version.
  No label ever holds a project, a principal, an argument or an excerpt.
- Each call is one log line (JSON or text): time, request id, principal, role, tool, project,
  outcome, duration, store attempts; never arguments, excerpts or tokens.
"""
from __future__ import annotations

import contextvars
import hmac
import json
import logging
import re
import time
import uuid
from typing import TYPE_CHECKING, Any, Iterable

import anyio
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..core import codes
from ..api import CURRENT_PROJECT, TOOLS, Caller

if TYPE_CHECKING:
    from ..results import Envelope
    from .mcp_http import Served

READY_TIMEOUT_S = 2.0
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
REQUEST_ID = contextvars.ContextVar("groundrules_request_id", default="")
_GOOD_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
calls_log = logging.getLogger("groundrules.calls")


def request_id(given: str | None) -> str:
    """The request id a proxy sent (X-Request-Id), when it is a plain token, else a new one."""
    return given if given is not None and _GOOD_ID.match(given) else uuid.uuid4().hex[:16]


class Metrics:
    """The server's Prometheus registry: counters the dispatcher feeds, gauges read at scrape."""

    def __init__(self, served: "Served"):
        self.served = served
        self.registry = CollectorRegistry(auto_describe=True)
        self.calls = Counter("groundrules_calls", "Tool calls answered, by tool, caller role and outcome "
                             "(ok or the error code)", ["tool", "role", "outcome"], registry=self.registry)
        self.latency = Histogram("groundrules_call_duration_seconds", "Time to answer a tool call, by tool",
                                 ["tool"], buckets=LATENCY_BUCKETS, registry=self.registry)
        self.retries = Counter("groundrules_store_retries", "Write transactions run again (a serialization "
                               "failure or a unique key met)", registry=self.registry)
        self.credential_failures = Counter("groundrules_credential_reload_failures", "SIGHUP reloads whose tokens "
                                           "file (or OAuth claim map) failed to load", registry=self.registry)
        self.registry.register(_Gauges(served))

    def text(self) -> bytes:
        return generate_latest(self.registry)


class _Gauges:
    def __init__(self, served: "Served"):
        self.served = served

    def describe(self) -> list:
        return []

    def collect(self) -> Iterable:
        served = self.served
        sessions = GaugeMetricFamily("groundrules_sessions_open", "Open MCP sessions, by caller role", labels=["role"])
        for role, count in sorted(served.sessions.held_by_role().items()):
            sessions.add_metric([role], count)
        yield sessions
        running = GaugeMetricFamily("groundrules_calls_running", "Calls running in a worker thread, by lane",
                                    labels=["lane"])
        for lane, count in served.dispatcher.running_by_lane().items():
            running.add_metric([lane], count)
        yield running
        yield GaugeMetricFamily("groundrules_requests_waiting", "Requests whose body is read, waiting for their "
                                "turn (transports/turns.py)", value=served.guard.turns.waiting)
        in_use = GaugeMetricFamily("groundrules_store_pool_connections", "Pooled store connections, by ledger "
                                   "and state", labels=["ledger", "state"])
        waiting = GaugeMetricFamily("groundrules_store_pool_waiting", "Calls waiting for a pooled connection",
                                    labels=["ledger"])
        service = served.dispatcher.service
        for name in ("findings", "evidence"):
            stats = _pool_stats(getattr(service, name))
            if stats is not None:
                in_use.add_metric([name, "in_use"], stats["pool_size"] - stats.get("pool_available", 0))
                in_use.add_metric([name, "idle"], stats.get("pool_available", 0))
                waiting.add_metric([name], stats.get("requests_waiting", 0))
        yield in_use
        yield waiting
        yield GaugeMetricFamily("groundrules_credentials_stale", "1 while the last SIGHUP failed to load the tokens "
                                "file (or OAuth claim map), else 0", value=int(served.credentials_stale))
        info = InfoMetricFamily("groundrules_rulebook", "The rulebook that decides the answers")
        info.add_metric([], {"version": service.book.version})
        yield info


def _pool_stats(ledger: Any) -> dict | None:
    pool = getattr(getattr(ledger, "store", None), "pool", None)
    return pool.get_stats() if pool is not None else None


class CallLog:
    """The dispatcher's observer: a log line and the metrics of every call."""

    def __init__(self, metrics: Metrics | None):
        self.metrics = metrics

    def __call__(self, name: Any, arguments: Any, caller: Caller, envelope: Envelope, seconds: float, attempts: int) -> None:
        tool = name if isinstance(name, str) and name in TOOLS else "(unknown)"
        error = envelope.get("error")
        outcome = "ok" if envelope["ok"] else str(error.get("code", "ERROR") if error else "ERROR")
        if self.metrics is not None:
            self.metrics.calls.labels(tool, caller.role or "(none)", outcome).inc()
            self.metrics.latency.labels(tool).observe(seconds)
            if attempts > 1:
                self.metrics.retries.inc(attempts - 1)
        fields = {"request_id": REQUEST_ID.get(), "principal": caller.principal, "role": caller.role, "tool": tool,
                  "project": _project(name, arguments, caller), "outcome": outcome,
                  "duration_ms": round(seconds * 1000, 3), "store_attempts": attempts,
                  "rulebook": envelope.get("rulebook")}
        calls_log.log(logging.ERROR if outcome == codes.INTERNAL_ERROR else logging.INFO, "call", extra={"fields": fields})


def _project(name: Any, arguments: Any, caller: Caller) -> str:
    """The project a ledger call works in, as the registry resolves it ('' for the stateless tools)."""
    tool = TOOLS.get(name) if isinstance(name, str) else None
    if tool is None or not tool.ledger or not isinstance(arguments, dict):
        return ""
    project = arguments.get("project", CURRENT_PROJECT)
    if project == CURRENT_PROJECT and caller.projects:
        return caller.projects[0]
    return project if isinstance(project, str) and project in caller.projects else "(refused)"


def routes(served: "Served", metrics: Metrics, metrics_token: str | None) -> list[Route]:
    checks = anyio.CapacityLimiter(2)          # health checks never take a call's thread

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        service = served.dispatcher.service
        parts: dict[str, str] = {"rulebook": service.book.version}
        for name in ("findings", "evidence"):
            ledger = getattr(service, name)
            if ledger is not None:
                parts[name] = await _reachable(ledger, checks)
        parts["credentials"] = "stale" if served.credentials_stale else "ok"
        ready = not served.guard.draining and all(v == "ok" for k, v in parts.items() if k != "rulebook")
        status = "ready" if ready else ("draining" if served.guard.draining else "not ready")
        return JSONResponse({"status": status, **parts}, status_code=200 if ready else 503)

    async def metrics_text(request: Request) -> Response:
        if metrics_token is not None:
            given = request.headers.get("authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {metrics_token}".encode()):
                return JSONResponse({"error": "invalid_token"}, status_code=401,
                                    headers={"WWW-Authenticate": 'Bearer realm="metrics"'})
        return Response(metrics.text(), media_type="text/plain; version=0.0.4; charset=utf-8")

    return [Route("/healthz", healthz, methods=["GET"]), Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics_text, methods=["GET"])]


async def _reachable(ledger: Any, limiter: anyio.CapacityLimiter) -> str:
    if limiter.available_tokens == 0:
        return "unreachable (earlier checks still wait for it)"
    try:
        with anyio.fail_after(READY_TIMEOUT_S):
            await anyio.to_thread.run_sync(ledger.ping, limiter=limiter, abandon_on_cancel=True)
    except TimeoutError:
        return f"unreachable (no answer in {READY_TIMEOUT_S:g} s)"
    except Exception as exc:  # noqa: BLE001 - the kind of failure, never its text (it may hold a path)
        return f"unreachable ({getattr(exc, 'code', None) or type(exc).__name__})"
    return "ok"


class JsonLines(logging.Formatter):
    """One JSON object per record: time, level, logger, message and the record's fields."""

    def format(self, record: logging.LogRecord) -> str:
        line = {"time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
                "level": record.levelname.lower(), "logger": record.name, "message": record.getMessage(),
                **getattr(record, "fields", {})}
        if record.exc_info:
            line["traceback"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class TextLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        fields = " ".join(f"{k}={v}" for k, v in getattr(record, "fields", {}).items())
        head = f"{self.formatTime(record, '%Y-%m-%dT%H:%M:%S')} {record.levelname.lower()} {record.name}: " \
               f"{record.getMessage()}"
        text = f"{head} {fields}".rstrip()
        return text + ("\n" + self.formatException(record.exc_info) if record.exc_info else "")


def configure_logging(fmt: str) -> None:
    """groundrules' records to stderr in `fmt` (json | text); uvicorn's own at warning (the call
    lines replace its access log)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonLines() if fmt == "json" else TextLines())
    root = logging.getLogger("groundrules")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    root.propagate = False
    for name in ("uvicorn", "uvicorn.error", "mcp"):
        logging.getLogger(name).setLevel(logging.WARNING)
    logging.getLogger("uvicorn.access").disabled = True
