"""Lock tables as analysts edit them: a broken table fails the load at file:line with a stable code,
a pattern without examples fails `groundrules test`, and a slow pattern is LOCK_TIMEOUT."""
from __future__ import annotations

from pathlib import Path

import pytest

from groundrules import GroundrulesError, RulesError, load_rulebook, lock
from groundrules.core.examples import run_all
from groundrules.analyst.lint import lint

ROOT = Path(__file__).resolve().parents[2]

GOOD = """\
kind: lock_patterns
id: demo
timeout_ms: 100
invalid_reasons:
  too_short: fewer than 6 characters
patterns:
  - id: code
    kind: order_code
    regex: 'NO-[0-9]+'
    counts_in: {roles: [user], states: [sent]}
    normalize:
      - {step: delete_chars, chars: "-"}
      - {step: lowercase}
    validate:
      - {check: length, min: 6, reason: too_short}
    examples:
      - text: "单号 NO-1234"
        locks:
          - {quote: "NO-1234", start: 3, end: 10, normalized_value: "no1234", valid: true}
      - text: "单号 NO-1"
        locks:
          - {quote: "NO-1", start: 3, end: 7, normalized_value: "no1", valid: false, invalid_reason: too_short}
      - text: "没有单号"
        locks: []
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "demo.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def problems(tmp_path: Path, text: str) -> list[tuple[str, int]]:
    path = write(tmp_path, text)
    with pytest.raises(RulesError) as exc:
        load_rulebook(ROOT, files=[path])
    assert all(p.file == path.as_posix() for p in exc.value.problems)
    return [(p.code, p.line) for p in exc.value.problems]


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_the_good_table_loads_and_its_examples_pass(tmp_path):
    book = load_rulebook(ROOT, files=[write(tmp_path, GOOD)])
    outcomes = run_all(book)
    assert [(o.id, o.ok) for o in outcomes] == [("demo:code:1", True), ("demo:code:2", True),
                                                ("demo:code:3", True)]
    [c] = lock({"id": "m", "role": "user", "content": "NO-98765"}, book)
    assert (c["pattern"], c["kind"], c["normalized_value"]) == ("demo.code", "order_code", "no98765")


@pytest.mark.parametrize("old, new, code, at", [
    ("regex: 'NO-[0-9]+'", "regex: 'NO-[0-9+'", "bad-regex", "regex:"),
    ("regex: 'NO-[0-9]+'", "regex: 'NO-[0-9]*|x*'", "regex-matches-empty", "regex:"),
    ("{step: lowercase}", "{step: lowercas}", "unknown-normalizer", "step: lowercas"),
    ("{step: delete_chars, chars: \"-\"}", "{step: delete_chars}", "missing-step-argument", "delete_chars"),
    ("{step: delete_chars, chars: \"-\"}", "{step: delete_chars, chars: 3}", "bad-step-argument",
     "delete_chars"),
    ("{step: delete_chars, chars: \"-\"}", "{step: delete_chars, chars: \"-\", class: x}",
     "unknown-step-argument", "delete_chars"),
    ("{check: length, min: 6, reason: too_short}", "{check: lenght, min: 6, reason: too_short}",
     "unknown-validator", "lenght"),
    ("{check: length, min: 6, reason: too_short}", "{check: length, reason: too_short}",
     "missing-step-argument", "check: length"),
    ("{check: length, min: 6, reason: too_short}", "{check: length, min: 6, reason: too_shrt}",
     "unknown-invalid-reason", "too_shrt"),
    ("{check: length, min: 6, reason: too_short}", "{check: length, min: 6}", "missing-key",
     "check: length"),
    ("{check: length, min: 6, reason: too_short}",
     "{check: matches, regex: '(', reason: too_short}", "bad-regex", "check: matches"),
    ("invalid_reason: too_short}", "invalid_reason: too_long}", "unknown-invalid-reason", "too_long"),
    ("roles: [user]", "roles: [customer]", "bad-value", "roles:"),
    ("    kind: order_code\n", "    kind: order_code\n    start_group: lead\n", "unknown-group", "start_group"),
    ("    kind: order_code\n", "    kind: order_code\n    prefix: x\n", "unknown-key", "prefix: x"),
    ("timeout_ms: 100", "timeout_ms: 0", "bad-value", "timeout_ms"),
])
def test_a_broken_table_fails_the_load_at_file_line(tmp_path, old, new, code, at):
    assert old in GOOD
    text = GOOD.replace(old, new, 1)
    assert (code, line_of(text, at)) in problems(tmp_path, text)


def test_duplicate_pattern_id(tmp_path):
    text = GOOD + GOOD[GOOD.index("  - id: code"):]
    second = [i for i, line in enumerate(text.splitlines(), 1) if "- id: code" in line][1]
    assert problems(tmp_path, text) == [("duplicate-pattern-id", second)]


def test_every_problem_of_one_edit_is_reported_at_once(tmp_path):
    text = GOOD.replace("{step: lowercase}", "{step: lowercas}").replace("check: length", "check: lenght")
    codes = [c for c, _ in problems(tmp_path, text)]
    assert codes.count("unknown-normalizer") == 1 and codes.count("unknown-validator") == 1


@pytest.mark.parametrize("keep, missing", [
    (lambda ex: ex["locks"], "negative"),
    (lambda ex: not ex["locks"], "positive"),
    (lambda ex: False, "positive or negative"),
])
def test_a_pattern_without_examples_fails_test_and_lint(tmp_path, keep, missing):
    import yaml
    data = yaml.safe_load(GOOD)
    data["patterns"][0]["examples"] = [ex for ex in data["patterns"][0]["examples"] if keep(ex)]
    if not data["patterns"][0]["examples"]:
        del data["patterns"][0]["examples"]
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    path = write(tmp_path, text)
    failed = [o for o in run_all(load_rulebook(ROOT, files=[path])) if not o.ok]
    assert failed and all(o.where.startswith(f"{path.as_posix()}:{line_of(text, '- id: code')}:")
                          for o in failed)
    report = lint(ROOT, [path])
    [problem] = [p for p in report.problems if p.code == "missing-example"]
    assert (problem.file, problem.line, problem.severity) == (path.as_posix(), line_of(text, "- id: code"),
                                                              "error")
    assert missing in problem.message


def test_a_wrong_example_fails_with_its_location(tmp_path):
    text = GOOD.replace('normalized_value: "no1234"', 'normalized_value: "NO1234"')
    path = write(tmp_path, text)
    [bad] = [o for o in run_all(load_rulebook(ROOT, files=[path])) if not o.ok]
    assert bad.id == "demo:code:1"
    assert bad.where.startswith(f"{path.as_posix()}:{line_of(text, 'locks:')}:")


def test_an_example_whose_quote_is_not_its_span_fails(tmp_path):
    text = GOOD.replace("start: 3, end: 10", "start: 2, end: 9")
    [bad] = [o for o in run_all(load_rulebook(ROOT, files=[write(tmp_path, text)])) if not o.ok]
    assert "is not text[2:9]" in bad.message


def test_unused_invalid_reason_is_a_lint_warning(tmp_path):
    text = GOOD.replace("  too_short: fewer than 6 characters\n",
                        "  too_short: fewer than 6 characters\n  spare: never given\n")
    report = lint(ROOT, [write(tmp_path, text)])
    assert [(p.code, p.severity, p.line) for p in report.problems] == \
        [("unused-invalid-reason", "warning", line_of(text, "spare:"))]


def test_a_scan_past_its_budget_is_a_timeout_never_no_match(tmp_path):
    text = GOOD.replace("regex: 'NO-[0-9]+'", "regex: '(x+x+)+y'").replace("timeout_ms: 100", "timeout_ms: 5")
    book = load_rulebook(ROOT, files=[write(tmp_path, text)])
    with pytest.raises(GroundrulesError) as exc:
        lock({"id": "m9", "role": "user", "content": "x" * 5000}, book)
    assert exc.value.code == "LOCK_TIMEOUT"
    assert exc.value.details == {"message_id": "m9", "pattern": "demo.code", "timeout_ms": 5}


def test_a_check_past_its_budget_is_a_timeout_too(tmp_path):
    """A `matches` check runs under the table's budget as well, and is reported as the pattern's timeout."""
    text = (GOOD.replace("regex: 'NO-[0-9]+'", "regex: 'NO-x+'")
            .replace("      - {check: length, min: 6, reason: too_short}",
                     "      - {check: length, min: 6, reason: too_short}\n"
                     "      - {check: matches, regex: '(nox*x*)+y', reason: too_short}")
            .replace("timeout_ms: 100", "timeout_ms: 5"))
    book = load_rulebook(ROOT, files=[write(tmp_path, text)])
    with pytest.raises(GroundrulesError) as exc:
        lock({"id": "m9", "role": "user", "content": "NO-" + "x" * 5000}, book)
    assert exc.value.code == "LOCK_TIMEOUT" and exc.value.details["pattern"] == "demo.code"


def test_the_bundled_lock_tables_pass_their_examples_and_lint(lock_book):
    outcomes = run_all(lock_book)
    assert outcomes and [o for o in outcomes if not o.ok] == []
    tables = {o.id.split(":")[0] for o in outcomes}
    import yaml
    assert tables == {yaml.safe_load(p.read_text(encoding="utf-8"))["id"] for p in (ROOT / "locks").glob("*.yaml")}
    assert lint(ROOT, [ROOT / "locks"]).problems == []


def test_message_roles_and_states_are_the_evidence_contracts(tmp_path):
    """One vocabulary for lock(), the lock tables' counts_in and the ledger: schemas/evidence.v1's
    message_role / message_state. Adding a role there is all it takes for lock() to accept it."""
    import json
    import shutil
    shutil.copytree(ROOT / "schemas", tmp_path / "schemas")
    contract = tmp_path / "schemas" / "evidence.v1.schema.json"
    schema = json.loads(contract.read_text(encoding="utf-8"))
    schema["$defs"]["message_role"]["enum"].append("operator")
    contract.write_text(json.dumps(schema), encoding="utf-8")
    table = write(tmp_path, GOOD.replace("roles: [user]", "roles: [user, operator]"))
    book = load_rulebook(tmp_path, files=[table])
    [found] = lock({"id": "m1", "role": "operator", "content": "单号 NO-1234"}, book)
    assert found["quote"] == "NO-1234"
    with pytest.raises(RulesError) as exc:
        load_rulebook(ROOT, files=[write(tmp_path, GOOD.replace("roles: [user]", "roles: [user, operator]"))])
    assert [p.code for p in exc.value.problems] == ["bad-value"]


def test_the_budget_is_the_scans_not_the_work_done_per_candidate(tmp_path, monkeypatch):
    """The regex timeout guards a pattern that backtracks, so our own per-candidate work (normalising,
    checking, hashing the id) must not spend it: a long tool receipt full of numbers that the regex
    scans in microseconds is no LOCK_TIMEOUT, however slow the steps after the scan are."""
    import time
    from groundrules.locks import steps

    def slow(value: str) -> str:
        until = time.perf_counter() + 0.002
        while time.perf_counter() < until:
            pass
        return value
    monkeypatch.setitem(steps.NORMALIZERS, "slow", steps.StepKind((), (), lambda args, timeout: slow))
    text = GOOD.replace("      - {step: lowercase}\n", "      - {step: lowercase}\n      - {step: slow}\n")
    book = load_rulebook(ROOT, files=[write(tmp_path, text)])
    found = lock({"id": "m1", "role": "user", "content": "单号 NO-123456；" * 100}, book)
    assert len(found) == 100 and {c["normalized_value"] for c in found} == {"no123456"}
