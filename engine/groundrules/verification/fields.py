"""The data part: which keys may appear, their values, fieldResults, and evidence coverage.

`required` applies only to selected fields: an unselected required field is neither expected in
data nor reported missing, though its material may still be quoted for a description.
"""
from __future__ import annotations

import json

from .observations import Observation
from .instances import ExtensionSchema
from .pointers import NOT_FOUND, decode, encode, field_in, resolve

EXTRACTED, MISSING = "extracted", "missing"


def data_observations(ext: ExtensionSchema, selected: tuple, extraction: dict) -> list[Observation]:
    data = extraction["data"]
    out: list[Observation] = []
    for key, value in data.items():                 # a pointer is written only for an observation
        if key not in ext.checkers:
            out.append(Observation("data_key_unknown", encode("data", key), {"field": key}))
        elif key not in selected:
            out.append(Observation("data_key_unselected", encode("data", key), {"field": key}))
        else:
            problem = ext.checkers[key].problem(value)
            if problem is not None:
                out.append(Observation("data_value_invalid", encode("data", key), {"field": key, "problem": problem}))
    out += _field_results(ext, selected, extraction)
    out += _evidence(selected, extraction)
    return out


def _field_results(ext: ExtensionSchema, selected: tuple, extraction: dict) -> list[Observation]:
    data = extraction["data"]
    out: list[Observation] = []
    results: dict = {}
    for i, item in enumerate(extraction["fieldResults"]):
        tokens = decode(item["path"])
        field = field_in(tokens, selected) if tokens is not None and len(tokens) == 2 else None
        if field is None:
            out.append(Observation("field_result_unexpected", encode("extraction", "fieldResults", i, "path"),
                                   {"path": item["path"]}))
        elif field in results:
            out.append(Observation("field_result_duplicate", encode("extraction", "fieldResults", i, "path"),
                                   {"path": item["path"]}))
        else:
            results[field] = item
    for field in selected:
        item = results.get(field)
        if item is None:
            out.append(Observation("field_result_missing", encode("data", field), {"field": field}))
        elif (item["status"] == EXTRACTED) != (field in data):
            out.append(Observation("field_status_mismatch", encode("data", field),
                                   {"field": field, "status": item["status"]}))
        elif item["status"] == MISSING and field in ext.required:
            out.append(Observation("required_field_missing", encode("data", field),
                                   {"field": field, "explanation": item["explanation"]}))
    return out


def _evidence(selected: tuple, extraction: dict) -> list[Observation]:
    data = extraction["data"]
    out: list[Observation] = []
    covered: set = set()
    for i, item in enumerate(extraction["evidence"]):
        tokens = decode(item["path"])
        field = field_in(tokens, selected) if tokens is not None else None
        value = resolve(data, tokens[1:]) if tokens is not None and field is not None else NOT_FOUND
        if value is NOT_FOUND:
            out.append(Observation("evidence_path_invalid", encode("extraction", "evidence", i, "path"),
                               {"path": item["path"]}))
            continue
        covered.add(field)
        if item["mode"] != "exact":
            continue
        for j, src in enumerate(item["sources"]):
            if src["quote"] and not (isinstance(value, str) and value == src["quote"]):
                out.append(Observation("exact_value_mismatch",
                                   encode("extraction", "evidence", i, "sources", j, "quote"),
                                   {"quote": src["quote"], "value": _show(value)}))
    for field in selected:
        if field in data and field not in covered:
            out.append(Observation("evidence_missing", encode("data", field), {"field": field}))
    return out


def _show(value) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return type(value).__name__
