"""A drafted candidate: the shape a model fills in, built from the request and the schema.

A candidate repeats the request's input in its intent block and needs one fieldResult per selected
field and one description check per applicable description; a model that writes it from scratch
forgets one and the candidate fails its shape. The draft has them all, with defaults that never
pass for a judgement: the input copied, every selected field `missing` with no data, the root's and
every required field's description check `undetermined`, an optional field's `not_applicable`
(true while it stays absent). The model fills in the intents, the data with its evidence, and the
verdicts; verify_extraction then checks what it wrote.
"""
from __future__ import annotations

from .descriptions import NOT_APPLICABLE, applicable
from .instances import ExtensionSchema
from .pointers import decode, encode
from .selection import Request


def candidate_draft(req: Request, ext: ExtensionSchema) -> dict:
    checks = []
    for path in applicable(ext, req.selected):
        tokens = decode(path) or []
        optional = len(tokens) == 2 and tokens[1] not in ext.required
        checks.append({"path": path, "verdict": NOT_APPLICABLE if optional else "undetermined",
                       "explanation": "", "sources": []})
    return {"intent": {"input": req.input, "normalizedInput": req.input, "primaryIntent": "", "requirements": [],
                       "intents": [], "prohibitions": []},
            "extraction": {"data": {}, "evidence": [], "descriptionChecks": checks,
                           "fieldResults": [{"path": encode("data", f), "status": "missing", "explanation": ""}
                                            for f in req.selected],
                           "issues": []}}
