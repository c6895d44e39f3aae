"""What the checks can find, by a stable key; the issue catalogue turns keys into codes.

The Python checks never name an issue code or category: they report an Observation with a key from
OBSERVATIONS and its parameters, and `rules/verify_issues.yaml` says which code, category, error and
message each key stands for. The catalogue's compiler refuses a key not listed here and a listed
key without a code, so the two cannot drift apart.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# observation key -> the parameters its message template may use
OBSERVATIONS: dict[str, tuple[str, ...]] = {
    "candidate_shape": ("problem",),
    "candidate_unavailable": ("exception",),
    "intent_input_mismatch": (),
    "intent_id_duplicate": ("id",),
    "target_joined": ("target", "joiner"),
    "actions_merged": ("actions", "count", "intents"),
    "withdrawn_continued": ("action", "phrase", "source"),
    "withdrawn_beyond_asked": ("phrase", "source", "count", "intents"),
    "corrected_kept": ("target", "old", "new"),
    "prohibited_action": ("action", "phrase", "source"),
    "reserved_action": ("action", "phrase", "source"),
    "prohibition_dropped": ("phrase", "kind", "action", "start", "end", "source"),
    "prohibition_unreflected": ("phrase", "kind", "start", "end"),
    "data_key_unknown": ("field",),
    "data_key_unselected": ("field",),
    "data_value_invalid": ("field", "problem"),
    "field_result_missing": ("field",),
    "field_result_unexpected": ("path",),
    "field_result_duplicate": ("path",),
    "field_status_mismatch": ("field", "status"),
    "required_field_missing": ("field", "explanation"),
    "evidence_missing": ("field",),
    "evidence_path_invalid": ("path",),
    "quote_empty": ("sourceId",),
    "source_unknown": ("sourceId",),
    "quote_not_found": ("sourceId", "quote"),
    "exact_value_mismatch": ("quote", "value"),
    "value_not_derived": ("field", "kind", "quote", "value", "derived"),
    "value_quote_unread": ("field", "kind", "quote"),
    "value_unchecked": ("field",),
    "description_check_missing": ("path", "description"),
    "description_check_unexpected": ("path",),
    "description_check_duplicate": ("path",),
    "description_not_applicable": ("path",),
    "description_undetermined": ("explanation",),
    "description_violated": ("explanation",),
    "reported_code_unknown": ("code",),
    "reported_category_mismatch": ("code", "category", "expected"),
    "reported_path_invalid": ("code", "path"),
}

# observations that leave nothing to verify: the catalogue must map them to an error, never a warning
MUST_FAIL = ("candidate_shape", "candidate_unavailable")


@dataclass(frozen=True)
class Observation:
    """One thing a check found at `path` (a JSON Pointer)."""

    key: str
    path: str
    params: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Reported:
    """An issue the candidate itself reported, already checked against the catalogue."""

    code: str
    path: str
    message: str

