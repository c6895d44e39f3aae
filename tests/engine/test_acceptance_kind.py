"""The `acceptance` kind: invariants stated in YAML, reported by `groundrules test` at their line."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli_inproc import run_cli
from groundrules import RulesError, default_rulebook, load_rulebook
from groundrules.analyst import gate

ROOT = Path(__file__).resolve().parents[2]
BOOK = default_rulebook()
ACCEPTANCE = [t for t in sorted(BOOK.kinds) if BOOK.kinds[t] == "acceptance"]
OUTCOMES = {o.id: o for o in gate.run(BOOK, ACCEPTANCE)}


def test_there_are_acceptance_tables_with_requirements_and_checks():
    assert ACCEPTANCE
    assert any(BOOK.table(t).requires for t in ACCEPTANCE) and any(BOOK.table(t).checks for t in ACCEPTANCE)


@pytest.mark.parametrize("outcome_id", list(OUTCOMES))
def test_every_stated_invariant_holds(outcome_id):
    outcome = OUTCOMES[outcome_id]
    assert outcome.ok, f"{outcome.where}: {outcome.message}"


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for folder in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / folder, root / folder)
    shutil.copytree(ROOT / "tests" / "cases" / "support_reason", root / "tests" / "cases" / "support_reason")
    return root


def _edit(path: Path, old: str, new: str) -> int:
    """Replace `old` (once) and return the line it was on."""
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")
    return text[:text.index(old)].count("\n") + 1


def _failures(root: Path) -> list:
    return [o for o in gate.run(load_rulebook(root, cache=False)) if not o.ok]


def test_a_broken_priority_relation_is_reported_at_the_relation(tmp_path):
    root = _root(tmp_path)
    _edit(root / "rules/support_reason.yaml", "  - no_candidates\n  - no_usable_evidence\n",
          "  - no_usable_evidence\n  - no_candidates\n")
    failures = [o for o in _failures(root) if ".order." in o.id]
    assert failures == []                       # no order above relates these two
    _edit(root / "rules/support_reason.yaml", "  - conflicting_evidence\n  - no_usable_evidence\n  - no_candidates\n",
          "  - no_usable_evidence\n  - no_candidates\n  - conflicting_evidence\n")
    text = (root / "rules/support_reason_acceptance.yaml").read_text(encoding="utf-8").splitlines()
    line = next(i for i, t in enumerate(text, 1) if t.strip() == "- [conflicting_evidence, no_candidates]")
    failures = [o for o in _failures(root) if ".order." in o.id]
    assert [(o.file, o.line) for o in failures] == [("rules/support_reason_acceptance.yaml", line)]
    assert "'conflicting_evidence' must come before 'no_candidates'" in failures[0].message


def test_a_missing_state_and_a_missing_table_are_reported_at_their_lines(tmp_path):
    root = _root(tmp_path)
    req = root / "rules/finding_ledger_acceptance.yaml"
    line = _edit(req, "      epistemic: [unassessed, provisional, supported, contested, refuted]",
                 "      epistemic: [unassessed, provisional, supported, contested, refuted, disputed]")
    table_line = _edit(req, "  - table: findings_vocabulary\n", "  - table: finding_vocabulary\n")
    said = {o.id: o for o in _failures(root)}
    assert set(said) == {"finding_ledger.acceptance:requires.finding_states.states.epistemic.disputed",
                         "finding_ledger.acceptance:requires.finding_vocabulary"}
    state = said["finding_ledger.acceptance:requires.finding_states.states.epistemic.disputed"]
    assert state.line == line and "state 'disputed' is required in machine 'epistemic'" in state.message
    table = said["finding_ledger.acceptance:requires.finding_vocabulary"]
    assert table.line == table_line and "findings_vocabulary" in table.message


def test_a_row_no_corpus_case_fires_is_named_with_its_line(tmp_path):
    """`every_row_fires`: a row added without a case of its own fails `groundrules test`, naming the
    row's line in its table; a case it fires on makes it pass."""
    import json
    from table_edits import TableFile
    root = _root(tmp_path)
    table = TableFile(root / "rules/support_reason.yaml")
    rows = table.at("rows")
    table.insert_after(("rows", len(rows) - 1), f"""- id: {rows[0]['id']}.twice
  code: {rows[0].get('code', rows[0]['id'])}
  when: {{field: metrics.candidate_count, gt: 999}}""")
    line = table.source.where(("rows", len(rows)))[0]
    failed = [o for o in _failures(root) if ".every_row_fires." in o.id]
    assert [o.id.rsplit(".", 1)[-1] for o in failed] == ["twice"]
    assert f"rules/support_reason.yaml:{line})" in failed[0].message
    case = json.loads(sorted((root / "tests/cases/support_reason").glob("*.json"))[0].read_text("utf-8"))
    case.setdefault("metrics", {})["candidate_count"] = 1000
    (root / "tests/cases/support_reason/many.json").write_text(json.dumps(case), encoding="utf-8")
    assert [o for o in _failures(root) if ".every_row_fires." in o.id] == []


