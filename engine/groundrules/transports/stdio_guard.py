"""The stdio transport, guarded: every line a client sends is answered, garbage included.

The SDK's stdio transport logs a line it cannot parse and drops it, so a host waits forever; and
it decodes with errors="replace", so invalid UTF-8 is silently turned into U+FFFD and stored.
This transport reads raw lines itself and hands the server only messages that are valid JSON-RPC;
every other line gets the JSON-RPC 2.0 error it calls for: -32700 (not UTF-8, not JSON, a lone
surrogate, a raw control character, too long) or -32600 (an empty line, a batch, not an object,
nesting or a number beyond the limits, a bad id, not a JSON-RPC message). The limits are the
`limits` table's (rules/limits.yaml), so an operator tunes them without touching Python.

While serving, fd 1 points at stderr and fd 0 at the null device, so nothing a handler prints
can tear a frame; both are restored on exit.
"""
from __future__ import annotations

import json
import os
import sys
import threading
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, BinaryIO, Callable

import anyio
import anyio.abc
import anyio.lowlevel
import mcp_types as types
from mcp.shared.message import SessionMessage

from ..core import json_bounds
from ..core.canonical import encodable
from .mcp_sdk import create_context_streams

PARSE_ERROR, INVALID_REQUEST = -32700, -32600


@dataclass(frozen=True)
class WireLimits:
    message_bytes: int = 4 * 1024 * 1024
    depth: int = 64
    int_digits: int = 100
    id_chars: int = 200
    # the server's message catalogue (core/messages): a refused line's error is worded by it
    messages: Any = field(default=None, compare=False)


class Refused(Exception):
    """A line refused: its JSON-RPC error code and the catalogue message (`wire.…`) that words it,
    said in the reader's language (`said`)."""

    def __init__(self, code: int, name: str, message_id: Any = None, **params: Any):
        super().__init__(name)
        self.code, self.name, self.params, self.message_id = code, name, params, message_id

    def with_id(self, message_id: Any) -> "Refused":
        return Refused(self.code, self.name, message_id, **self.params)

    def said(self, catalogue: Any) -> str:
        """The error's message in the language `catalogue` speaks (its name without one)."""
        return catalogue.message(self.name, **self.params) if catalogue is not None else self.name


def _depth(value: Any, limit: int) -> None:
    """Refuse containers nested deeper than `limit`, a lone surrogate and a number JSON cannot hold
    (iteratively, so no recursion to exhaust; a plain walk, no tuple per value: 10,000 objects of a
    caller's are read in milliseconds)."""
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, level = pop()
        if node.__class__ is dict:
            for key in node:
                if not key.isascii() and not encodable(key):
                    raise Refused(PARSE_ERROR, "wire.surrogate")
            children: Any = node.values()
        elif node.__class__ is list:
            children = node
        else:
            _leaf(node)
            continue
        if level > limit:
            raise Refused(INVALID_REQUEST, "wire.nested", limit=limit)
        for child in children:
            kind = child.__class__
            if kind is dict or kind is list:
                push((child, level + 1))
            elif kind is str or kind is float:
                _leaf(child)


def _leaf(value: Any) -> None:
    if value.__class__ is str:
        if not value.isascii() and not encodable(value):
            raise Refused(PARSE_ERROR, "wire.surrogate")
    elif value.__class__ is float and (value != value or value in (float("inf"), float("-inf"))):
        raise Refused(PARSE_ERROR, "wire.not_finite")


def parse(line: bytes, limits: WireLimits) -> Any:
    """The JSON-RPC message object a line holds, or Refused with the error to answer."""
    if len(line) > limits.message_bytes:
        raise Refused(PARSE_ERROR, "wire.too_large", cap=limits.message_bytes)
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise Refused(PARSE_ERROR, "wire.not_utf8") from None
    if not text.strip():
        raise Refused(INVALID_REQUEST, "wire.empty")

    def bounded_int(digits: str) -> int:
        if len(digits.lstrip("-")) > limits.int_digits:
            raise Refused(INVALID_REQUEST, "wire.digits", digits=limits.int_digits)
        return int(digits)

    def no_constant(name: str) -> Any:
        raise Refused(PARSE_ERROR, "wire.constant", value=name)

    # a big text its bytes prove within the limits is parsed without a hook per integer and not walked
    proven = len(line) > json_bounds.SMALL and json_bounds.within(line, limits.depth, limits.int_digits)
    try:
        value = json.loads(text, parse_constant=no_constant) if proven else \
            json.loads(text, parse_int=bounded_int, parse_constant=no_constant)
    except Refused:
        raise
    except RecursionError:
        raise Refused(INVALID_REQUEST, "wire.nested", limit=limits.depth) from None
    except ValueError:
        raise Refused(PARSE_ERROR, "wire.not_json") from None
    if isinstance(value, list):
        raise Refused(INVALID_REQUEST, "wire.batch")
    if not isinstance(value, dict):
        raise Refused(INVALID_REQUEST, "wire.not_object")
    message_id = _good_id(value.get("id"), limits)
    try:
        if not proven:
            _depth(value, limits.depth)
    except Refused as exc:
        raise exc.with_id(message_id) from None
    if "id" in value and message_id is None:
        raise Refused(INVALID_REQUEST, "wire.id")
    return value, message_id


