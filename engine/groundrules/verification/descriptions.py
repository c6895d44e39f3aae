"""Description checks (docs/spec/verification.md): a root description applies whenever any field is selected, a
field's description when that field is; each applicable one needs exactly one check.

The verdict is the model's semantic judgement; nothing local stands in for it. `undetermined` and
`violated` are reported as what they are; the catalogue says which error they make.
`not_applicable` is for an optional field the material does not hold (absent from data), and only
there.
"""
from __future__ import annotations

from .observations import Observation
from .instances import ExtensionSchema
from .pointers import decode, encode

VERDICT_OBSERVATIONS = {"undetermined": "description_undetermined", "violated": "description_violated"}
# the verdict for an optional field the material does not hold: its description has nothing to judge
NOT_APPLICABLE = "not_applicable"


def _absent_optional(ext: ExtensionSchema, extraction: dict, tokens: list | None) -> bool:
    """Whether the check's path is an optional field that is absent from data: the one place a
    description may be not_applicable (a required field, or the root, always has something to judge)."""
    if not tokens or len(tokens) != 2 or tokens[0] != "data":
        return False
    field = tokens[1]
    return field not in ext.required and field not in extraction["data"]


def applicable(ext: ExtensionSchema, selected: tuple) -> dict:
    """pointer -> description text, root first, then fields in schema order."""
    out = {}
    if selected and ext.description:
        out[encode("data")] = ext.description
    for field in selected:
        if field in ext.field_descriptions:
            out[encode("data", field)] = ext.field_descriptions[field]
    return out


def description_observations(ext: ExtensionSchema, selected: tuple, extraction: dict) -> list[Observation]:
    wanted = applicable(ext, selected)
    out: list[Observation] = []
    seen: set = set()
    for i, check in enumerate(extraction["descriptionChecks"]):
        tokens = decode(check["path"])
        path = encode(*tokens) if tokens is not None else check["path"]
        at = encode("extraction", "descriptionChecks", i, "path")
        if path not in wanted:
            out.append(Observation("description_check_unexpected", at, {"path": check["path"]}))
        elif path in seen:
            out.append(Observation("description_check_duplicate", at, {"path": check["path"]}))
        else:
            seen.add(path)
            if check["verdict"] == NOT_APPLICABLE:
                if not _absent_optional(ext, extraction, tokens):
                    out.append(Observation("description_not_applicable", at[:-len("/path")] + "/verdict",
                                           {"path": check["path"]}))
                continue
            key = VERDICT_OBSERVATIONS.get(check["verdict"])
            if key is not None:
                out.append(Observation(key, path, {"explanation": check["explanation"]}))
    for path, text in wanted.items():
        if path not in seen:
            out.append(Observation("description_check_missing", path, {"path": path, "description": text}))
    return out
