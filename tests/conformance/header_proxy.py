"""A loopback proxy that adds one header: what lets the conformance suite reach a server that
demands a bearer token (the suite, 0.1.16, cannot send one).

Every byte goes through unchanged (Host and Origin included, so the server's DNS-rebinding check
still sees what the suite sent) except that each request head without an Authorization header
gains `Authorization: Bearer <token>`. Requests are framed by Content-Length or chunked encoding
so that every request on a kept-alive connection gets the header; responses, event streams
included, are copied as they come.
"""
from __future__ import annotations

import asyncio
import threading
from contextlib import contextmanager
from typing import Iterator

HOST = "127.0.0.1"


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def _body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> None:
    fields = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        fields[name.strip().lower()] = value.strip()
    if fields.get(b"transfer-encoding", b"").lower() == b"chunked":
        while True:
            size_line = await reader.readuntil(b"\r\n")
            writer.write(size_line)
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                while (trailer := await reader.readuntil(b"\r\n")) != b"\r\n":
                    writer.write(trailer)
                writer.write(b"\r\n")
                return
            writer.write(await reader.readexactly(size + 2))
    elif b"content-length" in fields:
        writer.write(await reader.readexactly(int(fields[b"content-length"])))


def handler(port: int, header: bytes):
    async def handle(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection(HOST, port)
        responses = asyncio.create_task(_copy(upstream_reader, client_writer))
        try:
            while True:
                head = await client_reader.readuntil(b"\r\n\r\n")
                lines = head[:-4].split(b"\r\n")
                if not any(line.lower().startswith(b"authorization:") for line in lines[1:]):
                    lines.insert(1, header)
                head = b"\r\n".join(lines) + b"\r\n\r\n"
                upstream_writer.write(head)
                await _body(client_reader, upstream_writer, head)
                await upstream_writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass
        finally:
            upstream_writer.close()
            await responses
    return handle


@contextmanager
def proxy(port: int, token: str) -> Iterator[int]:
    """The port of a proxy to 127.0.0.1:`port` adding the bearer `token`, until the block ends."""
    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(asyncio.start_server(handler(port, f"Authorization: Bearer {token}".encode()),
                                                          HOST, 0))
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        loop.call_soon_threadsafe(server.close)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