def _good_id(value: Any, limits: WireLimits) -> Any:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and -2**53 < value < 2**53:
        return value
    if isinstance(value, str) and len(value) <= limits.id_chars:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return None
        return value
    return None


def message(line: bytes, limits: WireLimits) -> SessionMessage:
    """The SessionMessage a line holds, or Refused."""
    value, message_id = parse(line, limits)
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(value, by_name=False))
    except Exception:  # noqa: BLE001 - pydantic's ValidationError and anything else it may raise
        raise Refused(INVALID_REQUEST, "wire.not_jsonrpc", message_id) from None


def error(refused: Refused, catalogue: Any = None) -> SessionMessage:
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=refused.message_id,
                                             error=types.ErrorData(code=refused.code, message=refused.said(catalogue))))


def _read_line(source: BinaryIO, cap: int) -> bytes | None:
    """One line (without its newline) of at most cap+1 bytes, the rest of a longer line skipped;
    None at end of input."""
    line = source.readline(cap + 1)
    if not line:
        return None
    if line.endswith(b"\n"):
        return line[:-1].rstrip(b"\r")
    if len(line) > cap:
        while True:                  # drain the rest of an oversized line without keeping it
            rest = source.readline(1 << 16)
            if not rest or rest.endswith(b"\n"):
                break
    return line


@asynccontextmanager
async def guarded_stdio(limits: WireLimits, *, answer: Callable[[dict], Any] | None = None,
                        stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> AsyncIterator[tuple]:
    """(read_stream, write_stream) for the lowlevel server, over the process's stdin/stdout (or
    the binary streams given). `answer(request)` may return the result of a request the server
    itself would refuse with a bare error (a tool call whose arguments are not an object), or None."""
    restore: list = []
    if stdin is None:
        stdin = os.fdopen(os.dup(0), "rb", buffering=1 << 16)
        null = os.open(os.devnull, os.O_RDONLY)
        saved_in = os.dup(0)
        os.dup2(null, 0)
        os.close(null)
        restore.append((saved_in, 0))
    if stdout is None:
        sys.stdout.flush()
        stdout = os.fdopen(os.dup(1), "wb")
        saved_out = os.dup(1)
        os.dup2(2, 1)
        restore.append((saved_out, 1))

    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)

    async def send(frame: SessionMessage) -> None:
        data = frame.message.model_dump_json(by_alias=True, exclude_unset=True)
        await anyio.to_thread.run_sync(_write, stdout, data.encode("utf-8") + b"\n")

    async def reader() -> None:
        lines = _daemon_lines(stdin, limits.message_bytes)
        async with read_writer, lines:
            async for line in lines:
                try:
                    frame = message(line, limits)
                    result = answer(frame.message.model_dump(by_alias=True, exclude_unset=True)) if answer else None
                    if result is not None:
                        assert isinstance(frame.message, types.JSONRPCRequest), "answer() answers requests only"
                        frame = SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=frame.message.id,
                                                                     result=result))
                        await write_stream.send(frame)
                        continue
                except Refused as refused:
                    try:
                        await write_stream.send(error(refused, limits.messages))
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return
                    continue
                await read_writer.send(frame)

    async def writer() -> None:
        async with write_reader:
            async for frame in write_reader:
                await send(frame)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            yield read_stream, write_stream
            tg.cancel_scope.cancel()
    finally:
        for saved, fd in restore:
            os.dup2(saved, fd)
            os.close(saved)


def _daemon_lines(source: BinaryIO, cap: int) -> "anyio.abc.ObjectReceiveStream[bytes]":
    """The lines of `source`, read by a daemon thread: a read blocked on an idle stdin must not keep
    a stopping server (SIGTERM) from exiting, as a worker thread of anyio's would."""
    send, receive = anyio.create_memory_object_stream[bytes](16)
    token = anyio.lowlevel.current_token()

    def read_all() -> None:
        try:
            while (line := _read_line(source, cap)) is not None:
                anyio.from_thread.run(send.send, line, token=token)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, RuntimeError, OSError, ValueError):
            return                              # the server stopped listening, or stdin closed under us
        try:
            anyio.from_thread.run_sync(send.close, token=token)
        except RuntimeError:
            return
    threading.Thread(target=read_all, name="groundrules-stdin", daemon=True).start()
    return receive


def _write(out: BinaryIO, data: bytes) -> None:
    out.write(data)
    out.flush()
