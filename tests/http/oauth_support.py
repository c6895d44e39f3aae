"""A real authorization server and a groundrules OAuth resource server, both on loopback.

`Issuer` runs the certified `oidc-provider` (tests/node/oauth_issuer.mjs) as its own Node process:
it publishes its metadata and JWKS and issues JWT access tokens by the client_credentials grant
for whatever resource is asked (RFC 8707). `rotate(keys)` restarts it on the same port with a new
key set, as an issuer rotating its signing key does. `serving(app)` runs an ASGI app with uvicorn
on a free port in a thread of this process; the server's verifier reads a `Clock` the test can
move forward, so expiry and the key-refetch rate limit are tested without waiting.
"""
from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import httpx2
import uvicorn
from joserfc.jwk import RSAKey

from node_tools import NODE_DIR

HOST = "127.0.0.1"
START_S = 120          # a loaded machine may take long to start Node; no timing is asserted
SCOPES = ["groundrules", "groundrules:review", "other"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def signing_key(kid: str) -> dict:
    return RSAKey.generate_key(2048, parameters={"kid": kid, "alg": "RS256", "use": "sig"}).as_dict(private=True)


class Clock:
    """Wall time plus an offset a test moves: what the verifier reads as now."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


class Issuer:
    """One oidc-provider process; `token(client, scope, resource)` asks it for an access token."""

    def __init__(self, node: str, folder: Path, clients: list[dict], keys: list[dict]):
        self.node, self.folder, self.clients = node, folder, clients
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.secrets = {c["client_id"]: c["client_secret"] for c in clients}
        self.proc: subprocess.Popen | None = None
        self.start(keys)

    def start(self, keys: list[dict]) -> None:
        config = self.folder / f"issuer-{self.port}.json"
        config.write_text(json.dumps({"port": self.port, "keys": keys, "clients": self.clients, "scopes": SCOPES}),
                          encoding="utf-8")
        self.proc = subprocess.Popen([self.node, str(NODE_DIR / "oauth_issuer.mjs"), str(config)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + START_S
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("the issuer did not start: " + self.proc.communicate()[1][-2000:])
            try:
                if httpx2.get(f"{self.url}/.well-known/openid-configuration", timeout=5).status_code == 200:
                    return
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the issuer did not answer in time")
            time.sleep(0.1)

    def rotate(self, keys: list[dict]) -> None:
        self.stop()
        self.start(keys)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)

    def token(self, client: str, scope: str, resource: str) -> str:
        response = httpx2.post(f"{self.url}/token", auth=(client, self.secrets[client]), timeout=30,
                               data={"grant_type": "client_credentials", "scope": scope, "resource": resource})
        assert response.status_code == 200, response.text
        return response.json()["access_token"]


@contextmanager
def serving(app) -> Iterator[str]:
    """The base URL (http://127.0.0.1:PORT) of `app` served by uvicorn until the block ends."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app(port), log_level="warning"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + START_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the HTTP server did not start")
        time.sleep(0.02)
    try:
        yield f"http://{HOST}:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
