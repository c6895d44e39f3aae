"""The `finding_vocabulary` kind: what the ledger accepts, its relation kinds, limits and messages.

Everything an analyst may want to change about the ledger's words lives in the table; this module
only checks the table is coherent and answers lookups.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.errors import Fault, did_you_mean
from ..core.messages import Messages, compile_messages

if TYPE_CHECKING:
    from ..core.tables import CompileContext

# Message names the service renders; a table without one of them does not load.
REQUIRED_MESSAGES = (
    "invalid_argument", "unknown_value", "evidence_identity", "evidence_relation", "one_state", "limit_cap",
    "not_found", "evidence_not_found", "evidence_not_linked", "history_needed", "keyword_empty", "proposal_not_found",
    "version_conflict", "proposal_conflict", "idempotency_reused",
    "relation_via", "relation_cycle", "self_link", "target_path", "root_missing",
    "rule_not_applied", "target_target", "target_root", "target_too_large", "target_folder_missing",
    "scope_context_duplicate", "result_unknown", "approver_not_caller",
    "content_hash_mismatch", "reason_required", "context_overlap",
)


@dataclass(frozen=True)
class Vocabulary:
    kind: str
    id: str
    file: str
    claim_kinds: dict
    retrieval_policies: dict
    default_retrieval_policy: str
    evidence_relations: dict
    methods: dict
    finding_relations: dict
    link_targets: dict
    revalidate_triggers: dict
    revalidation_results: dict
    new_finding_relation: str
    acts_on: dict             # the states and relations the tools act on by name
    event_kinds: dict         # tool (or new_finding) -> the event kind it records
    limits: dict
    messages: Messages          # name -> Template, in the bound language

    def message(self, name: str, **params: Any) -> str:
        return self.messages[name].render(params)

    def target_relations(self, target_kind: str) -> dict:
        return self.link_targets[target_kind]["relations"]


def compile_vocabulary(data: dict, ctx: CompileContext) -> Vocabulary | None:
    faults: list[Fault] = ctx.faults
    before = len(faults)
    messages = compile_messages(data["messages"], faults)
    for name in REQUIRED_MESSAGES:
        if name not in data["messages"]:
            ctx.fault("missing-message", f"messages.{name} is required by the ledger", ("messages",),
                      f"add messages: {{{name}: <one sentence>}}")
    if data["default_retrieval_policy"] not in data["retrieval_policies"]:
        ctx.fault("unknown-value", f"default_retrieval_policy '{data['default_retrieval_policy']}' is not "
                  "in retrieval_policies", ("default_retrieval_policy",),
                  did_you_mean(data["default_retrieval_policy"], data["retrieval_policies"]))
    relation = data.get("new_finding_relation", "revalidated_as")
    if relation not in data["finding_relations"]:
        ctx.fault("unknown-value", f"new_finding_relation '{relation}' is not in finding_relations",
                  ("new_finding_relation",), did_you_mean(relation, data["finding_relations"]))
    names = data["acts_on"]
    for key, lists in (("supersede_relation", ("finding_relations",)),
                       ("refute_relation", ("evidence_relations",)), ("support_relation", ("evidence_relations",))):
        known = data[lists[0]]
        if names[key] not in known:
            ctx.fault("unknown-value", f"acts_on.{key} '{names[key]}' is not in {lists[0]}", ("acts_on", key),
                      did_you_mean(names[key], known))
    seen: dict = {}
    for key, kind in data["event_kinds"].items():
        if kind in seen:
            ctx.fault("duplicate-event-kind", f"event_kinds.{key} records '{kind}', as event_kinds.{seen[kind]} "
                      "does: a finding's history could not tell them apart", ("event_kinds", key),
                      "give every write its own event kind")
        seen.setdefault(kind, key)
    limits = data["limits"]
    if limits["query_default"] > limits["query_max"]:
        ctx.fault("bad-value", "limits.query_default is larger than limits.query_max", ("limits", "query_default"))
    if limits["events_default"] > limits["events_max"]:
        ctx.fault("bad-value", "limits.events_default is larger than limits.events_max", ("limits", "events_default"))
    for trigger, spec in data["revalidate_triggers"].items():
        for key in spec["context_keys"]:
            for other, other_spec in data["revalidate_triggers"].items():
                if other < trigger and key in other_spec["context_keys"]:
                    ctx.fault("duplicate-context-key", f"context key '{key}' belongs to both '{other}' and "
                              f"'{trigger}'", ("revalidate_triggers", trigger, "context_keys"),
                              "give every context key to one trigger")
    if any(f.severity == "error" for f in faults[before:]):
        return None
    return Vocabulary(
        "finding_vocabulary", data["id"], ctx.source.file, dict(data["claim_kinds"]),
        dict(data["retrieval_policies"]), data["default_retrieval_policy"], dict(data["evidence_relations"]),
        dict(data["methods"]), dict(data["finding_relations"]), dict(data["link_targets"]),
        dict(data["revalidate_triggers"]), dict(data["revalidation_results"]), relation, dict(names),
        dict(data["event_kinds"]), dict(limits), messages)
