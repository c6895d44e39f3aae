"""The `claim_map` kind (rules/oauth_claims.yaml): how a verified OAuth access token names its caller.

An organisation's identity provider decides who someone is, their groups and their token's
scopes; this table decides what that means here: which claims name the principal (a template),
which role the token's claims and scopes give (ordered rows in the shared condition grammar over
`claims` and `scopes`, the first that holds wins) and which projects (listed claims, optionally
filtered by a pattern whose group `project` is the name). It also holds what the resource server
asks of every token: the scopes (required and supported), the signature algorithms, the clock
leeway, how key sets are cached, and the error_description of each refusal. Nothing here checks a
signature: the transport does (transports/oauth.py) before it asks this table anything.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator

from .core import cpu_clock
from .core.conditions import compile_condition
from .core.errors import Problem, did_you_mean
from .core.messages import Messages, compile_messages
from .core.tables import location
from .core.templates import Template, compile_template

if TYPE_CHECKING:
    from .core.tables import CompileContext

FACTS = ("claims", "scopes")


@dataclass(frozen=True)
class ProjectSource:
    claim: str
    pattern: Any = None       # compiled regex with a group 'project', or None: every item is a name
    budget_s: float = 0.0     # its time per search (the limits table's patterns.table_budget_ms)

    def names(self, claims: dict) -> list[str]:
        value = claims.get(self.claim)
        items = value.split() if isinstance(value, str) else value if isinstance(value, list) else []
        out = []
        for item in items:
            if not isinstance(item, str):
                continue
            if self.pattern is not None:
                try:
                    hit = cpu_clock.fullmatch(self.pattern, item, self.budget_s)
                except TimeoutError:
                    hit = None
                item = hit.group("project") if hit else ""
            if item:
                out.append(item)
        return out


@dataclass(frozen=True)
class Identity:
    """Who a token's claims name: the principal, its role, and the project names in order (the
    transport keeps those that are project names at all)."""

    principal: str
    role: str
    projects: tuple[str, ...]


@dataclass(frozen=True)
class Refusal:
    """Why a verified token still gets no caller: a key of `messages`, and the HTTP answer it calls for."""

    reason: str
    status: int               # 401 (the token is not usable) or 403 (usable, but not for this)


@dataclass(frozen=True)
class ClaimMap:
    kind: str
    id: str
    file: str
    scope_claims: tuple
    required_scopes: tuple
    supported_scopes: tuple
    algorithms: tuple
    leeway_s: int
    required_claims: tuple
    cache_entries: int        # accepted tokens remembered (0: none)
    max_lifetime_s: int       # the longest exp - iat accepted (0: no cap)
    require_kid: bool         # a token must name its key
    keys: dict                # max_age_s, refetch_min_s, fetch_timeout_s, max_bytes
    principal: Template
    roles: tuple              # ((role, Condition, key path), ...)
    projects: tuple           # (ProjectSource, ...)
    messages: Messages        # reason -> error_description, in every language (core/messages)

    def scopes(self, claims: dict) -> tuple[str, ...]:
        """The token's scopes, from the first scope claim it has (a space-separated string or a list)."""
        for name in self.scope_claims:
            value = claims.get(name)
            if isinstance(value, str):
                return tuple(value.split())
            if isinstance(value, list):
                return tuple(v for v in value if isinstance(v, str))
        return ()

    def identity(self, claims: dict) -> Identity | Refusal:
        """The caller a verified token's claims name, or why there is none."""
        principal = self._principal(claims)
        if principal is None:
            return Refusal("no_principal", 401)
        scopes = self.scopes(claims)
        if not set(self.required_scopes) <= set(scopes):
            return Refusal("missing_scope", 403)
        facts = {"claims": claims, "scopes": list(scopes)}
        role = next((role for role, cond, _ in self.roles if cond.test(facts)), None)
        if role is None:
            return Refusal("no_role", 403)
        projects = list(dict.fromkeys(name for source in self.projects for name in source.names(claims)))
        return Identity(principal, role, tuple(projects))

    def _principal(self, claims: dict) -> str | None:
        for name in self.principal.names:
            value = _at(claims, name)
            if not (isinstance(value, str) and value.strip()) and not (isinstance(value, int)
                                                                     and not isinstance(value, bool)):
                return None
        return self.principal.render(claims)


