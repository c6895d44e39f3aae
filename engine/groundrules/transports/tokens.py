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
from typing import Any
from dataclasses import dataclass
from pathlib import Path

from ..api import CURRENT_PROJECT, Authentication, Caller
from ..core import codes
from ..core.errors import GroundrulesError, echo, refusal
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
        raise _invalid(label, 1, 1, "tokens.missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _invalid(label, 1, 1, "tokens.unread", reason=getattr(exc, "strerror", None) or type(exc).__name__) from None
    try:
        source = parse(text, label)
    except YamlProblem as exc:
        raise _invalid(label, exc.line, exc.column, "tokens.yaml", problem=exc.message) from None
    return Grants(label, _callers(source, set(roles)))


def _callers(src: Source, roles: set) -> dict:
    def refuse_at(path: tuple, name: str, **params: Any) -> GroundrulesError:
        line, col = src.where(path)
        return _invalid(src.file, line, col, name, **params)

    data = src.data
    if not isinstance(data, dict) or set(data) != {"tokens"}:
        raise refuse_at((), "tokens.top")
    entries = data["tokens"]
    if not isinstance(entries, list):
        raise refuse_at(("tokens",), "tokens.not_list")
    callers: dict = {}
    principals: dict = {}
    for n, entry in enumerate(entries):
        at = ("tokens", n)
        if not isinstance(entry, dict):
            raise refuse_at(at, "tokens.entry", keys=list(ENTRY_KEYS))
        for key in entry:
            if key not in ENTRY_KEYS:
                raise refuse_at(at + (key,), "tokens.key_unknown", key=echo(str(key)), keys=list(ENTRY_KEYS))
        for key in ENTRY_KEYS:
            if key not in entry:
                raise refuse_at(at, "tokens.key_missing", key=key)
        digest, principal, role, projects = (entry[k] for k in ENTRY_KEYS)
        if not isinstance(digest, str) or not DIGEST.match(digest):
            raise refuse_at(at + ("sha256",), "tokens.digest")
        if digest in callers:
            raise refuse_at(at + ("sha256",), "tokens.digest_twice")
        if not isinstance(principal, str) or not principal.strip():
            raise refuse_at(at + ("principal",), "tokens.principal")
        if role not in roles:
            raise refuse_at(at + ("role",), "tokens.role", role=echo(str(role)), roles=sorted(roles))
        if not isinstance(projects, list) or not projects:
            raise refuse_at(at + ("projects",), "tokens.projects")
        for i, project in enumerate(projects):
            if not isinstance(project, str) or not 0 < len(project) <= PROJECT_MAX or project == CURRENT_PROJECT:
                raise refuse_at(at + ("projects", i), "tokens.project", max=PROJECT_MAX, current=CURRENT_PROJECT)
        if len(set(projects)) != len(projects):
            raise refuse_at(at + ("projects",), "tokens.project_twice")
        caller = Caller(principal, role, tuple(projects), TOKEN)
        if principals.get(principal, caller) != caller:
            raise refuse_at(at + ("principal",), "tokens.principal_twice", principal=echo(principal))
        principals[principal] = caller
        callers[digest] = caller
    return callers



def _invalid(file: str, line: int, col: int, name: str, **params: Any) -> GroundrulesError:
    """TOKENS_INVALID at file:line:col, worded by the catalogue's message `name` where it is said."""
    return refusal(codes.TOKENS_INVALID, name, at=f"{file}:{line}:{col}", **params)
