"""`groundrules studio`: the table editor's page and its JSON API, served on loopback only.

The standard library's http.server, one request at a time (one analyst, one set of edited
copies). The page is three static files beside this module (plain HTML, CSS and JavaScript: no
build step, nothing fetched from elsewhere). Every API call is a POST of one JSON object to
/api/<action>, answered with the envelope every tool answers with ({ok, data, warnings, error});
a refusal names what was refused and no path outside the project.
"""
from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, HTTPServer
from importlib import resources
from typing import Any

from .workspace import StudioRefusal, Workspace
from ...core import canonical, codes
from ...core.errors import GroundrulesError

LOOPBACK = "127.0.0.1"
MAX_BODY = 4 << 20          # one request: a pasted input or a cell, never more
ASSETS = {"/": ("studio.html", "text/html; charset=utf-8"),
          "/studio.js": ("studio.js", "text/javascript; charset=utf-8"),
          "/studio.css": ("studio.css", "text/css; charset=utf-8")}


def actions(ws: Workspace) -> dict[str, Any]:
    """API action -> what it does with the request's JSON object."""
    return {
        "files": lambda a: ws.files(),
        "open": lambda a: ws.open(a.get("file")),
        "edit": lambda a: ws.edit(a.get("file"), _path(a.get("path")), _text(a.get("text")), bool(a.get("yaml"))),
        "rows": lambda a: ws.rows(a.get("file"), str(a.get("op")), _path(a.get("section")), _int(a.get("index")),
                                  None if a.get("to") is None else _int(a.get("to"))),
        "revert": lambda a: ws.revert(a.get("file")),
        "save": lambda a: ws.save(a.get("file")),
        "inputs": lambda a: ws.inputs(a.get("file")),
        "simulate": lambda a: ws.simulate(a.get("file"), str(a.get("table")), _given(a)),
    }


def _path(value: Any) -> list:
    if not isinstance(value, list) or not all(isinstance(p, (str, int)) and not isinstance(p, bool) for p in value):
        raise StudioRefusal("a path is a list of keys and indices")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise StudioRefusal("a cell's text is a string")
    return value


def _int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise StudioRefusal("a row index is an integer")
    return value


def _given(a: dict) -> dict:
    for key in ("case", "decision", "input"):
        if key in a:
            return {key: a[key]}
    raise StudioRefusal("simulate takes an input, a case or a decision")


class Handler(BaseHTTPRequestHandler):
    workspace: Workspace           # set on the class the server makes
    server_version = "groundrules-studio"

    def do_GET(self) -> None:
        asset = ASSETS.get(self.path.split("?")[0])
        if self.path == "/favicon.ico":          # no icon, and no 404 in the page's console
            self._send(204, b"", "image/x-icon")
            return
        if asset is None:
            self._send(404, b"not found", "text/plain; charset=utf-8")
            return
        body = resources.files(__package__).joinpath("assets", asset[0]).read_bytes()
        self._send(200, body, asset[1])

    def do_POST(self) -> None:
        name = self.path.split("?")[0].removeprefix("/api/")
        table = actions(self.workspace)
        if not self.path.startswith("/api/") or name not in table:
            self._answer(404, canonical.envelope(ok=False, error={"code": codes.NOT_FOUND, "message": f"no action {name[:40]!r}"}))
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._answer(413, canonical.envelope(ok=False, error={"code": codes.INVALID_ARGUMENT,
                                                                  "message": "the request is too large"}))
            return
        try:
            arguments = json.loads(self.rfile.read(length) or b"{}")
            if not isinstance(arguments, dict):
                raise StudioRefusal("the request is one JSON object")
            data = table[name](arguments)
        except json.JSONDecodeError:
            self._answer(400, canonical.envelope(ok=False, error={"code": codes.INVALID_ARGUMENT,
                                                                  "message": "the request is not JSON"}))
            return
        except GroundrulesError as exc:
            self._answer(400, canonical.envelope(ok=False, error={"code": exc.code, "message": exc.message}))
            return
        self._answer(200, canonical.envelope(ok=True, data=data))

    def _answer(self, status: int, envelope: dict) -> None:
        self._send(status, canonical.dumps(envelope, indent=None).encode("utf-8"), "application/json")

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Security-Policy", "default-src 'self'")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:     # noqa: A002 - the base class's name
        """Quiet: the terminal shows the address, not every request."""


def make_server(workspace: Workspace, port: int = 0) -> HTTPServer:
    """The studio's server bound to 127.0.0.1:`port` (0: a free port); serve_forever() runs it."""
    handler = type("StudioHandler", (Handler,), {"workspace": workspace})
    return HTTPServer((LOOPBACK, port), handler)
