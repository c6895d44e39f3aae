"""The HTTP transport held to the stdio rules, before the SDK reads a byte.

Every POST to /mcp is read whole, within the message size and the body timeout, and checked as
stdio checks a line (stdio_guard): JSON, the `limits` table's caps on nesting, integers and ids,
a JSON-RPC 2.0 message (a batch, a missing method or an id that is not a string or an integer is
-32600, answered, never a silent 202). Then what only a server with many callers needs:
- a request whose id is already in flight on its session is refused at once (-32600); the SDK
  would route both answers to one stream, leaving one call unanswered and SIGTERM waiting for it;
- a tools/call whose arguments are not an object gets the registry's envelope, as over stdio;
- an `initialize` from a principal that holds its share of sessions is told so (429);
- while the server drains, nothing new is taken (503);
- once its body is read, a request is served in its principal's turn (turns.py), so a flood of
  requests costs the others no more than one request's share of the interpreter.
"""
from __future__ import annotations

import json
from typing import Any, Callable

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..api import Caller
from ..core.errors import GroundrulesError
from .dispatch import Dispatcher
from .http_ops import REQUEST_ID, request_id
from .http_sessions import FairSessionManager, principal_of
from .mcp_tools import accepted, non_object_arguments
from .settings import ServerSettings
from .stdio_guard import INVALID_REQUEST, Refused, WireLimits, parse
from .turns import CURRENT, Turn, Turns

SESSION_HEADER = b"mcp-session-id"
OFF_LOOP_BYTES = 16 * 1024             # bodies larger than this are parsed in a worker thread
SERVER_ERROR = -32000                  # JSON-RPC's range for errors a server defines


class _Disconnected(Exception):
    pass


class Guard:
    def __init__(self, app: ASGIApp, *, dispatcher: Dispatcher, limits: WireLimits, settings: ServerSettings,
                 sessions: FairSessionManager, caller: Callable[[], Caller]):
        self.app, self.dispatcher, self.limits, self.settings = app, dispatcher, limits, settings
        self.sessions, self.caller = sessions, caller
        self.draining = False
        self._parsers = anyio.CapacityLimiter(2)
        self._in_flight: set[tuple[str, Any]] = set()
        self.turns = Turns(settings.turns, settings.turn_limit_s)
        self.posts = 0                  # POSTs being served (the drain waits for them)

    def _catalogue(self, scope: Scope) -> Any:
        """The message catalogue in the request's language (its Accept-Language's first the
        catalogue offers, else the server's)."""
        service = self.dispatcher.service
        lang = accepted((_header(scope, b"accept-language") or ""), service.messages.languages)
        try:
            return service.speaking(lang).messages
        except GroundrulesError:
            return service.messages

    def _say(self, scope: Scope, name: str, **params: Any) -> str:
        return self._catalogue(scope).message(name, **params)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = request_id(_header(scope, b"x-request-id"))
        REQUEST_ID.set(rid)
        send = _with_header(send, b"x-request-id", rid.encode())
        if self.draining:
            await _error(send, 503, None, SERVER_ERROR, self._say(scope, "wire.shutting_down"), close=True)
            return
        if scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        self.posts += 1
        try:
            await self._post(scope, receive, send)
        finally:
            self.posts -= 1

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        cap = self.limits.message_bytes
        if _content_length(scope) > cap:
            await _error(send, 413, None, INVALID_REQUEST, self._say(scope, "wire.body_too_large", cap=cap), close=True)
            return
        try:
            with anyio.fail_after(self.settings.body_timeout_s):
                body = await _body(receive, cap)
        except TimeoutError:
            await _error(send, 408, None, INVALID_REQUEST, self._say(scope, "wire.body_late"), close=True)
            return
        except OverflowError:
            await _error(send, 413, None, INVALID_REQUEST, self._say(scope, "wire.body_too_large", cap=cap), close=True)
            return
        except _Disconnected:
            return
        turn = await self.turns.take(principal_of(scope))   # the body is whole: serving it costs from here on
        CURRENT.set(turn)
        try:
            await self._served(scope, receive, send, body, turn)
        finally:
            self.turns.done(turn)

    async def _served(self, scope: Scope, receive: Receive, send: Send, body: bytes, turn: Turn) -> None:
        try:
            if len(body) > OFF_LOOP_BYTES:            # a large body is parsed beside the loop, not on it
                value, message_id = await anyio.to_thread.run_sync(parse, body, self.limits, limiter=self._parsers)
                await turn.checkpoint()
            else:
                value, message_id = parse(body, self.limits)
        except Refused as refused:
            await _error(send, 400, refused.message_id, refused.code, refused.said(self._catalogue(scope)))
            return
        if not _json_rpc(value):
            await _error(send, 400, message_id, INVALID_REQUEST, self._say(scope, "wire.not_jsonrpc"))
            return
        if "method" not in value or "id" not in value:           # a notification or a client's answer
            await self.app(scope, _replay(body, receive), send)
            return
        session = _header(scope, SESSION_HEADER)
        if session is not None and self.sessions.owner_of(session) != principal_of(scope):
            await self.app(scope, _replay(body, receive), send)   # the SDK answers: session not found
            return
        if session is None and value["method"] == "initialize" and \
                self.sessions.held_by(principal_of(scope)) >= self.sessions.per_principal:
            await _error(send, 429, message_id, SERVER_ERROR,
                         self._say(scope, "wire.sessions_full", sessions=self.sessions.per_principal))
            return
        answer = non_object_arguments(self.dispatcher.service, value, self.caller())
        if answer is not None:
            await _respond(send, 200, {"jsonrpc": "2.0", "id": message_id, "result": answer})
            return
        key = (session, message_id)
        if session is not None and key in self._in_flight:
            await _error(send, 400, message_id, INVALID_REQUEST, self._say(scope, "wire.in_flight"))
            return
        if session is not None:
            self._in_flight.add((session, message_id))
        try:
            await self.app(scope, _replay(body, receive), send)
        finally:
            self._in_flight.discard(key)


def _json_rpc(value: dict) -> bool:
    """The shape of a JSON-RPC 2.0 request, notification, answer or error (ids were checked by
    parse): what the SDK's own model accepts, checked without building it."""
    if value.get("jsonrpc") != "2.0":
        return False
    if "method" in value:
        return isinstance(value["method"], str) and isinstance(value.get("params", {}), dict) and \
            not ({"result", "error"} & value.keys())
    if "id" not in value or ("result" in value) == ("error" in value):
        return False
    error = value.get("error", {"code": 0, "message": ""})
    return isinstance(error, dict) and isinstance(error.get("code"), int) and isinstance(error.get("message"), str)


async def _body(receive: Receive, cap: int) -> bytes:
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > cap:
            raise OverflowError()
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _with_header(send: Send, name: bytes, value: bytes) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = dict(message, headers=[*message.get("headers", []), (name, value)])
        await send(message)
    return sending


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body already read, then whatever the connection says next (a disconnect)."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def again() -> Message:
        return pending.pop() if pending else await receive()
    return again


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


def _content_length(scope: Scope) -> int:
    value = _header(scope, b"content-length")
    return int(value) if value is not None and value.isdigit() else 0


async def _error(send: Send, status: int, message_id: Any, code: int, message: str, *, close: bool = False) -> None:
    await _respond(send, status, {"jsonrpc": "2.0", "id": message_id, "error": {"code": code, "message": message}},
                   close=close)


async def _respond(send: Send, status: int, body: dict, *, close: bool = False) -> None:
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
