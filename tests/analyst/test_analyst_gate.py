"""The analyst's gate (issue 12, item 1): `groundrules lint` + `groundrules test` green means done.

In a copy of the repository, the edits an analyst makes without Python: a new reason code (its
row with examples, its place in the priority, the contract's enum, a corpus case and an acceptance
check), another one inserted between two diagnostic codes, a new lock table (and the slot that
consumes its kind), a new finding state added to the `from:` lists of the existing transitions and
with a move into it. Each edit is placed by what the tables hold (tests/table_edits.py), not by
searching them for text. Then lint and test pass, each edit is live through the CLI, and the test modules that
own snapshots pass in the copy, the only other step being the reviewed snapshot update for the new
corpus case. The whole suite in the copy (minutes) is the extended test at the end; the default
run proves the same in seconds, because the tests outside the snapshot modules read what they need
from the tables, which lint and test have just checked.

The inner suites run with GROUNDRULES_GATE_INNER=1, which leaves this folder out (conftest.py).
"""
from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_inproc import run_cli
from table_edits import TableFile


ROOT = Path(__file__).resolve().parents[2]
NEW_CODE = "many_candidates"              # after the last diagnostic code: fires on a new corpus case
BETWEEN_CODE = "stale_evidence"           # between two diagnostic codes, with a corpus case of its own
NEW_CASE = "sufficient-many-candidates-guokao"
BETWEEN_CASE = "sufficient-stale-evidence-guokao"
NEW_STATE = "needs_review"


def _copy_repo(dest: Path) -> Path:
    """A checkout of the repository as it is (tracked and untracked files, not ignored ones),
    committed, so that the analyst's edits are uncommitted changes as in a clone."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    git = ["git", "-c", "user.name=analyst", "-c", "user.email=analyst@groundrules.invalid", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "before the analyst's edits"]):
        subprocess.run(git + args, cwd=dest, capture_output=True, check=True)
    return dest


def _widen_enum(repo: Path, after: str, code: str) -> None:
    """The contract's reason-code enum gains `code` right after `after` (the schema is JSON, ours)."""
    contract = repo / "schemas" / "knowledge-gateway.v1.schema.json"
    enum = json.loads(contract.read_text("utf-8"))["$defs"]["reason_code"]["enum"]
    assert after in enum and code not in enum
    text = contract.read_text("utf-8")
    assert text.count(f'"{after}",') == 1
    contract.write_text(text.replace(f'"{after}",', f'"{after}",\n        "{code}",'), encoding="utf-8")


def _add_code(repo: Path, code: str, after: str, label: str, row: str) -> None:
    """A diagnostic code: its output, its place in the priority right after `after`, its row with
    examples (after the last row), and the contract's enum."""
    table = TableFile(repo / "rules" / "support_reason.yaml")
    table.insert_after(("outputs", after), f"{code}: {{label: {label}, role: diagnostic}}")
    table.add_item(("priority",), code, after=table.at("priority").index(after))
    table.insert_after(("rows", len(table.at("rows")) - 1), row)
    _widen_enum(repo, after, code)


def _diagnostics(repo: Path) -> list[str]:
    table = TableFile(repo / "rules" / "support_reason.yaml")
    return [c for c in table.at("priority") if table.at("outputs", c).get("role") == "diagnostic"]


