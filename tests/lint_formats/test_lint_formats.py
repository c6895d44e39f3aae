"""`groundrules lint --format text|json|sarif|github`: the problems lint finds, for a program.

Each format is read back the way its consumer reads it (json.loads, the SARIF 2.1.0 schema, the
Actions runner's workflow-command syntax) and compared with the Problems the library returns."""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import jsonschema
import pytest

from groundrules.cli.main import main
from groundrules.core.errors import Problem
from groundrules.analyst.lint import lint
from groundrules.analyst.lint_formats import render

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
SARIF_SCHEMA = HERE / "sarif-schema-2.1.0.json"
SARIF_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"     # SOURCES.md
ODD_NAME = "rules/odd, name: 50%.yaml"       # a comma, a colon and a percent sign in a file name
ODD_TABLE = """kind: decision_table
id: odd
hit_policy: first
priority: [a]
outputs: {a: {}}
rows:
  - id: a
    when: {field: x, eq: 1}
    examples: [{given: {x: 1}, fires: true}, {given: {x: 2}, fires: false}]
"""
# The runner's syntax: ::command key=value,key=value::message (escapes in SOURCES of actions/toolkit)
COMMAND = re.compile(r"^::(?P<cmd>error|warning|notice) (?P<props>[^:]*)::(?P<data>.*)$")


@pytest.fixture(scope="module")
def broken(tmp_path_factory) -> Path:
    """The bundled tables with a state no move reaches (two errors) and a table in an oddly named
    file with a priority its hit policy ignores (a warning)."""
    root = tmp_path_factory.mktemp("tables")
    for d in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / d, root / d)
    (root / "tests").mkdir()
    (root / "tests" / "cases").symlink_to(ROOT / "tests" / "cases")
    states = root / "rules" / "finding_states.yaml"
    text = states.read_text(encoding="utf-8")
    line = "      archived: {label: 已归档, current: false}\n"
    assert text.count(line) == 1
    states.write_text(text.replace(line, line + "      limbo: {label: 悬空}\n"), encoding="utf-8")
    (root / ODD_NAME).write_text(ODD_TABLE, encoding="utf-8")
    return root


EDITED = ("rules/finding_states.yaml", ODD_NAME)      # lint only these (a whole lint takes seconds)


@pytest.fixture(scope="module")
def problems(broken) -> list[Problem]:
    with contextlib.chdir(broken):         # problems name the files as given: relative to here
        found = lint(broken, [Path(f) for f in EDITED]).problems
    assert {p.severity for p in found} == {"error", "warning"}, found    # both kinds are exercised
    assert any(p.file == ODD_NAME for p in found)
    return found


@pytest.fixture(scope="module")
def lint_broken(broken):
    """`groundrules --rules BROKEN lint EDITED... [--format F]` -> (exit code, stdout), each run once."""
    seen: dict = {}

    def run_format(*options: str) -> tuple[int, str]:
        if options not in seen:
            with contextlib.chdir(broken):
                seen[options] = run("--rules", str(broken), "lint", *EDITED, *options)
        return seen[options]
    return run_format


