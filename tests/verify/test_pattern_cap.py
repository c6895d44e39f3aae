"""Issue 19, item 1: a caller's pattern is refused by its length before anything compiles it. An inline
schema's 256 KB `pattern` took 3.3 s to compile (the metaschema's regex check, then the checks)
before any time budget applied. rules/limits.yaml patterns.max_chars caps every pattern a caller's
schema holds (a `pattern` anywhere, a `patternProperties` name); past it the call is refused with
INVALID_ARGUMENT (every malformed inline schema's code), saying where and how long, echoing none of it."""
from __future__ import annotations

import shutil

import pytest

from cli_inproc import run_cli
from groundrules import Caller, Service, default_rulebook, load_rulebook
from groundrules.core.errors import ECHO_CHARS
from table_edits import TableFile
from test_pattern_budget import schema_with
from test_verify_robustness import INPUT, any_value_candidate
from verify_support import ROOT

CAP = default_rulebook().table("limits").pattern_max_chars
AGENT = Caller("tester", "agent")
KEY = ("patterns", "max_chars")


def call(schema: dict, value, book=None) -> dict:
    return Service(book or default_rulebook()).call("verify_extraction", {
        "request": {"input": INPUT}, "schema": schema, "candidate": any_value_candidate(value)}, AGENT)


def unclosed(n: int) -> str:
    """A pattern of `n` characters that does not compile: refused by length, it is never read."""
    return "(" * n


@pytest.mark.parametrize("field, where", [
    ({"type": "string", "pattern": unclosed(CAP + 1)}, "properties.v.pattern"),
    ({"type": "object", "patternProperties": {unclosed(CAP + 1): {}}}, "properties.v.patternProperties."),
    ({"type": "object", "propertyNames": {"pattern": unclosed(CAP + 1)}}, "properties.v.propertyNames.pattern"),
    ({"type": "array", "items": {"anyOf": [{"type": "string", "pattern": unclosed(CAP + 1)}]}},
     "properties.v.items.anyOf[0].pattern"),
], ids=["pattern", "patternProperties", "propertyNames", "nested"])
def test_a_pattern_past_the_cap_is_refused_before_it_is_compiled(field, where):
    envelope = call(schema_with(field), "x")
    error = envelope["error"]
    assert error["code"] == "INVALID_ARGUMENT" and error["field"] == "schema", error
    assert where in error["message"] and str(CAP) in error["message"] and str(CAP + 1) in error["message"]
    assert "(" * (ECHO_CHARS + 1) not in str(envelope)          # not compiled, and not echoed


def test_a_pattern_at_the_cap_still_decides():
    pattern = "^" + "(?:x)" * ((CAP - 2) // 5) + "$"
    assert len(pattern) <= CAP
    assert call(schema_with({"type": "string", "pattern": pattern}), "x" * ((CAP - 2) // 5))["ok"] is True


def test_a_long_pattern_as_data_is_no_pattern():
    """A "pattern" key inside a value (const, enum, default, examples) is not a regex of the
    schema's; a field named "pattern" or "const" is still a schema."""
    value = {"pattern": "x" * (CAP + 1)}
    assert call(schema_with({"type": "object", "const": value}), value)["ok"] is True
    named = schema_with({"type": "object", "properties": {"const": {"type": "string", "pattern": "x" * (CAP + 1)}}})
    assert call(named, {"const": "x"})["error"]["code"] == "INVALID_ARGUMENT"


def test_the_cap_is_the_limits_tables(tmp_path):
    """An analyst tightens patterns.max_chars: lint checks it like the other limits, and the same
    call is refused under the edited tables and decided under the shipped ones."""
    root = tmp_path / "tables"
    for folder in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / folder, root / folder)
    limits_file = TableFile(root / "rules" / "limits.yaml")
    assert limits_file.at(*KEY) == CAP
    limits_file.write_scalar(KEY, 0)
    lint = run_cli("--rules", root, "lint")
    line, col = limits_file.source.positions[KEY]
    assert lint.returncode == 1 and f"rules/limits.yaml:{line}:{col}: bad-value" in lint.stdout.decode(), lint.stdout
    tight = 32
    limits_file.write_scalar(KEY, tight)
    schema = schema_with({"type": "string", "pattern": "^x{1,3}" + "|y" * tight + "$"})
    assert call(schema, "xx")["ok"] is True
    refused = call(schema, "xx", load_rulebook(root))
    assert refused["error"]["code"] == "INVALID_ARGUMENT" and f" {tight} " in refused["error"]["message"] \
        and "patterns.max_chars" in refused["error"]["message"]
