"""`groundrules tokens add`: a new bearer token for the shared server, printed once, its digest kept.

The tokens file holds only digests, so the token cannot be shown again: it is printed on stdout
once. The entry is appended to the file (created with mode 0600 when missing) and the whole file
is checked as the server checks it before anything is written; a running server picks it up on
SIGHUP.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import sys
import tempfile
from pathlib import Path

from ..core.errors import GroundrulesError, refusal
from .io import reason, usage_error
from .session import rulebook_from

TOKEN_BYTES = 32


def register(sub: argparse._SubParsersAction) -> None:
    t = sub.add_parser("tokens", help="make bearer tokens for the shared server (serve --http)",
                       description="Manage the tokens file of `groundrules serve --http`: it holds the sha256 of "
                                   "each token, never the token.")
    tsub = t.add_subparsers(dest="tokens_command", metavar="ACTION", required=True)
    add = tsub.add_parser("add", help="add a random token for a principal; prints it once",
                          description="Add a random token for PRINCIPAL in ROLE (rules/roles.yaml) with access to "
                                      "the projects listed; the token is printed once on stdout, only its digest "
                                      "is stored. Send SIGHUP to a running server to take it up.")
    add.add_argument("--principal", required=True, help="who calls with it, as the audit trail records it")
    add.add_argument("--role", required=True, help="its role in rules/roles.yaml")
    add.add_argument("--projects", required=True, metavar="A,B", help="the projects it may use, comma-separated "
                                                                      "(the first is what 'current' means)")
    add.add_argument("--file", default="tokens.yaml", metavar="FILE", help="the tokens file (default: %(default)s; "
                                                                           "created when missing)")
    add.set_defaults(func=run_add)


def run_add(args: argparse.Namespace) -> int:
    from ..transports.tokens import load_grants, token_digest
    roles = rulebook_from(args).table("roles").roles
    projects = [p.strip() for p in args.projects.split(",") if p.strip()]
    if not projects:
        raise usage_error("usage.tokens_no_project")
    path = Path(args.file)
    old = _read(path)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    text = (old if old.strip() else "tokens:\n") if old is not None else "tokens:\n"
    entry = _entry(token_digest(token), args.principal, args.role, projects, _indent(text))
    text = text + ("" if text.endswith("\n") else "\n") + entry
    _check(text, path, roles, load_grants)
    _write(path, text)
    sys.stdout.write(token + "\n")
    sys.stderr.write(f"groundrules tokens: added a token for {args.principal} ({args.role}) to {path}; it is shown "
                     "only now. Send SIGHUP to a running server to take it up.\n")
    return 0


def _entry(digest: str, principal: str, role: str, projects: list[str], indent: str) -> str:
    listed = ", ".join(json.dumps(p, ensure_ascii=False) for p in projects)
    inner = indent + "  "
    return (f"{indent}- sha256: {digest}\n{inner}principal: {json.dumps(principal, ensure_ascii=False)}\n"
            f"{inner}role: {json.dumps(role, ensure_ascii=False)}\n{inner}projects: [{listed}]\n")


def _indent(text: str) -> str:
    """The indentation of the file's list items ('  ' for a new file; PyYAML writes none)."""
    found = re.search(r"^([ ]*)- ", text, re.MULTILINE)
    return found.group(1) if found else "  "


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise usage_error("usage.cannot_read", input=str(path), reason=reason(exc)) from None


def _check(text: str, path: Path, roles, load_grants) -> None:
    """The file as it would be written must load as the server loads it (the entry is appended to
    the block-style `tokens:` list a file ends with); else nothing is written."""
    with tempfile.TemporaryDirectory() as folder:
        probe = Path(folder) / path.name
        probe.write_text(text, encoding="utf-8")
        try:
            load_grants(probe, roles)
        except GroundrulesError as exc:           # named at the file's own path, not the probe's
            name, params = exc.words or (None, {})
            at = str(params.get("at", "")).replace(str(probe), str(path))
            raise refusal(exc.code, name, hint="usage.token_not_added", **dict(params, at=at)) from None


def _write(path: Path, text: str) -> None:
    """Whole or not at all: a temporary file beside it, renamed over it; mode 0600."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temp, 0o600)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
