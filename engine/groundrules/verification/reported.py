"""Issues the candidate reports itself (extraction.issues): only codes the catalogue marks
`reported_by: model`, with their catalogue category, about /data or a selected field."""
from __future__ import annotations

from .catalogue import Catalogue
from .observations import Observation, Reported
from .pointers import decode, encode, field_of


def reported_observations(catalogue: Catalogue, selected: tuple,
                      extraction: dict) -> tuple[list[Reported], list[Observation]]:
    kept: list[Reported] = []
    out: list[Observation] = []
    for i, issue in enumerate(extraction["issues"]):
        code, path = issue["code"], issue["path"]
        at = encode("extraction", "issues", i)
        spec = catalogue.reportable(code)
        if spec is None:
            out.append(Observation("reported_code_unknown", at + "/code", {"code": code}))
        elif issue["category"] != spec.category:
            out.append(Observation("reported_category_mismatch", at + "/category",
                               {"code": code, "category": issue["category"], "expected": spec.category}))
        elif decode(path) != ["data"] and field_of(path, selected) is None:
            out.append(Observation("reported_path_invalid", at + "/path", {"code": code, "path": path}))
        else:
            kept.append(Reported(code, path, issue["message"]))
    return kept, out
