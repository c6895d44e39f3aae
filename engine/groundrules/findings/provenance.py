"""The `finding_provenance` kind (rules/finding_provenance.yaml): which roles may link which evidence
methods and relations to a finding, and which methods groundrules checks itself under the ledger's
root. The names it uses (roles, methods, relations) belong to other tables: the ledger checks them
against those once the rulebook is whole (ledger._check_names), lint's references check the roles."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.errors import Fault
from ..core.messages import Messages, compile_messages
from ..core.templates import Template

if TYPE_CHECKING:
    from ..core.tables import CompileContext


@dataclass(frozen=True)
class Writer:
    role: str
    methods: tuple
    relations: tuple
    where: tuple


@dataclass(frozen=True)
class FindingProvenance:
    kind: str
    id: str
    file: str
    writers: dict             # role -> Writer
    checked_methods: tuple    # source_checks.methods
    messages: Messages          # name -> Template, in the bound language

    def refusal(self, role: str, method: str, relation: str) -> str | None:
        """None when `role` may link evidence of `method` and `relation`; else the sentence refusing it
        (a role the table does not list may link nothing)."""
        writer = self.writers.get(role)
        if writer is None or method not in writer.methods:
            return self._say("method_denied", role=role, method=method, allowed=list(writer.methods) if writer else [])
        if relation not in writer.relations:
            return self._say("relation_denied", role=role, relation=relation, allowed=list(writer.relations))
        return None

    def _say(self, name: str, **params) -> str:
        template: Template = self.messages[name]
        return template.render(params)


def compile_finding_provenance(data: dict, ctx: CompileContext) -> FindingProvenance | None:
    faults: list[Fault] = ctx.faults
    before = len(faults)
    messages = compile_messages(data["messages"], faults)
    writers: dict = {}
    for i, raw in enumerate(data["writers"]):
        if raw["role"] in writers:
            ctx.fault("duplicate-role", f"role '{raw['role']}' is listed twice under writers", ("writers", i, "role"),
                      "keep one entry per role")
            continue
        writers[raw["role"]] = Writer(raw["role"], tuple(raw["methods"]), tuple(raw["relations"]), ("writers", i))
    if any(f.severity == "error" for f in faults[before:]):
        return None
    return FindingProvenance("finding_provenance", data["id"], ctx.source.file, writers,
                             tuple(data["source_checks"]["methods"]), messages)