def _add_case(repo: Path, name: str, **metrics) -> None:
    """A corpus case: the bundled sufficient guokao case with other metrics."""
    case = json.loads((repo / "tests/cases/support_reason/sufficient-guokao-registration-time.json").read_text("utf-8"))
    case["metrics"].update(metrics)
    (repo / f"tests/cases/support_reason/{name}.json").write_text(
        json.dumps(case, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def _add_reason_code(repo: Path) -> None:
    """A diagnostic code after the last one, with a corpus case and an acceptance check."""
    _add_code(repo, NEW_CODE, _diagnostics(repo)[-1], "候选页面过多", f"""- id: {NEW_CODE}
  description: so many candidates that the evidence may be drowned among them
  when: {{field: metrics.candidate_count, ge: 10}}
  output:
    detail: 检索返回了 {{metrics.candidate_count}} 个候选页面，证据可能被淹没
  examples:
    - given: {{metrics: {{candidate_count: 12, readable_count: 12, evidence_count: 1}}}}
      fires: true
      output: {{detail: 检索返回了 12 个候选页面，证据可能被淹没}}
    - given: {{metrics: {{candidate_count: 9, readable_count: 9, evidence_count: 1}}}}
      fires: false""")
    _add_case(repo, NEW_CASE, candidate_count=12, readable_count=12)
    acceptance = TableFile(repo / "rules" / "support_reason_acceptance.yaml")
    acceptance.insert_after(("checks", len(acceptance.at("checks")) - 1), f"""- id: g4-many-candidates-is-a-diagnostic-only
  case: {NEW_CASE}
  expect:
    all:
      - {{field: primary, eq: all_required_slots_supported}}
      - {{field: reasons, any: {{all: [{{field: code, eq: {NEW_CODE}}}, {{field: detail, matches: "12 个候选页面"}}]}}}}""")


def _insert_reason_code_between_diagnostics(repo: Path) -> None:
    """The edit that once needed a Python change: a code placed between two diagnostic codes (the
    first two in the priority), with a corpus case it fires on."""
    first = _diagnostics(repo)[0]
    _add_code(repo, BETWEEN_CODE, first, "证据已过期", f"""- id: {BETWEEN_CODE}
  description: evidence older than its slot allows
  when: {{field: metrics.evidence_count, gt: 99}}
  output: {{detail: 证据已过期}}
  examples:
    - {{given: {{metrics: {{evidence_count: 100}}}}, fires: true, output: {{detail: 证据已过期}}}}
    - {{given: {{metrics: {{evidence_count: 1}}}}, fires: false}}""")
    _add_case(repo, BETWEEN_CASE, candidate_count=3, readable_count=3, evidence_count=120)


def _add_lock_table(repo: Path) -> None:
    (repo / "locks" / "postal_code.yaml").write_text("""kind: lock_patterns
id: postal_code
title: 邮政编码（postal code）
description: the label 邮编 (or 邮政编码) and six digits; six digits alone are no postal code
timeout_ms: 250
invalid_reasons:
  wrong_length: a postal code has six digits
patterns:
  - id: labelled
    kind: postal_code
    description: label + six digits
    regex: '(?:邮政编码|邮编)[ \\t\\u3000]*(?:[:：][ \\t\\u3000]*)?[0-9]{6}(?![0-9])'
    prefilter: ["邮编", "邮政编码"]
    counts_in:
      roles: [user, tool]
      states: [sent]
    normalize:
      - step: strip_labels
        labels: [邮政编码, 邮编]
    validate:
      - {check: length, min: 6, max: 6, reason: wrong_length}
    examples:
      - name: label and six digits
        text: "邮编：100080，寄到这里"
        locks:
          - {quote: "邮编：100080", start: 0, end: 9, normalized_value: "100080", valid: true}
      - name: the long label
        text: "邮政编码 518000"
        locks:
          - {quote: "邮政编码 518000", start: 0, end: 11, normalized_value: "518000", valid: true}
      - name: six digits alone
        text: "订单 100080 已发货"
        locks: []
""", encoding="utf-8")
    merge = TableFile(repo / "rules" / "merge.yaml")
    merge.insert_after(("slots", list(merge.at("slots"))[-1]), "postal_code: {label: 邮编, inherit: true, locks: "
                       "{kinds: [postal_code], required: true, match: normalized_value}}")


def _add_state(repo: Path) -> None:
    """A new epistemic state, added to the `from:` list of every existing transition that does not
    lead to it (the edit that once broke tests pinning those lists), and a move into it."""
    table = TableFile(repo / "rules" / "finding_states.yaml")
    states = ("machines", "epistemic", "states")
    table.insert_after(states + (list(table.at(*states))[-1],), f"{NEW_STATE}: {{label: 待复核}}")
    transitions = ("machines", "epistemic", "transitions")
    for i, move in enumerate(table.at(*transitions)):
        if move["to"] != NEW_STATE and NEW_STATE not in move["from"]:
            table.add_item(transitions + (i, "from"), NEW_STATE)
    table.insert_after(transitions + (len(table.at(*transitions)) - 1,),
                       f"- id: flag-for-review\n  from: [provisional, supported]\n  to: {NEW_STATE}")


def _env(repo: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(repo / "engine"), GROUNDRULES_GATE_INNER="1",
               PYTHONIOENCODING="utf-8")
    env.pop("PYTEST_ADDOPTS", None)
    return env


def _cli(repo: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """The command over the copy's tables (the copy's code is this checkout's)."""
    return run_cli("--rules", repo, *args, stdin=stdin, cwd=repo)


def _pytest(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """pytest in the copy, with the reviewed snapshot update the analyst runs."""
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "--snapshot-update", "-p", "no:cacheprovider", *args],
                          cwd=repo, env=_env(repo), capture_output=True, timeout=3600)


@pytest.fixture(scope="module")
def edited(tmp_path_factory) -> Path:
    if os.environ.get("GROUNDRULES_GATE_INNER"):
        pytest.fail("the gate test must not run inside its own inner suite")
    repo = _copy_repo(tmp_path_factory.mktemp("analyst") / "repo")
    before = repo.parent / "snapshots-before"
    shutil.copytree(repo / "snapshots", before)
    _add_reason_code(repo)
    _insert_reason_code_between_diagnostics(repo)
    _add_lock_table(repo)
    _add_state(repo)
    return repo


def test_lint_and_test_pass_after_the_edits(edited):
    lint = _cli(edited, "lint")
    report = lint.stdout.decode()
    assert lint.returncode == 0, report
    assert "lint: 0 error(s)" in report
    assert not [line for line in report.splitlines() if "[warning]" in line
                and any(name in line for name in ("postal_code", NEW_CODE, BETWEEN_CODE, NEW_STATE))], report
    test = _cli(edited, "test", "-v")
    text = test.stdout.decode()
    assert test.returncode == 0, text
    for new in (f"support_reason:{NEW_CODE}:1", f"support_reason:{NEW_CODE}:2", f"support_reason:{BETWEEN_CODE}:1",
                f"support_reason:{BETWEEN_CODE}:2", "postal_code:labelled:3",
                "support_reason.acceptance:g4-many-candidates-is-a-diagnostic-only"):
        assert f"ok {new}" in text, new


def test_each_edit_is_live(edited, tmp_path):
    explained = _cli(edited, "explain", str(edited / f"tests/cases/support_reason/{NEW_CASE}.json"))
    data = json.loads(explained.stdout)["data"]
    assert data["primary"] == "all_required_slots_supported"
    assert [r["code"] for r in data["reasons"]] == [NEW_CODE, "all_required_slots_supported"]
    between = _cli(edited, "explain", str(edited / f"tests/cases/support_reason/{BETWEEN_CASE}.json"))
    assert [r["code"] for r in json.loads(between.stdout)["data"]["reasons"]] == [BETWEEN_CODE,
                                                                                 "all_required_slots_supported"]

    locked = _cli(edited, "lock", "-", stdin=json.dumps({"id": "m1", "role": "user", "content": "邮编：100080"}))
    locks = json.loads(locked.stdout)["data"]["locks"]
    assert [(lock["kind"], lock["normalized_value"]) for lock in locks] == [("postal_code", "100080")]

    db = str(tmp_path / "ledger.db")
    common = ("--db", db, "--project", "p")
    logged = json.loads(_cli(edited, "call", *common, "log_finding", "-", stdin=json.dumps(
        {"claim_kind": "diagnosis", "statement": "批量为 32 时显存溢出", "retrieval_policy": "relevant",
         "scope": {"match": {"runtime.backend": "vLLM"}}})).stdout)
    finding_id, version = logged["data"]["finding_id"], logged["data"]["version"]

    def move(state: str) -> dict:
        nonlocal version
        envelope = json.loads(_cli(edited, "call", *common, "set_finding_state", "-", stdin=json.dumps(
            {"finding_id": finding_id, "expected_version": version, "epistemic_state": state,
             "reason": f"复核：改为 {state}"})).stdout)
        version = (envelope["data"] or {}).get("version", version)
        return envelope

    moves = [move(state) for state in ("provisional", NEW_STATE, "provisional", NEW_STATE)]
    assert [(m["data"] or m["error"]).get("epistemic_state") for m in moves] == [
        "provisional", NEW_STATE, "provisional", NEW_STATE], moves
    assert move("unassessed")["error"]["code"] == "INVALID_STATE_TRANSITION"
    assert move("contested")["error"]["code"] == "EVIDENCE_REQUIRED"     # the edited from: list lets it try


def test_the_snapshot_modules_pass_in_the_copy(edited):
    """The analyst's only other step: the reviewed snapshot update, which adds the new case (and the
    new code to the enum a malformed context's detail quotes), nothing else."""
    modules = sorted({str(p.parent.relative_to(edited / "snapshots")) + ".py"
                      for p in (edited / "snapshots").rglob("*.json")})
    assert modules, "no test module owns a snapshot"
    run = _pytest(edited, "-n", "0", *(f"tests/{m}" for m in modules))
    assert run.returncode == 0, run.stdout.decode(errors="replace")[-3000:]
    _only_the_new_case_changed(edited)


@pytest.mark.extended
def test_the_whole_suite_passes_in_the_copy(edited):
    """The same step, with every test of the suite run in the copy."""
    run = _pytest(edited)
    assert run.returncode == 0, run.stdout.decode(errors="replace")[-3000:]
    _only_the_new_case_changed(edited)


def _only_the_new_case_changed(edited: Path) -> None:
    before, after = edited.parent / "snapshots-before", edited / "snapshots"
    corpus = "support_reason/test_support_corpus/test_support_reason_corpus_snapshot.json"
    malformed = "support_reason/test_support_corpus/test_support_reason_malformed_snapshot.json"
    assert set(_changed_files(before, after)) <= {corpus, malformed}
    old, new = (json.loads((folder / corpus).read_text("utf-8")) for folder in (before, after))
    assert set(new) - set(old) == {NEW_CASE, BETWEEN_CASE}
    assert {k: v for k, v in new.items() if k not in (NEW_CASE, BETWEEN_CASE)} == old
    assert [r["code"] for r in new[NEW_CASE]["reasons"]] == [NEW_CODE, "all_required_slots_supported"]
    assert [r["code"] for r in new[BETWEEN_CASE]["reasons"]] == [BETWEEN_CODE, "all_required_slots_supported"]
    # a malformed context's detail quotes the contract's enum of codes: it gains the new ones, each
    # after the code it was inserted after, nothing else (spelt as the snapshot file spells it)
    diagnostics = _diagnostics(ROOT)
    widened = (before / malformed).read_text("utf-8")
    for anchor, code in ((diagnostics[-1], NEW_CODE), (diagnostics[0], BETWEEN_CODE)):
        quoted = f'\\"{anchor}\\", '
        assert quoted in widened
        widened = widened.replace(quoted, quoted + f'\\"{code}\\", ')
    assert (after / malformed).read_text("utf-8") == widened


def _changed_files(before: Path, after: Path) -> list[str]:
    out = []
    for path in sorted(set(_files(before)) | set(_files(after))):
        a, b = before / path, after / path
        if not (a.is_file() and b.is_file() and filecmp.cmp(a, b, shallow=False)):
            out.append(path)
    return out


def _files(folder: Path) -> list[str]:
    return [str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()]
