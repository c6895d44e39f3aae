"""Running the shared server: connections that cannot be held open for nothing, and a stop that
loses no answer.

uvicorn times out idle keep-alive connections but never a request head that trickles in (200
slowloris connections were still held after 70 s): `TimedProtocol` closes a connection whose
request head is not whole `header_timeout_s` after it opened or after its last answer (the guard
bounds the body). On SIGTERM or SIGINT the server drains (`DrainingServer`): it takes no new
connection, session or call (503), lets the calls in flight finish and answers them, closes the
sessions and exits 0. Past the grace period, or on a second signal, the calls still running are
abandoned: none of them commits (store/lifecycle.py), the ones that already committed are answered, and
the server exits within a second.
"""
from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import socket
import threading
import time
from types import FrameType
from typing import TYPE_CHECKING, Iterator

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..core import codes
from ..core.errors import GroundrulesError, refusal
from .settings import ServerSettings

if TYPE_CHECKING:
    from .mcp_http import Served

log = logging.getLogger("groundrules.http")
LAST_ANSWERS_S = 1.0              # past the grace period: how long committed calls have to be answered


class TimedProtocol(H11Protocol):
    """h11 with a deadline on each request head."""

    header_timeout_s = ServerSettings.header_timeout_s

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_deadline: asyncio.TimerHandle | None = None
        self._arm()

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not before and self.cycle is not None:     # a whole request head arrived
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._head_deadline = self.loop.call_later(self.header_timeout_s, self._head_too_slow)

    def _disarm(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_too_slow(self) -> None:
        self._head_deadline = None
        if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
            self.transport.close()


def settle_heap() -> None:
    """What the server holds for good (the rulebook, compiled checks, modules) put out of the
    collector's sight: a full collection walked all of it, about 70 ms with every thread stopped,
    and a flood of allocations set one off often enough to be the other callers' p99."""
    gc.unfreeze()                         # a rulebook swapped out may be collected
    gc.collect()
    gc.freeze()


class DrainingServer(uvicorn.Server):
    """uvicorn, stopping as the module docstring says."""

    def __init__(self, config: uvicorn.Config, served: "Served", settings: ServerSettings):
        super().__init__(config)
        self.served, self.settings = served, settings

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """SIGTERM and SIGINT drain (uvicorn's own version restores the default handlers afterwards
        and raises the signal again, ending the process with status -15)."""
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, self.handle_exit)
        yield

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit:
            self.force_exit = True            # a second signal, whichever: stop waiting
        self.should_exit = True
        self.served.guard.draining = True
        self.served.sessions.draining = True

    async def startup(self, sockets: list | None = None) -> None:
        await super().startup(sockets)
        settle_heap()

    async def shutdown(self, sockets: list | None = None) -> None:
        self.served.guard.draining = self.served.sessions.draining = True
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()             # idle keep-alive connections close now
        deadline = time.monotonic() + self.settings.grace_s
        while self.served.busy and not self.force_exit and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        if self.served.busy:
            log.warning("stopping with %d call(s) running: they are abandoned and write nothing",
                        self.served.dispatcher.running)
            self.served.dispatcher.abandon_all()
            await asyncio.get_running_loop().run_in_executor(None, self.served.dispatcher.wait_idle, LAST_ANSWERS_S)
            answered = time.monotonic() + LAST_ANSWERS_S
            while self.served.guard.posts and time.monotonic() < answered:
                await asyncio.sleep(0.02)
        await self.served.sessions.close_all()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        for task in self.server_state.tasks:
            task.cancel()
        await asyncio.sleep(0)
        await self.lifespan.shutdown()


def server(served: "Served", *, host: str, port: int, settings: ServerSettings) -> DrainingServer:
    """The uvicorn server for `served` (serve it with `.run()`, or `.serve(sockets)` in a loop)."""
    protocol = type("TimedProtocol", (TimedProtocol,), {"header_timeout_s": settings.header_timeout_s})
    config = uvicorn.Config(served, host=host, port=port, http=protocol, log_level="warning",
                            timeout_keep_alive=int(max(1, settings.keep_alive_s)),
                            limit_concurrency=settings.max_connections, lifespan="on")
    return DrainingServer(config, served, settings)


def listening(host: str, port: int) -> socket.socket:
    """A socket bound to host:port and listening, or a GroundrulesError saying why not (a busy port,
    an address this machine does not have): bound before the server says it is serving, so a port
    in use is an error, never a "serving" line followed by uvicorn's exit."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.create_server((host, port), family=family, backlog=2048)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise refusal(codes.USAGE, "usage.http_busy", host=host, port=port, reason=reason,
                      hint="usage.http_busy_hint") from None
    sock.set_inheritable(True)
    return sock


def run(served: "Served", *, host: str, port: int, settings: ServerSettings,
        sock: socket.socket | None = None) -> None:
    """Serve `served` on host:port (on `sock`, bound already, when given) until a signal drains it.
    Once drained, later signals are ignored: the process only closes its ledgers and exits 0
    (Python restores the default handlers while it finalizes, and a signal then would end it with
    status -15)."""
    server(served, host=host, port=port, settings=settings).run(sockets=[sock] if sock is not None else None)
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)
