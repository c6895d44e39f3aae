"""Table kind -> the function compiling it: behaviour as data, one dispatch table.

The engine names each kind's compiler by its module and function and imports it on first use: a
process compiles (and imports) only the kinds of the tables it uses (`groundrules explain` never
imports the finding ledger, the fold or the verifier), and the engine imports no part above it.
tests/engine/test_imports.py checks that every name resolves and that imports point down the floors.
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .tables import CompileContext


class Named:
    """A compiler known by `module:function`, imported when first called. The module is named
    relative to this package, as every import in the engine is, so a copy of the engine under
    another name (tests/perf's A/B benchmarks) compiles with its own parts."""

    def __init__(self, path: str):
        self.path = path

    def resolve(self) -> Any:
        module, _, name = self.path.partition(":")
        return getattr(import_module(module, __package__), name)

    def __call__(self, data: dict, ctx: CompileContext) -> Any:
        return self.resolve()(data, ctx)


COMPILERS: dict[str, Named] = {
    "decision_table": Named(".decide:compile_table"),
    "transition_table": Named("..findings.transitions:compile_transition_table"),
    "finding_vocabulary": Named("..findings.vocabulary:compile_vocabulary"),
    "lock_patterns": Named("..locks.compile:compile_lock_patterns"),
    "extension_schema": Named("..verification.instances:compile_instance"),
    "verify_issue_catalogue": Named("..verification.catalogue:compile_catalogue"),
    "prohibition_phrases": Named("..verification.phrases:compile_phrases"),
    "intent_heuristics": Named("..verification.heuristics:compile_heuristics"),
    "value_derivations": Named("..verification.derivations:compile_derivations"),
    "event_catalogue": Named("..evidence.catalogue:compile_catalogue"),
    "merge_policy": Named("..evidence.policy:compile_policy"),
    "refusal_catalogue": Named("..evidence.refusals:compile_refusals"),
    "role_table": Named("..access:compile_role_table"),
    "toolsets": Named("..toolsets:compile_toolsets"),
    "rule_targets": Named("..findings.rule_targets:compile_rule_targets"),
    "finding_provenance": Named("..findings.provenance:compile_finding_provenance"),
    "limits": Named(".limits:compile_limits"),
    "shape_map": Named("..evidence.shapes:compile_shapes"),
    "acceptance": Named("..analyst.acceptance:compile_acceptance"),
    "claim_map": Named("..claim_map:compile_claim_map"),
    "decision_masking": Named("..decision_log.masking:compile_masking"),
    "provenance_table": Named("..provenance.table:compile_provenance"),
    "message_catalogue": Named(".messages:compile_catalogue"),
}