def _at(value: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def compile_claim_map(data: dict, ctx: CompileContext) -> ClaimMap | None:
    before = len(ctx.faults)
    principal = compile_template(data["principal"], ("principal",), ctx.faults)
    if principal is not None and not principal.names:
        ctx.fault("constant-principal", "the principal names no claim, so every token would be one caller",
                  ("principal",), "name the claim that identifies the caller, e.g. '{sub}' or '{email}'")
    roles = []
    for i, row in enumerate(data["roles"]):
        where = ("roles", i, "when")
        cond = compile_condition(row["when"], where, ctx.faults, budget_s=ctx.table_budget_s)
        if cond is None:
            continue
        for path, at in cond.fields():
            head = path.split(".", 1)[0].removesuffix("[]")
            if head not in FACTS:
                ctx.fault("unknown-fact", f"a role row reads '{head}', which a token does not have", at,
                          did_you_mean(head, FACTS) or "facts: claims.<name>, scopes")
        roles.append((row["role"], cond, ("roles", i, "role")))
    projects = []
    for i, source in enumerate(data["projects"]):
        pattern = None
        if "pattern" in source:
            import regex
            try:
                pattern = regex.compile(source["pattern"])
            except regex.error as exc:
                ctx.fault("bad-regex", f"the pattern does not compile: {exc}", ("projects", i, "pattern"))
                continue
            if "project" not in pattern.groupindex:
                ctx.fault("no-project-group", "the pattern has no group named 'project'", ("projects", i, "pattern"),
                          "name the part that is the project: ^gr-project-(?P<project>[a-z0-9-]+)$")
        projects.append(ProjectSource(source["claim"], pattern, ctx.table_budget_s))
    missing = [s for s in data["scopes"]["required"] if s not in data["scopes"]["supported"]]
    for s in missing:
        ctx.fault("unsupported-required-scope", f"scope '{s}' is required but not listed as supported",
                  ("scopes", "required"), "add it to scopes.supported: clients ask for what the metadata lists")
    messages = compile_messages(data["messages"], ctx.faults)
    for reason, texts in messages.by_name.items():
        if not any(header_safe(t.source) for t in texts.values()):
            ctx.fault("no-ascii-description", f"no language of messages.{reason} is printable ASCII without quote "
                      "or backslash, so the WWW-Authenticate header could carry none (RFC 6750)", ("messages", reason),
                      "keep one language's text in plain ASCII")
    if principal is None or any(f.severity == "error" for f in ctx.faults[before:]):
        return None                   # (no principal only ever comes with a fault)
    tokens = data["tokens"]
    return ClaimMap("claim_map", data["id"], ctx.source.file, tuple(data["scopes"]["claims"]),
                    tuple(data["scopes"]["required"]), tuple(data["scopes"]["supported"]),
                    tuple(tokens["algorithms"]), tokens["leeway_s"], tuple(tokens["required_claims"]),
                    tokens["cache_entries"], tokens["max_lifetime_s"], tokens["require_kid"], dict(data["keys"]), principal, tuple(roles), tuple(projects), messages)


def header_safe(text: str) -> bool:
    """Whether `text` may stand in a WWW-Authenticate error_description (RFC 6750 §3: printable
    ASCII without quote or backslash)."""
    return all(0x20 <= ord(c) < 0x7F and c not in '"\\' for c in text)


def unknown_roles(book) -> Iterator[Problem]:
    """A claim map's row naming a role the role table does not declare (checked by lint and at
    server start: a token must never map to a role no table grants anything)."""
    role_tables = book.of_kind("role_table")
    declared = {role for table in role_tables for role in table.roles}
    for table in book.of_kind("claim_map"):
        source = book.sources[table.id]
        for role, _, where in table.roles:
            if role not in declared:
                line, col, key = location(source, where)
                yield Problem(source.file, line, col, "unknown-role", f"role '{role}' is not declared by a role table",
                              key, did_you_mean(role, declared) or "roles: " + ", ".join(sorted(declared)))

