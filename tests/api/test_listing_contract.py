"""The listing is the contract (issue 32, item 1): what each tool advertises as its input is what
the registry enforces, in a form every client's dialect reads, with closed lists from the tables.

Arguments are drawn from each advertised schema by a generator of our own over the JSON Schema
subset the contracts use (hypothesis-jsonschema 0.23.1, the latest, fails on this Hypothesis with
`'many' object has no attribute 'more'`); jsonschema, not the generator, decides which draws are
valid. The MCP Inspector's `--strict` checks (no array-valued `type`, no schema without a
constraint) are replicated here, over every input schema of every role's listing; the real
Inspector runs them in test_inspector_cli.py (extended: it needs Node)."""
from __future__ import annotations

import json
import re
import shutil

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from budget import examples
from pathlib import Path
from schema_draws import drawn
from groundrules import Caller, Service, load_rulebook
from groundrules.api import TOOLS
from table_edits import TableFile

ROOT = Path(__file__).resolve().parents[2]
REVIEWER = Caller("rev", "reviewer", ("p",))
COMBINATORS = ("anyOf", "oneOf", "allOf")
CONSTRAINTS = {"type", "enum", "const", "$ref", *COMBINATORS, "required", "not"}
SERVICE = Service()


def _schemas(node, at=""):
    """(where, schema node) for every subschema of `node`."""
    if not isinstance(node, dict):
        return
    yield at, node
    for key in ("properties", "$defs", "patternProperties"):
        for name, sub in node.get(key, {}).items():
            yield from _schemas(sub, f"{at}/{key}/{name}")
    for key in ("items", "additionalProperties", "not", "if", "then", "else", "contains"):
        if isinstance(node.get(key), dict):
            yield from _schemas(node[key], f"{at}/{key}")
    for key in COMBINATORS:
        for i, sub in enumerate(node.get(key, ())):
            yield from _schemas(sub, f"{at}/{key}/{i}")


def _valid_arguments(name):
    schema = SERVICE.listing(name).input_schema
    validator = jsonschema.Draft202012Validator(schema)
    return drawn(schema).filter(validator.is_valid)


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_no_argument_the_listing_allows_is_refused_for_its_shape(name):
    contract = SERVICE.input_contract(name)

    @settings(max_examples=examples(200), deadline=None,
              suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
    @given(arguments=_valid_arguments(name))
    def check(arguments):
        assert contract.errors(arguments) == [], arguments
        envelope = SERVICE.call(name, arguments, REVIEWER)
        if not envelope["ok"] and envelope["error"]["code"] == "INVALID_ARGUMENT":
            # a part's refusal of a value it weighs, never the registry's of the shape it listed
            assert envelope["error"].get("field") not in (None, "(arguments)"), envelope
    check()


JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=4),
                    lambda kids: st.lists(kids, max_size=2) | st.dictionaries(st.text(max_size=4), kids, max_size=2),
                    max_leaves=4)


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_every_shape_refusal_is_of_an_argument_the_listing_forbids(name):
    schema = SERVICE.listing(name).input_schema
    validator = jsonschema.Draft202012Validator(schema)
    keys = sorted(schema.get("properties", {})) or ["x"]

    @settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
    @given(base=_valid_arguments(name), key=st.sampled_from(keys), value=JSON)
    def check(base, key, value):
        arguments = {**base, key: value}
        assume(json.loads(json.dumps(arguments)) == arguments)
        refused = SERVICE.input_contract(name).errors(arguments) != []
        assert refused == (not validator.is_valid(arguments)), arguments
        if refused:
            assert SERVICE.call(name, arguments, REVIEWER)["error"]["code"] == "INVALID_ARGUMENT"
    check()


# ----------------------------------------------------------------------------- the dialect checks

@pytest.mark.parametrize("role", ["agent", "reviewer"])
def test_every_input_schema_passes_the_inspectors_strict_checks(role):
    """Replicates `--strict`: no array-valued `type`, no subschema without any constraint; and every
    argument a model fills has a `type` of its own (some clients send a $ref-only one as a string),
    but one whose branches have different types, which no one `type` says."""
    problems = []
    for listing in SERVICE.listings(Caller("c", role, ("p",))):
        for at, node in _schemas(listing.input_schema):
            if isinstance(node.get("type"), list):
                problems.append((listing.name, at, "array-valued type"))
            if not CONSTRAINTS & set(node):
                problems.append((listing.name, at, "unconstrained"))
        for key, node in listing.input_schema["properties"].items():
            if "type" in node:
                continue
            kinds = {_type_of(b, listing.input_schema) for c in COMBINATORS for b in node.get(c, ())}
            if None in kinds or len(kinds) < 2:        # untyped, or one type the argument does not say
                problems.append((listing.name, key, "argument without a type"))
    assert problems == []