def test_a_failing_check_points_at_the_test_that_failed(tmp_path):
    root = _root(tmp_path)
    _edit(root / "rules/support_reason.yaml", "  - no_candidates\n  - no_usable_evidence\n  - recorded_unresolved\n"
          "  - required_slots_missing\n", "  - required_slots_missing\n  - no_usable_evidence\n"
          "  - recorded_unresolved\n  - no_candidates\n")
    text = (root / "rules/support_reason_acceptance.yaml").read_text(encoding="utf-8").splitlines()
    start = text.index("  - id: g2-no-candidates-primary-is-no-candidates")
    line = next(i for i, t in enumerate(text[start:], start + 1) if "{field: primary, eq: no_candidates}" in t)
    failures = {o.id.split(":", 1)[1]: o for o in _failures(root)}
    failure = failures["g2-no-candidates-primary-is-no-candidates"]
    assert failure.line == line
    assert failure.message == ('case insufficient-no-candidates-out-of-library: primary eq "no_candidates" '
                               'did not hold; read "required_slots_missing"')
    assert "requires.support_reason.order.2" in failures


def test_a_check_on_a_missing_case_names_the_close_one(tmp_path):
    root = _root(tmp_path)
    line = _edit(root / "rules/support_reason_acceptance.yaml", "    case: conflicting-shenlun-count\n",
                 "    case: conflicting-shenlun-cuont\n")
    failure = next(o for o in _failures(root) if o.id.endswith("g1-conflicting-primary-is-conflicting-evidence-naming-the-slot"))
    assert "case tests/cases/support_reason/conflicting-shenlun-cuont.json does not exist" in failure.message
    assert "conflicting-shenlun-count" in failure.message and failure.line == line - 1


def test_an_unknown_tool_fails_the_load_at_its_line(tmp_path):
    root = _root(tmp_path)
    line = _edit(root / "rules/support_reason_acceptance.yaml", "tool: explain_support\n", "tool: explain_suport\n")
    with pytest.raises(RulesError) as caught:
        load_rulebook(root, cache=False)
    problem = caught.value.problems[0]
    assert (problem.file, problem.line, problem.code) == ("rules/support_reason_acceptance.yaml", line, "unknown-tool")
    assert "explain_support" in problem.hint


def test_groundrules_test_runs_one_acceptance_table(tmp_path):
    out = run_cli("test", "--table", "finding_ledger.acceptance", cwd=tmp_path)
    text = out.stdout.decode("utf-8")
    assert out.returncode == 0, text + out.stderr.decode("utf-8")
    expected = sum(o.id.startswith("finding_ledger.acceptance:") for o in OUTCOMES.values())
    assert text.strip().splitlines()[-1] == f"{expected} passed, 0 failed"


def _problems(root: Path) -> list:
    with pytest.raises(RulesError) as exc:
        load_rulebook(root, cache=False)
    return exc.value.problems


def _first_check(table_id: str):
    return BOOK.table(table_id).checks[0]


@pytest.mark.parametrize("table_id", [t for t in ACCEPTANCE if BOOK.table(t).groups])
def test_check_ids_name_a_declared_group_or_say_local(tmp_path, table_id):
    table, check = BOOK.table(table_id), _first_check(table_id)
    assert check.group in table.groups
    root = _root(tmp_path)
    path = root / table.file
    name = check.id.split("-", 1)[1]
    line = _edit(path, f"id: {check.id}\n", f"id: local-{name}\n")
    local = load_rulebook(root, cache=False).table(table_id).checks[0]
    assert local.group is None and local.id == f"local-{name}"       # accepted, in no seed group
    _edit(path, f"id: local-{name}\n", f"id: {name}\n")
    [problem] = _problems(root)
    assert (problem.code, problem.file, problem.line) == ("bad-check-id", table.file, line)
    assert "g<N>-<name>" in problem.message and "local-<name>" in problem.message
    unknown = max(table.groups) + 1
    _edit(path, f"id: {name}\n", f"id: g{unknown}-{name}\n")
    [problem] = _problems(root)
    assert problem.code == "bad-check-id" and f"g{unknown}" in problem.message
