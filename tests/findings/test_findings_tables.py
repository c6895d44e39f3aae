"""The ledger's tables: inline examples pass, lint finds broken state machines, tables agree."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from findings_support import ROOT, TABLES, open_client
from groundrules import RulesError, load_rulebook
from groundrules.core.examples import run_all
from groundrules.analyst.lint import lint


def test_every_inline_example_of_the_ledger_tables_passes(book):
    outcomes = [o for o in run_all(book)]
    assert outcomes and [o.id for o in outcomes if not o.ok] == []
    assert {o.id.split(":")[0] for o in outcomes} == {"finding_states", "applicability", "findings_material_change",
                                                       "findings_warnings", "independent_support"}


def test_the_shipped_tables_lint_clean():
    report = lint(ROOT, TABLES)
    assert [(p.code, p.key) for p in report.problems] == []


def test_tables_agree_with_each_other(book):
    vocab, states = book.table("findings_vocabulary"), book.table("finding_states")
    epistemic = states.machine("epistemic").states
    assert {r["to"] for r in vocab.revalidation_results.values()} <= set(epistemic)
    assert book.table("applicability").hit_policy == "first"
    assert {name for name, spec in vocab.finding_relations.items() if spec["acyclic"]} >= {"supersedes", "depends_on"}


BROKEN = """
kind: transition_table
id: broken_states
refusal_code: INVALID_STATE_TRANSITION
messages: {not_allowed: {zh: "no", en: "no"}, not_via: {zh: "no", en: "no"}}
machines:
  m:
    initial: a
    terminal: [d]
    states: {a: {}, b: {}, c: {}, d: {}, island: {}}
    transitions:
      - {id: ab, from: [a], to: b}
      - {id: bc, from: [b], to: c}
      - {id: da, from: [d], to: a}
guards:
  never-used:
    when: {field: x, eq: 1}
    code: EVIDENCE_REQUIRED
    message: {zh: "x", en: "x"}
"""


def _table_root(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "root"
    (root / "rules").mkdir(parents=True)
    (root / "schemas").symlink_to(ROOT / "schemas")
    (root / "rules" / "t.yaml").write_text(text, encoding="utf-8")
    return root


def test_lint_reports_unreachable_dead_end_and_terminal_exit_states(tmp_path):
    root = _table_root(tmp_path, BROKEN)
    report = lint(root, [root / "rules" / "t.yaml"])
    found = sorted((p.code, p.key) for p in report.problems)
    assert found == [
        ("dead-end-state", "machines.m.states.c"),
        ("dead-end-state", "machines.m.states.island"),
        ("failing-example", "guards.never-used"),          # the guard has no example: `test` fails it
        ("terminal-has-exit", "machines.m.terminal"),
        ("unreachable-state", "machines.m.states.d"),
        ("unreachable-state", "machines.m.states.island"),
        ("unused-guard", "guards.never-used"),
    ]
    assert report.failed


@pytest.mark.parametrize("edit, code", [
    (("to: b}", "to: bb}"), "unknown-state"),
    (("initial: a", "initial: z"), "unknown-state"),
    (("code: EVIDENCE_REQUIRED", "code: EVIDENCE_MISSING"), "code-not-in-contract"),
    (("{id: ab, from: [a], to: b}", "{id: ab, from: [a], to: b, guards: [nope]}"), "unknown-guard"),
    (("{id: bc, from: [b], to: c}", "{id: bc, from: [b], to: b}"), "self-transition"),
    (("messages: {not_allowed: {zh: \"no\", en: \"no\"}, not_via: {zh: \"no\", en: \"no\"}}",
      "messages: {not_allowed: {zh: \"no\", en: \"no\"}}"), "missing-message"),
])
def test_broken_tables_do_not_load(tmp_path, edit, code):
    text = BROKEN.replace(*edit).replace("refusal_code:", "codes_enum: finding-ledger.v1.schema.json#/$defs/error_code\n"
                                                          "refusal_code:")
    root = _table_root(tmp_path, text)
    with pytest.raises(RulesError) as info:
        load_rulebook(root, [root / "rules" / "t.yaml"])
    assert code in [p.code for p in info.value.problems]


def test_an_undefined_state_is_one_problem_at_its_line_with_no_cascade(tmp_path):
    """A move into a state the machine lacks is reported there, once: the table's examples, which
    name the machine, are not reported as naming an unknown machine (issue 36, item 4)."""
    text = BROKEN + """examples:
  - {machine: m, from: a, to: b, given: {}, result: ok}
  - {machine: m, from: b, to: c, given: {}, result: ok}
"""
    root = _table_root(tmp_path, text.replace("to: b}", "to: bb}"))
    with pytest.raises(RulesError) as info:
        load_rulebook(root, [root / "rules" / "t.yaml"])
    assert [(p.code, p.key) for p in info.value.problems] == [("unknown-state", "machines.m.transitions[0].to")]
    root = _table_root(tmp_path / "other", text.replace("machine: m, from: a", "machine: n, from: a"))
    with pytest.raises(RulesError) as info:                 # a machine really unknown is still named
        load_rulebook(root, [root / "rules" / "t.yaml"])
    assert [p.code for p in info.value.problems] == ["unknown-machine"]


def test_guard_fields_are_checked_against_the_facts_contract(tmp_path):
    text = (ROOT / "rules" / "finding_states.yaml").read_text(encoding="utf-8").replace(
        "field: finding.lifecycle_state, eq: active", "field: finding.lifecycel_state, eq: active")
    root = _table_root(tmp_path, text)
    with pytest.raises(RulesError) as info:
        load_rulebook(root, [root / "rules" / "t.yaml"])
    problem = next(p for p in info.value.problems if p.code == "unknown-field")
    assert "finding.lifecycle_state" in problem.hint
    assert "declare it in schemas/" in problem.hint        # the same field hints as decision tables


def test_a_guard_without_examples_fails_groundrules_test(tmp_path):
    text = (ROOT / "rules" / "finding_states.yaml").read_text(encoding="utf-8")
    start = text.index("    examples:\n      - given: {finding: {lifecycle_state: active}}")
    end = text.index("  independent-support:")
    root = _table_root(tmp_path, text[:start] + text[end:])
    book = load_rulebook(root, [root / "rules" / "t.yaml"])
    failing = [o.id for o in run_all(book) if not o.ok]
    assert failing == ["finding_states:record-is-active"]


def test_vocabulary_changes_reach_the_service(tmp_path, book):
    """An analyst adds a claim kind in the table; the ledger accepts it without a code change."""
    root = tmp_path / "root"
    (root / "rules").mkdir(parents=True)
    (root / "schemas").symlink_to(ROOT / "schemas")
    for table in TABLES:
        shutil.copy(table, root / "rules" / table.name)
    vocab = root / "rules" / "findings_vocabulary.yaml"
    vocab.write_text(vocab.read_text(encoding="utf-8").replace(
        "  procedure: {label: 操作步骤}", "  procedure: {label: 操作步骤}\n  benchmark_result: {label: 基准结果}"),
        encoding="utf-8")
    edited = load_rulebook(root)
    args = {"claim_kind": "benchmark_result", "statement": "吞吐 1200 req/s"}
    assert open_client(tmp_path / "a.db", rulebook=edited).call("log_finding", args)["ok"] is True
    assert open_client(tmp_path / "b.db", rulebook=book).call("log_finding", args)["error"]["code"] == "INVALID_ARGUMENT"