def _type_of(branch: dict, schema: dict) -> str | None:
    """A branch's own `type`, through the `$ref`s it names."""
    for _ in range(8):
        if "type" in branch or "$ref" not in branch:
            break
        branch = schema["$defs"][branch["$ref"].removeprefix("#/$defs/")]
    return branch.get("type") if isinstance(branch.get("type"), str) else None


def test_an_argument_whose_every_branch_is_an_object_says_so():
    """A client that coerces a typed-in argument by its own `type` only (the MCP Inspector's forms,
    its 0.15 CLI, which sent `append_evidence`'s record as a string) sends the record as an object:
    the argument carries the `type` its branches share. An argument of two types (a state or a
    list of states) cannot, and a string given for it is one of its branches."""
    record = SERVICE.listing("append_evidence").input_schema["properties"]["record"]
    assert record["type"] == "object" and len(record["anyOf"]) > 1
    listed = SERVICE.listing("query_findings").input_schema
    states = listed["properties"]["epistemic_state"]
    assert "type" not in states and {_type_of(b, listed) for b in states["anyOf"]} == {"string", "array"}


def test_the_listed_schema_is_the_one_the_registry_checks():
    for name in TOOLS:
        assert SERVICE.listing(name).input_schema == SERVICE.input_contract(name).schema


def _x_names(node):
    return [n for _, n in _schemas(node) if "x-names" in n]


def test_closed_lists_come_from_the_tables(tmp_path):
    """Every vocabulary an input names is an enum in the listing, in the table's order; a claim
    kind an analyst adds appears in the listing and is accepted, with no Python."""
    book = SERVICE.book
    vocabulary = book.table("findings_vocabulary")
    listed = SERVICE.listing("log_finding").input_schema
    assert listed["properties"]["claim_kind"]["enum"] == list(vocabulary.claim_kinds)
    states = book.table("finding_states").machines
    assert listed["properties"]["epistemic_state"]["enum"] == list(states["epistemic"].states)
    for name in TOOLS:
        assert _x_names(SERVICE.listing(name).input_schema) == [], name

    for folder in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    TableFile(tmp_path / "rules" / "findings_vocabulary.yaml").insert_after(
        ("claim_kinds", "procedure"), "postmortem: {label: 事后复盘}")
    edited = Service(load_rulebook(tmp_path, cache=False))
    assert edited.listing("log_finding").input_schema["properties"]["claim_kind"]["enum"][-1] == "postmortem"
    assert edited.input_contract("log_finding").errors({"claim_kind": "postmortem", "statement": "s"}) == []
    assert SERVICE.input_contract("log_finding").errors({"claim_kind": "postmortem", "statement": "s"}) != []


def test_a_missing_decision_log_names_its_own_remedy():
    """read_decisions without a decision log points at what turns it on, not at --db (issue 32, item 5)."""
    envelope = SERVICE.call("read_decisions", {}, REVIEWER)
    assert envelope["error"]["code"] == "NOT_CONFIGURED"
    assert envelope["error"]["message"] == SERVICE.roles.message("not_configured_decisions", tool="read_decisions")
    assert envelope["error"]["message"] != SERVICE.roles.message("not_configured", tool="read_decisions")


REFERENCES = re.compile(r"seed \d|§|\.json\b|\.ya?ml\b|\brules/|\bschemas/|#/\$defs")


def test_no_listed_description_cites_what_a_model_cannot_read():
    """A description stands alone (issue 32, item 2): no seed, section or file of this repository."""
    found = []
    for listing in SERVICE.listings(Caller("c", "reviewer", ("p",))):
        texts = [("(tool)", listing.description)] + [(at, n["description"]) for at, n in _schemas(listing.input_schema)
                                                     if isinstance(n.get("description"), str)]
        found += [(listing.name, at, text) for at, text in texts if REFERENCES.search(text)]
    assert found == []
