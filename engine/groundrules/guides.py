"""The guides a model reads beside the listing: the event grammar and the candidate shape.

The listing types every argument but carries descriptions only where a model fills a value; what
an interpretation's events mean and how a candidate is put together is in two guides, served as
MCP resources over every transport. Each is made from what decides: the event catalogue's record
types and events (what each means, requires and forbids), the contract's shapes with their
descriptions (the listing keeps descriptions to the arguments), and a worked example from `schemas/examples/` that the part accepts (a test folds and verifies
them). Nothing in a guide is written by hand, so an analyst's new event type appears in it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from .core import canonical
from .core.schema_check import bundle
from .core.resources import data_root

if TYPE_CHECKING:
    from .api import Service

SCHEME = "groundrules://guide/"
MIME = "application/json"


@dataclass(frozen=True)
class Guide:
    name: str
    title: str
    description: str
    build: Callable[["Service"], dict]

    @property
    def uri(self) -> str:
        return SCHEME + self.name


def example(part: str, name: str) -> dict:
    """A worked example bundled under schemas/examples/<part>/<name>.json."""
    path = data_root() / "schemas" / "examples" / part / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


EVENT_EXAMPLE = ("fold", "seed_region-read_as_correct")
CANDIDATE_EXAMPLE = ("verify", "end_time_only")


def _shape(service: "Service", ref: str) -> dict:
    """A contract's shape with its descriptions, its vocabularies as the tables' enums."""
    from .listing import described
    return described(service.book, bundle(service.book.schemas, ref))


def _event_grammar(service: "Service") -> dict:
    from .evidence.fold import tables
    catalogue = tables(service.book)[0]
    written = service.book.sources[catalogue.id].data            # the table as the analyst wrote it
    return {
        "records": {name: {k: written["records"][name][k] for k in ("label", "description")
                           if k in written["records"][name]} for name in catalogue.records},
        "events": {name: {"layer": et.layer, "label": et.label,
                          **({"semantics": written["events"][name]["semantics"]}
                             if "semantics" in written["events"][name] else {}),
                          "requires": list(et.requires), "forbids": list(et.forbids)}
                   for name, et in catalogue.events.items()},
        "interpretation": _shape(service, "evidence.v1.schema.json#/$defs/interpretation"),
        "example": {"tool": "fold_evidence", "arguments": example(*EVENT_EXAMPLE)},
    }


def _candidate_shape(service: "Service") -> dict:
    return {
        "request": _shape(service, "verify.v1.schema.json#/$defs/request"),
        "candidate": _shape(service, "verify.v1.schema.json#/$defs/candidate"),
        "example": {"tool": "verify_extraction", "arguments": example(*CANDIDATE_EXAMPLE)},
    }


GUIDES = (
    Guide("event-grammar", "Interpretations: records, events, dispositions",
          "What each evidence record type and each event type of an interpretation means, requires and "
          "forbids; the interpretation's shape; a worked fold_evidence call. Read it before writing events.",
          _event_grammar),
    Guide("candidate-shape", "Candidates for verify_extraction",
          "The request and candidate shapes verify_extraction checks, and a worked call that verifies. "
          "Read it before writing a candidate (draft_candidate writes its skeleton).",
          _candidate_shape),
)


def guide_text(service: "Service", name: str) -> str | None:
    """The guide `name` as canonical JSON for this service's rulebook, or None if there is none."""
    found = next((g for g in GUIDES if g.name == name), None)
    if found is None:
        return None
    return service.book.memoized(("guide", name), lambda: canonical.dumps(found.build(service), indent=None))
