"""The command line as a user meets it: envelopes on stdout, one-line errors, never a traceback."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from cli_inproc import run_cli
from said import words
from groundrules import explain

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "schemas" / "examples" / "support_reason" / "cq-shenlun-partial.json"


def run(*args, stdin: bytes | None = None, cwd: Path | None = None):
    return run_cli(*args, stdin=stdin, cwd=cwd or ROOT)


def run_process(*args, env: dict | None = None):
    """The real entry point, for what only a process shows (hash seeds, a cold cache)."""
    return subprocess.run([sys.executable, "-m", "groundrules.cli.main", *args], capture_output=True, cwd=ROOT,
                          env=env)


def test_explain_prints_the_envelope_of_the_library_result(tmp_path):
    out = run("explain", str(EXAMPLE), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    envelope = json.loads(out.stdout)
    assert list(envelope) == ["ok", "data", "warnings", "error", "rulebook"]
    assert envelope["ok"] is True and envelope["error"] is None
    assert envelope["data"] == explain(json.loads(EXAMPLE.read_text(encoding="utf-8")))
    assert "题量" in out.stdout.decode("utf-8")  # ensure_ascii=False: Chinese stays readable


def test_explain_reads_stdin_and_prints_contract_text():
    out = run("explain", "--contract", "-", stdin=EXAMPLE.read_bytes())
    assert out.returncode == 0
    text = out.stdout.decode("utf-8")
    assert text.startswith("支持状态为 partial，主因：部分槽位有证据、部分缺失") and "search.py" in text


def test_trace_says_why_each_row_did_not_fire():
    out = run("explain", "--trace", str(EXAMPLE))
    trace = json.loads(out.stdout)["data"]["trace"]
    by_row = {t["row"]: t for t in trace}
    assert by_row["partial_slot_coverage"]["fired"] is True
    no_candidates = by_row["no_candidates"]
    assert no_candidates["fired"] is False
    assert no_candidates["failed"] == {"at": "rows[1].when", "field": "metrics.candidate_count", "op": "eq",
                                       "read": 3, "expected": 0}


@pytest.mark.parametrize("setup, message", [
    (lambda d: d / "absent.json", "usage.no_such_file"),
    (lambda d: d, "usage.is_a_directory"),
    (lambda d: (d / "bin.json").write_bytes(b"\xff\xfe\x00garbage") and d / "bin.json", "usage.not_utf8"),
    (lambda d: (d / "bad.json").write_text("{oops", encoding="utf-8") and d / "bad.json", "usage.json_invalid"),
    (lambda d: (d / "nan.json").write_text('{"a": NaN}', encoding="utf-8") and d / "nan.json", "usage.json_constant"),
    (lambda d: (d / "deep.json").write_text("[" * 100000, encoding="utf-8") and d / "deep.json", "usage.json_deep"),
])
@pytest.mark.parametrize("lang", [None, "en"])
def test_unreadable_input_is_one_line_and_non_zero(tmp_path, setup, message, lang):
    """In the catalogue's words, in the language asked for (the default without --lang), with its code."""
    target = setup(tmp_path)
    out = run(*(["--lang", lang] if lang else []), "explain", str(target))
    err = out.stderr.decode("utf-8")
    assert out.returncode == 1 and out.stdout == b""
    assert err.startswith("groundrules explain: USAGE: ") and str(target) in err
    assert all(word in err for word in words(message, lang)) and words(message, lang)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("payload", [b"null", b"[]", b'"text"', b"42", b'{"support_status": 3}'])
def test_valid_json_that_is_not_a_context_is_refused_naming_the_context(payload):
    """explain_support lists the whole context contract and enforces it (issue 32, item 1); the
    library's explain() still answers 'unknown' for such input."""
    out = run("explain", "-", stdin=payload)
    assert out.returncode == 1
    error = json.loads(out.stdout)["error"]
    assert error["code"] == "INVALID_ARGUMENT" and error["field"].startswith("context")
    assert explain(json.loads(payload))["primary"] == "unknown"


@pytest.mark.extended
def test_identical_bytes_across_hash_seeds():
    outputs = set()
    for seed in ("0", "7", "4242"):
        out = run_process("explain", str(EXAMPLE), env=dict(os.environ, PYTHONHASHSEED=seed))
        outputs.add(out.stdout)
    assert len(outputs) == 1


