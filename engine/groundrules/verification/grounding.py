"""Grounding: every quote must occur verbatim in the source it cites.

Exact by construction: `str.find`, never a fuzzy or normalising match, so an absent quote is
never grounded and `source[start:end] == quote` for every offset returned. Offsets are code-point
offsets (Python string indices), end exclusive; when a quote occurs several times, the first
occurrence is reported (grounding asserts that the text is there, not which occurrence was meant).
"""
from __future__ import annotations

from .observations import Observation

SECTIONS = ("evidence", "descriptionChecks")


def locate(source: str, quote: str) -> tuple[int, int] | None:
    """(start, end) of the first occurrence of a non-empty quote, else None."""
    if not quote:
        return None
    start = source.find(quote)
    return None if start < 0 else (start, start + len(quote))


def ground(extraction: dict, sources: dict) -> tuple[list[dict], list[Observation]]:
    """One grounding entry per cited quote, and the observations of the quotes that fail."""
    entries: list[dict] = []
    observations: list[Observation] = []
    seen: dict = {}
    for section in SECTIONS:
        for i, item in enumerate(extraction[section]):
            for j, src in enumerate(item["sources"]):
                at = f"/extraction/{section}/{i}/sources/{j}"     # encode(...): nothing in it to escape
                sid, quote = src["sourceId"], src["quote"]
                text = sources.get(sid)
                span = None
                if text is None:
                    observations.append(Observation("source_unknown", at + "/sourceId", {"sourceId": sid}))
                elif not quote:
                    observations.append(Observation("quote_empty", at + "/quote", {"sourceId": sid}))
                else:
                    key = (sid, quote)
                    span = seen[key] if key in seen else seen.setdefault(key, locate(text, quote))
                    if span is None:
                        observations.append(Observation("quote_not_found", at + "/quote",
                                                {"sourceId": sid, "quote": quote}))
                entries.append({"path": at, "sourceId": sid, "quote": quote,
                                "start": span[0] if span else None, "end": span[1] if span else None})
    return entries, observations
