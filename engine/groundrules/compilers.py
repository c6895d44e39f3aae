"""Table kind -> the function compiling it: behaviour as data, one dispatch table.

Each entry imports its part's compiler inside its body, so a process compiles (and imports) only
the kinds of the tables it uses: `groundrules explain` never imports the finding ledger, the fold
or the verifier. The import graph stays visible to readers and to tests/engine/test_imports.py.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .tables import CompileContext


def decision_table(data: dict, ctx: CompileContext) -> Any:
    from .decide import compile_table
    return compile_table(data, ctx)


def transition_table(data: dict, ctx: CompileContext) -> Any:
    from .findings.transitions import compile_transition_table
    return compile_transition_table(data, ctx)


def finding_vocabulary(data: dict, ctx: CompileContext) -> Any:
    from .findings.vocabulary import compile_vocabulary
    return compile_vocabulary(data, ctx)


def lock_patterns(data: dict, ctx: CompileContext) -> Any:
    from .locks.compile import compile_lock_patterns
    return compile_lock_patterns(data, ctx)


def extension_schema(data: dict, ctx: CompileContext) -> Any:
    from .verification.instances import compile_instance
    return compile_instance(data, ctx)


def verify_issue_catalogue(data: dict, ctx: CompileContext) -> Any:
    from .verification.catalogue import compile_catalogue
    return compile_catalogue(data, ctx)


def prohibition_phrases(data: dict, ctx: CompileContext) -> Any:
    from .verification.phrases import compile_phrases
    return compile_phrases(data, ctx)


def intent_heuristics(data: dict, ctx: CompileContext) -> Any:
    from .verification.heuristics import compile_heuristics
    return compile_heuristics(data, ctx)


def event_catalogue(data: dict, ctx: CompileContext) -> Any:
    from .evidence.catalogue import compile_catalogue
    return compile_catalogue(data, ctx)


def merge_policy(data: dict, ctx: CompileContext) -> Any:
    from .evidence.policy import compile_policy
    return compile_policy(data, ctx)


def refusal_catalogue(data: dict, ctx: CompileContext) -> Any:
    from .evidence.refusals import compile_refusals
    return compile_refusals(data, ctx)


def role_table(data: dict, ctx: CompileContext) -> Any:
    from .access import compile_role_table
    return compile_role_table(data, ctx)


def rule_targets(data: dict, ctx: CompileContext) -> Any:
    from .findings.rule_targets import compile_rule_targets
    return compile_rule_targets(data, ctx)


def limits(data: dict, ctx: CompileContext) -> Any:
    from .limits import compile_limits
    return compile_limits(data, ctx)


def shape_map(data: dict, ctx: CompileContext) -> Any:
    from .evidence.shapes import compile_shapes
    return compile_shapes(data, ctx)


def claim_map(data: dict, ctx: CompileContext) -> Any:
    from .claim_map import compile_claim_map
    return compile_claim_map(data, ctx)


def acceptance(data: dict, ctx: CompileContext) -> Any:
    from .acceptance import compile_acceptance
    return compile_acceptance(data, ctx)


def decision_masking(data: dict, ctx: CompileContext) -> Any:
    from .decisions.masking import compile_masking
    return compile_masking(data, ctx)


COMPILERS: dict[str, Callable[[dict, CompileContext], Any]] = {
    "decision_table": decision_table,
    "transition_table": transition_table,
    "finding_vocabulary": finding_vocabulary,
    "lock_patterns": lock_patterns,
    "extension_schema": extension_schema,
    "verify_issue_catalogue": verify_issue_catalogue,
    "prohibition_phrases": prohibition_phrases,
    "intent_heuristics": intent_heuristics,
    "event_catalogue": event_catalogue,
    "merge_policy": merge_policy,
    "refusal_catalogue": refusal_catalogue,
    "role_table": role_table,
    "rule_targets": rule_targets,
    "limits": limits,
    "shape_map": shape_map,
    "acceptance": acceptance,
    "claim_map": claim_map,
    "decision_masking": decision_masking,
}