def test_lint_and_test_pass_on_the_bundled_tables():
    lint = run("lint")
    assert lint.returncode == 0, lint.stdout.decode() + lint.stderr.decode()
    assert b"lint: 0 error(s)" in lint.stdout
    test = run("test")
    assert test.returncode == 0, test.stdout.decode()
    assert test.stdout.decode().strip().splitlines()[-1].endswith(" 0 failed")


def test_lint_points_at_the_broken_line(tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    (tmp_path / "schemas").symlink_to(ROOT / "schemas")
    (rules / "t.yaml").write_text(
        "kind: decision_table\nid: t\nhit_policy: first\noutputs: {a: {}}\nrows:\n"
        "  - id: a\n    when: {field: x, eqq: 1}\n    examples: [{given: {x: 1}, fires: true}]\n",
        encoding="utf-8")
    out = run("--rules", str(tmp_path), "lint")
    assert out.returncode != 0
    report = out.stdout.decode()
    assert "rules/t.yaml:7:22: unknown-operator: unknown operator 'eqq'" in report
    assert "did you mean 'eq'?" in report and "Traceback" not in report + out.stderr.decode()


def test_test_fails_on_a_wrong_example(tmp_path):
    rules = tmp_path / "rules"
    rules.mkdir()
    (tmp_path / "schemas").symlink_to(ROOT / "schemas")
    (rules / "t.yaml").write_text(
        "kind: decision_table\nid: t\nhit_policy: first\noutputs: {a: {}, b: {}}\nrows:\n"
        "  - id: a\n    when: {field: x, eq: 1}\n    examples: [{given: {x: 2}, fires: true}]\n"
        "  - id: b\n    when: {field: x, eq: 2}\n",
        encoding="utf-8")
    out = run("--rules", str(tmp_path), "test")
    text = out.stdout.decode()
    assert out.returncode == 1
    assert "FAIL t:a:1" in text and "FAIL t:b: row has no example" in text
    assert text.strip().splitlines()[-1] == "0 passed, 2 failed"


def test_demo_runs_every_bundled_example_through_its_tool():
    out = run("demo", "--json")
    assert out.returncode == 0
    data = json.loads(out.stdout)["data"]
    examples = {part: sorted(p.stem for p in (ROOT / "schemas" / "examples" / part).glob("*.json")) for part in data}
    assert {part: sorted(answers) for part, answers in data.items()} == examples
    # every example is a good input: what a part refuses or fails is a verdict on the example, never on its shape
    assert not [(part, name, a["error"]["code"]) for part, answers in data.items() for name, a in answers.items()
                if not a["ok"] and a["error"]["code"] in ("INVALID_ARGUMENT", "INVALID_MESSAGE", "PAYLOAD_INVALID")]
    assert data["support_reason"]["cq-shenlun-partial"]["data"]["primary"] == "partial_slot_coverage"


@pytest.mark.extended
def test_the_same_bytes_with_the_verdict_cache_cold_warm_or_off(tmp_path):
    """A cached table must read exactly like the YAML it came from (key order included: issue lists,
    rows and outputs are read in their order)."""
    def demo(cache: str) -> bytes:
        out = subprocess.run([sys.executable, "-m", "groundrules.cli.main", "demo", "--json"], capture_output=True,
                             env=dict(os.environ, GROUNDRULES_CACHE=cache), check=True)
        return out.stdout
    cold = demo(str(tmp_path / "cache"))
    assert demo(str(tmp_path / "cache")) == cold == demo("off")


def test_demo_tells_a_person_what_went_in_and_what_each_part_decided():
    text = run("demo").stdout.decode("utf-8")
    answers = json.loads(run("demo", "--json").stdout)["data"]
    for part, examples in answers.items():
        assert f"\n{part} (" in text
        for name, answer in examples.items():
            block = re.search(rf"\n  {re.escape(name)}\n((?:    .*(?:\n|$))+)", text).group(1)
            assert "in:  " in block and "out: " in block, (part, name)
    # what a part decided is in the text: the primary reason, the locked value, the folded value, the verdict
    assert "out: primary partial_slot_coverage" in text
    assert '-> wx_wang01, valid' in text and "demand_1.region filled = B 地" in text
    assert "DATA_EXTRACTION_FAILED: DATA_DESCRIPTION_UNDETERMINED, DATA_DEPENDENCY_MISSING" in text
    # both ledgers (issue 32, item 6): a decline folds while the lock no interpretation placed waits
    assert "demand_1.phone=declined; pending: wechat (no_disposition)" in text and "F-000001 unassessed" in text


def test_no_command_prints_help_and_exits_2():
    out = run()
    assert out.returncode == 2 and b"usage: groundrules" in out.stdout


@pytest.mark.extended
def test_the_wheel_carries_the_tables_and_works_from_anywhere(tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "-q", "-w", str(tmp_path / "dist"), str(ROOT)], capture_output=True)
    assert built.returncode == 0, built.stderr.decode()[-2000:]
    wheel = next((tmp_path / "dist").glob("groundrules-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("groundrules/_data/rules/support_reason.yaml",
                   "groundrules/_data/schemas/knowledge-gateway.v1.schema.json",
                   "groundrules/_data/schemas/kinds/decision_table.schema.json"):
        assert needed in names
    assert any(n.startswith("groundrules/_data/locks/") for n in names) or not any((ROOT / "locks").glob("*.yaml"))
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                    str(wheel)], check=True, capture_output=True)
    env = dict(os.environ, PYTHONPATH=str(target))
    away = tmp_path / "elsewhere"
    away.mkdir()
    out = subprocess.run([sys.executable, "-c",
                          "import groundrules, groundrules.core.resources as r; print(groundrules.__file__); "
                          "print(r.data_root())"], capture_output=True, cwd=away, env=env, text=True)
    assert out.returncode == 0, out.stderr
    assert str(target) in out.stdout.splitlines()[0] and out.stdout.splitlines()[1].endswith("_data")
    explained = subprocess.run([sys.executable, "-m", "groundrules.cli.main", "explain", str(EXAMPLE)],
                               capture_output=True, cwd=away, env=env)
    assert explained.returncode == 0 and json.loads(explained.stdout)["ok"] is True


