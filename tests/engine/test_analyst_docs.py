"""docs/analysts.md names every problem code the engine can emit, each with a wrong and a right
example. The codes are read from the engine's source (the first argument of every Fault, fault()
and fail() call, the code argument of Problem, _problem and ExampleResult, any `code = ...`), so a
new code without its entry fails here."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import engine_source

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "engine" / "groundrules"
PAGE = ROOT / "docs" / "analysts.md"
FIRST = {"Fault", "fault", "fail", "YamlProblem"}
AT = {"Problem": 3, "_problem": 2, "ExampleResult": 4}          # the code's position among the arguments
CODE = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def _strings(node: ast.AST):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.IfExp):
        yield from _strings(node.body)
        yield from _strings(node.orelse)


def emitted_codes() -> set[str]:
    out: set[str] = set()
    for path, _, nodes in engine_source.modules():
        for node in nodes:
            found = []
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name in FIRST and node.args:
                    found.append(node.args[0])
                if name in AT and len(node.args) > AT[name]:
                    found.append(node.args[AT[name]])
                found += [k.value for k in node.keywords if k.arg == "code"]
            elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in ("code", "TOO_LARGE")
                                                      for t in node.targets):
                found.append(node.value)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "code" \
                    and node.value is not None:
                found.append(node.value)
            out |= {s for n in found for s in _strings(n) if CODE.fullmatch(s)}
    return out


def sections() -> dict[str, str]:
    text = PAGE.read_text(encoding="utf-8")
    parts = re.split(r"^#### `([a-z0-9-]+)`.*$", text, flags=re.MULTILINE)
    return {parts[i]: re.split(r"^### ", parts[i + 1], flags=re.MULTILINE)[0] for i in range(1, len(parts), 2)}


def test_the_collector_finds_the_codes_of_every_kind_of_check():
    codes = emitted_codes()
    assert {"yaml-syntax", "unknown-field", "shadowed-row", "regex-backtracking", "dangling-reference",
            "failing-example", "bad-check-id", "unknown-output-key", "full-width-punctuation"} <= codes
    assert len(codes) > 80


def test_every_code_the_engine_can_emit_has_an_entry_with_a_wrong_and_a_right_example():
    entries = sections()
    missing = sorted(emitted_codes() - set(entries))
    assert not missing, f"docs/analysts.md has no entry for: {', '.join(missing)}"
    thin = sorted(c for c in emitted_codes() if not (re.search(r"wrong", entries[c], re.IGNORECASE)
                                                     and re.search(r"right", entries[c], re.IGNORECASE)))
    assert not thin, f"entries without a wrong and a right example: {', '.join(thin)}"


def test_the_page_names_no_code_the_engine_cannot_emit():
    assert sorted(set(sections()) - emitted_codes()) == []
