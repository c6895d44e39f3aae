"""One verification: the contract shape first, then every check over a well-shaped candidate."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .catalogue import Catalogue
from .derivations import Derivations
from .contract import json_message, json_problem, message, problems
from .descriptions import description_observations
from .fields import data_observations
from .observations import Observation, Reported
from .grounding import ground
from .heuristics import IntentHeuristics
from .instances import ExtensionSchema
from .intents import intent_observations
from .phrases import ProhibitionPhrases
from .pointers import encode
from .reported import reported_observations
from .result import report
from .selection import Request
from .values import value_observations

if TYPE_CHECKING:
    from ..results import VerifyReport

MAX_SHAPE_OBSERVATIONS = 20


@dataclass(frozen=True)
class Tables:
    catalogue: Catalogue
    phrases: ProhibitionPhrases
    heuristics: IntentHeuristics
    derivations: Derivations
    locks: dict                # lock table id -> its patterns, for the kinds the derivations read through locks
    schemas: Any


def run(req: Request, ext: ExtensionSchema, candidate: Any, tables: Tables) -> VerifyReport:
    not_json = json_problem(candidate)
    if not_json is not None:
        path, problem = not_json
        shape = [Observation("candidate_shape", encode(*path), {"problem": json_message(path, problem)})]
        return report(tables.catalogue, shape, [], None, None)
    found = problems(tables.schemas, "candidate", candidate)
    if found:
        shape = [Observation("candidate_shape", encode(*e.absolute_path) if e is not None else "",
                             {"problem": message(e)}) for e in found[:MAX_SHAPE_OBSERVATIONS]]
        return report(tables.catalogue, shape, [], None, None)
    intent, extraction = candidate["intent"], candidate["extraction"]
    selected = req.selected
    observations = intent_observations(req.input, intent, tables.phrases, tables.heuristics, req.turns)
    observations += data_observations(ext, selected, extraction)
    observations += value_observations(ext, selected, extraction, tables.derivations, tables.locks)
    grounding, grounding_observations = ground(extraction, req.sources)
    observations += grounding_observations
    observations += description_observations(ext, selected, extraction)
    kept, wrong = reported_observations(tables.catalogue, selected, extraction)
    data = {f: extraction["data"][f] for f in selected if f in extraction["data"]}
    items: list[Observation | Reported] = [*observations, *wrong, *kept]
    return report(tables.catalogue, items, grounding, intent, data)


def unavailable(exc: BaseException, tables: Tables) -> VerifyReport:
    """The report of an attempt whose candidate function raised."""
    return report(tables.catalogue, [Observation("candidate_unavailable", "", {"exception": type(exc).__name__})],
                  [], None, None)