def test_diff_base_is_never_read_as_a_git_option(tmp_path):
    """`--base=--output=FILE` would make git archive write FILE."""
    target = tmp_path / "written"
    out = run("diff", f"--base=--output={target}")
    assert out.returncode == 1 and b"Traceback" not in out.stderr
    assert not target.exists()


@pytest.mark.parametrize("command", [["lint", "--cases"], ["diff", "--base", str(ROOT), "--cases"]])
def test_a_case_file_nested_too_deeply_is_skipped_not_a_traceback(tmp_path, command):
    (tmp_path / "support_reason").mkdir()
    (tmp_path / "support_reason" / "deep.json").write_text("[" * 100000 + "]" * 100000, encoding="utf-8")
    out = run(*command, str(tmp_path))
    assert out.returncode == 0 and b"Traceback" not in out.stderr, out.stderr


@pytest.mark.parametrize("command", [["lint"], ["test"], ["explain", str(EXAMPLE)], ["demo"]])
@pytest.mark.parametrize("breakage", ["schema-not-json", "schema-is-a-folder", "metaschema-type-typo"])
def test_a_rules_folder_with_broken_schemas_is_one_message_not_a_traceback(tmp_path, command, breakage):
    shutil.copytree(ROOT / "schemas", tmp_path / "schemas")
    shutil.copytree(ROOT / "rules", tmp_path / "rules")
    kind = tmp_path / "schemas" / "kinds" / "decision_table.schema.json"
    if breakage == "schema-not-json":
        kind.write_text("{bad", encoding="utf-8")
    elif breakage == "schema-is-a-folder":
        (tmp_path / "schemas" / "x.schema.json").mkdir()
    else:
        kind.write_text(kind.read_text(encoding="utf-8").replace('"type": "string"', '"type": "strng"'),
                        encoding="utf-8")
    out = run("--rules", str(tmp_path), *command)
    text = (out.stdout + out.stderr).decode("utf-8")
    assert out.returncode != 0 and "Traceback" not in text
    assert ("bad-schema" in text) or ("unreadable" in text)


@pytest.mark.parametrize("argv", [["explain", "--no-such-option", "-"], ["lock"], ["explain", "--trace", "-", "x", "y"]])
@pytest.mark.parametrize("lang", [None, "en"])
def test_argparses_own_errors_are_worded_by_the_catalogue_with_argparses_exit_status(argv, lang):
    """An unknown option, a missing argument: argparse's usage line, then one line in the catalogue's
    words (argparse's own detail filled in as data), with the code USAGE; exit 2, as argparse exits."""
    out = run(*(["--lang", lang] if lang else []), *argv)
    err = out.stderr.decode("utf-8").splitlines()
    assert out.returncode == 2 and out.stdout == b""
    assert err[0].startswith("usage: groundrules") and err[-1].startswith(f"groundrules {argv[0]}: USAGE: ")
    assert all(word in err[-1] for word in words("usage.arguments", lang)) and "Traceback" not in "\n".join(err)
