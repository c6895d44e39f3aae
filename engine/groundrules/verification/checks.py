"""One verification: the contract shape first, then every check over a well-shaped candidate."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .catalogue import Catalogue
from .contract import checker, json_message, json_problem, message
from .descriptions import description_findings
from .fields import data_findings
from .findings import Finding
from .grounding import ground
from .heuristics import IntentHeuristics
from .instances import ExtensionSchema
from .intents import intent_findings
from .phrases import ProhibitionPhrases
from .pointers import encode
from .reported import reported_findings
from .result import report
from .selection import Request

MAX_SHAPE_FINDINGS = 20


@dataclass(frozen=True)
class Tables:
    catalogue: Catalogue
    phrases: ProhibitionPhrases
    heuristics: IntentHeuristics
    schemas: Any


def run(req: Request, ext: ExtensionSchema, candidate: Any, tables: Tables) -> dict:
    not_json = json_problem(candidate)
    if not_json is not None:
        path, problem = not_json
        shape = [Finding("candidate_shape", encode(*path), {"problem": json_message(path, problem)})]
        return report(tables.catalogue, shape, [], None, None)
    problems = checker(tables.schemas, "candidate").problems(candidate)
    if problems:
        shape = [Finding("candidate_shape", encode(*e.absolute_path) if e is not None else "",
                         {"problem": message(e)}) for e in problems[:MAX_SHAPE_FINDINGS]]
        return report(tables.catalogue, shape, [], None, None)
    intent, extraction = candidate["intent"], candidate["extraction"]
    selected = req.selected
    findings = intent_findings(req.input, intent, tables.phrases, tables.heuristics)
    findings += data_findings(ext, selected, extraction)
    grounding, grounding_findings = ground(extraction, req.sources)
    findings += grounding_findings
    findings += description_findings(ext, selected, extraction)
    kept, wrong = reported_findings(tables.catalogue, selected, extraction)
    data = {f: extraction["data"][f] for f in selected if f in extraction["data"]}
    return report(tables.catalogue, findings + wrong + kept, grounding, intent, data)


def unavailable(exc: BaseException, tables: Tables) -> dict:
    """The report of an attempt whose candidate function raised."""
    return report(tables.catalogue, [Finding("candidate_unavailable", "", {"exception": type(exc).__name__})],
                  [], None, None)
