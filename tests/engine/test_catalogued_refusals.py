"""Every refusal is worded by the message catalogue (rules/messages.yaml), never by a sentence built
in Python: each catalogue message a raise site names exists, and the site gives every placeholder
its text fills; no raise site passes a literal message; and a refusal made by name is said in the
language its reader asks for."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import engine_source

from groundrules.core import codes
from groundrules.core.errors import GroundrulesError, refusal
from groundrules.core.messages import speaking, worded

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "engine" / "groundrules"

# callee -> (the position of the catalogue message's name, the placeholders the callee fills itself)
NAMERS = {
    "usage_error": (0, ()), "usage": (0, ()), "refusal": (1, ()), "Refused": (1, ()),
    "_invalid": (3, ("at",)), "refuse_at": (1, ("at",)), "_usage": (0, ()), "_bad": (3, ("at",)), "_say": (1, ()),
    "_may_read_decisions": (2, ("roles", "role")),
}


def names_of(node: ast.AST) -> list[str]:
    """The message names an argument may be: a string, or either branch of `a if … else b`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return names_of(node.body) + names_of(node.orelse)
    return []


def uses() -> list[tuple[str, str, set | None]]:
    """(place, message name, the keyword arguments given; None when some are given as **params)."""
    out = []
    for path, _, nodes in engine_source.modules():
        for node in nodes:
            if not isinstance(node, ast.Call):
                continue
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if callee not in NAMERS or len(node.args) <= NAMERS[callee][0]:
                continue
            given = None if any(k.arg is None for k in node.keywords) else \
                {k.arg for k in node.keywords} | set(NAMERS[callee][1])
            for name in names_of(node.args[NAMERS[callee][0]]):
                if "." in name:                       # catalogue names are dotted (usage.…, wire.…)
                    out.append((f"{path.relative_to(PACKAGE)}:{node.lineno}", name, given))
    return out


def test_the_walk_finds_the_command_lines_refusals():
    assert sum(name.startswith("usage.") for _, name, _ in uses()) >= 100


def test_every_message_a_raise_site_names_is_in_the_catalogue_with_its_placeholders(rulebook):
    catalogue = rulebook.table("messages")
    unknown = [(place, name) for place, name, _ in uses() if name not in catalogue.messages]
    assert unknown == []
    unfilled = [(place, name, sorted(set(catalogue.messages[name].names) - given))
                for place, name, given in uses() if given is not None
                and set(catalogue.messages[name].names) - given]
    assert unfilled == []


def literal_messages() -> list[str]:
    """Raise sites that hand GroundrulesError a message written in Python (a string or an f-string),
    or a refusal helper a sentence instead of a catalogue message's name."""
    found = []
    for path, _, nodes in engine_source.modules():
        for node in nodes:
            if not isinstance(node, ast.Call):
                continue
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            at = 1 if callee == "GroundrulesError" else NAMERS[callee][0] if callee in NAMERS else None
            if at is None or len(node.args) <= at:
                continue
            said = node.args[at]
            if isinstance(said, ast.JoinedStr) or callee == "GroundrulesError" and isinstance(said, ast.Constant) \
                    or isinstance(said, ast.Constant) and isinstance(said.value, str) and " " in said.value:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


# The one refusal no catalogue can word: the bundled tables, the catalogue among them, are missing.
UNWORDABLE = {"core/resources.py"}


def test_no_raise_site_passes_a_literal_message():
    assert [place for place in literal_messages() if place.split(":")[0] not in UNWORDABLE] == []


def test_the_walk_sees_a_literal_message():
    """The check above is shown to fail: the one literal it allows is found."""
    assert [place.split(":")[0] for place in literal_messages()] == sorted(UNWORDABLE)


@pytest.mark.parametrize("name, params", [("usage.no_such_file", {"input": "x.json"}),
                                          ("usage.port_busy", {"port": 1, "reason": "in use"})])
def test_a_refusal_made_by_name_is_said_in_each_language_its_own_way(rulebook, name, params):
    catalogue = rulebook.table("messages")
    exc = refusal(codes.USAGE, name, **params)
    said = {lang: worded(exc, speaking(catalogue, lang)) for lang in catalogue.languages}
    assert len({e.message for e in said.values()}) == len(catalogue.languages)
    for lang, e in said.items():
        assert isinstance(e, GroundrulesError) and e.code == codes.USAGE
        assert e.message == catalogue.messages.speaking(lang)[name].render(params)
        assert all(str(v) in e.message for v in params.values())
