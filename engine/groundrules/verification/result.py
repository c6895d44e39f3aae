"""The report: issues ordered by the catalogue, the error by its precedence, and the seed's
result object (or error with partialResult) built in the seed's key order."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ..core.canonical import detached
from .catalogue import Catalogue, IssueSpec
from .observations import Observation, Reported

if TYPE_CHECKING:
    from ..results import Issue, VerifyError, VerifyReport

RESULT_KEYS = ("input", "normalizedInput", "primaryIntent", "requirements", "intents", "prohibitions")


def report(catalogue: Catalogue, items: Sequence[Observation | Reported], grounding: list[dict],
           intent: dict | None, data: dict | None) -> VerifyReport:
    """`intent`/`data` are None when the candidate's shape could not be trusted."""
    ranked: list[tuple[int, int, IssueSpec, Issue]] = []
    for seq, item in enumerate(items):
        spec, issue = catalogue.issue(item)
        ranked.append((spec.order, seq, spec, issue))
    ranked.sort(key=lambda t: (t[0], t[1]))
    warnings = [issue for _, _, spec, issue in ranked if spec.error is None]
    for err in catalogue.errors:
        mine = [(spec, issue) for _, _, spec, issue in ranked if spec.error == err.code]
        if not mine:
            continue
        error: VerifyError = {"code": err.code, "stage": err.stage or mine[0][0].stage,
                              "message": catalogue.error_message(err.code), "issues": [issue for _, issue in mine]}
        if err.partial_result and intent is not None:
            error["partialResult"] = result_object(intent, {})
        return {"ok": False, "data": None, "error": error,
                "repairable": all(spec.repairable for spec, _ in mine),
                "warnings": warnings, "grounding": grounding}
    assert intent is not None and data is not None, "an untrusted shape is always reported as an error"
    return {"ok": True, "data": result_object(intent, data), "error": None, "repairable": False,
            "warnings": warnings, "grounding": grounding}


def result_object(intent: dict, data: dict) -> dict:
    out = {key: detached(intent[key]) for key in RESULT_KEYS}
    out["data"] = detached(data)
    return out