def run(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    assert err.getvalue() == ""
    return code, out.getvalue()


def test_text_is_the_default_and_unchanged(lint_broken, problems):
    plain = lint_broken()
    assert lint_broken("--format", "text") == plain
    assert plain[0] == 1 and plain[1].splitlines()[:len(problems)] == [
        str(p) if p.severity == "error" else f"{p} [warning]" for p in problems]


def test_json_is_the_envelope_with_every_problem_in_order(lint_broken, problems):
    code, out = lint_broken("--format", "json")
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False and doc["error"] is None
    assert doc["data"]["problems"] == [p.as_dict() for p in problems]
    errors = sum(p.severity == "error" for p in problems)
    assert (doc["data"]["errors"], doc["data"]["warnings"]) == (errors, len(problems) - errors)
    assert render("json", problems, True) == out           # the library's problems, the same bytes


@pytest.fixture(scope="module")
def sarif_validator():
    raw = SARIF_SCHEMA.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SARIF_SHA256, "the vendored SARIF schema was changed"
    schema = json.loads(raw)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def test_sarif_is_valid_sarif_2_1_0_naming_each_problem(lint_broken, problems, sarif_validator):
    code, out = lint_broken("--format", "sarif")
    log = json.loads(out)
    assert code == 1
    assert list(sarif_validator.iter_errors(log)) == []
    (only_run,) = log["runs"]
    rules = only_run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted({p.code for p in problems})
    got = []
    for result in only_run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        where = result["locations"][0]["physicalLocation"]
        got.append((unquote(where["artifactLocation"]["uri"]), where["region"]["startLine"],
                    where["region"]["startColumn"], result["ruleId"], result["level"],
                    result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
                    result["message"]["text"]))
    assert got == [(p.file, p.line, p.column, p.code, p.severity, p.key, str(p).split(f"{p.code}: ", 1)[1])
                   for p in problems]


def test_sarif_of_the_bundled_tables_is_valid_with_no_results(sarif_validator):
    code, out = run("--rules", str(ROOT), "lint", "--format", "sarif")
    log = json.loads(out)
    assert code == 0 and list(sarif_validator.iter_errors(log)) == [] and log["runs"][0]["results"] == []


def test_the_sarif_schema_refuses_what_is_not_sarif(problems, sarif_validator):
    """The check above can fail: a level SARIF does not know, or a region starting at line 0."""
    log = json.loads(render("sarif", problems, True))
    log["runs"][0]["results"][0]["level"] = "fatal"
    assert list(sarif_validator.iter_errors(log))
    log = json.loads(render("sarif", problems, True))
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert list(sarif_validator.iter_errors(log))


def parse_commands(out: str) -> list[tuple]:
    """Workflow commands as the runner reads them: properties split on , and =, then unescaped."""
    def unescape(text: str, prop: bool) -> str:
        if prop:
            text = text.replace("%3A", ":").replace("%2C", ",")
        return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")
    found = []
    for line in out.splitlines():
        m = COMMAND.match(line)
        if m is None:
            continue
        props = dict(item.split("=", 1) for item in m["props"].split(","))
        found.append((m["cmd"], {k: unescape(v, True) for k, v in props.items()}, unescape(m["data"], False)))
    return found


def test_github_annotations_name_file_line_col_and_the_message(lint_broken, problems):
    code, out = lint_broken("--format", "github")
    assert code == 1
    commands = parse_commands(out)
    assert len(commands) == len(problems) == len(out.splitlines()) - 1
    for (cmd, props, data), p in zip(commands, problems):
        assert cmd == p.severity
        assert props == {"file": p.file, "line": str(p.line), "col": str(p.column), "title": p.code}
        assert data == str(p).split(f"{p.code}: ", 1)[1]
    assert out.splitlines()[-1] == "lint: 2 error(s), 1 warning(s)"


def test_github_escapes_what_would_end_a_command():
    p = Problem("rules/a,b:c.yaml", 3, 4, "x-code", "50% done\nthen: more", key="rows[0]", hint="fix it, now")
    out = render("github", [p], True)
    assert out.count("\n") == 2                       # one command line, one summary line
    ((cmd, props, data),) = parse_commands(out)
    assert props["file"] == "rules/a,b:c.yaml" and data == "50% done\nthen: more [at rows[0]] (hint: fix it, now)"


def test_files_are_named_from_the_current_directory_when_the_tables_are_below_it(broken, problems, monkeypatch):
    monkeypatch.chdir(broken.parent)
    _, out = run("--rules", broken.name, "lint", "--format", "github")
    files = {props["file"] for _, props, _ in parse_commands(out)}
    assert files == {f"{broken.name}/{p.file}" for p in problems}
    given = [f"{broken.name}/{f}" for f in EDITED]             # files named by the user keep their names
    _, out = run("--rules", broken.name, "lint", *given, "--format", "github")
    assert {props["file"] for _, props, _ in parse_commands(out)} == set(given)


def test_a_file_given_by_its_absolute_path_is_a_file_uri_in_sarif(broken, sarif_validator):
    p = Problem(str(broken / ODD_NAME), 4, 1, "unused-priority", "m", severity="warning")
    log = json.loads(render("sarif", [p], False))
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == (broken / ODD_NAME).as_uri() and list(sarif_validator.iter_errors(log)) == []
