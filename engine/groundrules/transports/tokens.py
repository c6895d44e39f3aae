"""The tokens file of the shared HTTP server: who may call, as which role, in which projects.

The file holds the sha256 of each bearer token, never the token, so reading it (or a backup of it)
grants nothing. It is checked strictly when loaded, because hosts script it and a typo must not
silently grant or drop access: unknown keys, an unknown role, a digest that is not 64 hex digits,
a repeated digest or a principal listed twice with different grants each fail the whole load with
one line naming file:line:col. A request's token is looked up by its digest.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ..api import CURRENT_PROJECT, Authentication, Caller
from ..core import codes
from ..core.errors import GroundrulesError, echo
from ..core.yamlparse import parse
from ..core.yamlsrc import Source, YamlProblem

TOKEN = Authentication("token")     # how a caller of the tokens file proved who it is

DIGEST = re.compile(r"^[0-9a-f]{64}$")
ENTRY_KEYS = ("sha256", "principal", "role", "projects")
PROJECT_MAX = 200         # the project argument's maxLength (finding-ledger.v1.schema.json)


def token_digest(token: str) -> str:
    """What the tokens file holds for a token: `printf %s "$TOKEN" | sha256sum`."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Grants:
    """The callers of one tokens file, by the digest of their token."""

    file: str
    by_digest: dict

    def caller(self, token: str) -> Caller | None:
        return self.by_digest.get(token_digest(token))


def load_grants(path: str | Path, roles: set | frozenset | dict) -> Grants:
    """Read and check a tokens file; a GroundrulesError TOKENS_INVALID naming file:line:col otherwise."""
    label = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _invalid(label, 1, 1, "no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _invalid(label, 1, 1, f"cannot read ({getattr(exc, 'strerror', None) or type(exc).__name__})") from None
    try:
        source = parse(text, label)
    except YamlProblem as exc:
        raise _invalid(label, exc.line, exc.column, exc.message) from None
    return Grants(label, _callers(source, set(roles)))


def _callers(src: Source, roles: set) -> dict:
    def fail(path: tuple, message: str) -> GroundrulesError:
        line, col = src.where(path)
        return _invalid(src.file, line, col, message)

    data = src.data
    if not isinstance(data, dict) or set(data) != {"tokens"}:
        raise fail((), "expected one top-level key 'tokens' (a list of {sha256, principal, role, projects})")
    entries = data["tokens"]
    if not isinstance(entries, list):
        raise fail(("tokens",), "'tokens' must be a list")
    callers: dict = {}
    principals: dict = {}
    for n, entry in enumerate(entries):
        at = ("tokens", n)
        if not isinstance(entry, dict):
            raise fail(at, "each token is a mapping with keys " + ", ".join(ENTRY_KEYS))
        for key in entry:
            if key not in ENTRY_KEYS:
                raise fail(at + (key,), f"unknown key '{echo(key)}' (allowed: {', '.join(ENTRY_KEYS)})")
        for key in ENTRY_KEYS:
            if key not in entry:
                raise fail(at, f"missing key '{key}'")
        digest, principal, role, projects = (entry[k] for k in ENTRY_KEYS)
        if not isinstance(digest, str) or not DIGEST.match(digest):
            raise fail(at + ("sha256",), "sha256 must be 64 lowercase hex digits (printf %s \"$TOKEN\" | sha256sum)")
        if digest in callers:
            raise fail(at + ("sha256",), "this digest is listed twice (one token, one caller)")
        if not isinstance(principal, str) or not principal.strip():
            raise fail(at + ("principal",), "principal must be a non-empty string")
        if role not in roles:
            raise fail(at + ("role",), f"unknown role '{echo(role)}' (roles: {', '.join(sorted(roles))})")
        if not isinstance(projects, list) or not projects:
            raise fail(at + ("projects",), "projects must be a non-empty list of project names")
        for i, project in enumerate(projects):
            if not isinstance(project, str) or not 0 < len(project) <= PROJECT_MAX or project == CURRENT_PROJECT:
                raise fail(at + ("projects", i), f"a project is a name of 1 to {PROJECT_MAX} characters, "
                                                 f"not '{CURRENT_PROJECT}'")
        if len(set(projects)) != len(projects):
            raise fail(at + ("projects",), "a project is listed twice")
        caller = Caller(principal, role, tuple(projects), TOKEN)
        if principals.get(principal, caller) != caller:
            raise fail(at + ("principal",), f"principal '{echo(principal)}' is listed with other grants above "
                                            "(a principal has one role and one project list)")
        principals[principal] = caller
        callers[digest] = caller
    return callers



def _invalid(file: str, line: int, col: int, message: str) -> GroundrulesError:
    return GroundrulesError(codes.TOKENS_INVALID, f"{file}:{line}:{col}: {message}")
