"""Roles in transitions: a move its transition keeps for some roles is refused to any other caller,
on every path (the caller's role reaches the check through Service.call: library and CLI here, MCP
and HTTP adapters call the same Service.call); guards read the role as the fact `role`."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from groundrules import Caller, FindingLedger, Service, load_rulebook
from groundrules.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENT = {"source_kind": "experiment_run", "source_ref": "run:1", "excerpt": "复现通过",
              "relation": "supports", "method": "experiment"}
SUPPORTED = {"claim_kind": "diagnosis", "statement": "温度漂移", "epistemic_state": "supported", "evidence": [EXPERIMENT]}


def reviewer_only_support(tmp_path: Path, extra: str = "") -> tuple[Path, str, str]:
    """A copy of the tables whose `support` move only the last role of roles.yaml may make
    (the analyst's edit: a reviewer-only epistemic state)."""
    root = tmp_path / "tables"
    for d in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / d, root / d)
    book = load_rulebook(ROOT)
    roles = sorted(book.table("roles").roles)
    allowed, other = roles[-1], roles[0]
    path = root / "rules" / "finding_states.yaml"
    text = path.read_text(encoding="utf-8")
    old = "        to: supported\n        guards: [independent-support, revalidation-brings-support]\n"
    assert text.count(old) == 1
    path.write_text(text.replace(old, old + f"        roles: [{allowed}]\n" + extra), encoding="utf-8")
    return root, allowed, other


def moves(root: Path, db: Path, role: str) -> dict:
    book = load_rulebook(root, cache=False)
    service = Service(book, findings=FindingLedger(db, rulebook=book))
    caller = Caller("someone", role, ("p1",))
    return service.call("log_finding", SUPPORTED, caller)


def test_a_role_limited_move_is_refused_to_other_roles_through_the_registry(tmp_path):
    root, allowed, other = reviewer_only_support(tmp_path)
    refused = moves(root, tmp_path / "a.db", other)
    book = load_rulebook(root, cache=False)
    table = book.table("finding_states")
    assert refused["ok"] is False and refused["error"]["code"] == table.role_refusal_code
    assert allowed in refused["error"]["message"] and other in refused["error"]["message"]
    assert moves(root, tmp_path / "b.db", allowed)["ok"] is True


def test_the_cli_gives_the_same_refusal(tmp_path, capsys):
    root, allowed, other = reviewer_only_support(tmp_path)
    db = tmp_path / "c.db"
    args = tmp_path / "log.json"
    args.write_text(json.dumps(SUPPORTED), encoding="utf-8")
    common = ["--rules", str(root)]
    tail = ["--db", str(db), "--project", "p1", "--operator", "someone"]
    main(common + ["call", "log_finding", str(args), "--role", other] + tail)
    cli = json.loads(capsys.readouterr().out)
    assert cli["ok"] is False
    library = moves(root, tmp_path / "d.db", other)
    assert cli["error"] == library["error"]


def test_a_guard_reads_the_callers_role(tmp_path):
    root, allowed, other = reviewer_only_support(tmp_path)
    path = root / "rules" / "finding_states.yaml"
    text = path.read_text(encoding="utf-8").replace(f"        roles: [{allowed}]\n", "")
    text = text.replace("    requires: [record-is-active]\n", "    requires: [record-is-active, caller-is-allowed]\n", 1)
    text = text.replace("\nguards:\n", f"""\nguards:\n  caller-is-allowed:
    when: {{field: role, eq: {allowed}}}
    code: EVIDENCE_REQUIRED
    message:
      zh: "只有 {allowed} 可以变更认知状态（调用者：{{role}}）"
      en: "only {allowed} may change the epistemic state (the caller: {{role}})"
    examples:
      - {{given: {{role: {allowed}}}, passes: true}}
      - {{given: {{role: {other}}}, passes: false}}
""", 1)
    path.write_text(text, encoding="utf-8")
    refused = moves(root, tmp_path / "e.db", other)
    assert refused["error"]["code"] == "EVIDENCE_REQUIRED" and refused["error"]["guard"] == "caller-is-allowed"
    assert other in refused["error"]["message"]
    assert moves(root, tmp_path / "f.db", allowed)["ok"] is True


def test_a_role_no_role_table_declares_is_a_dangling_reference(tmp_path):
    from groundrules.analyst.lint import lint
    root, allowed, _ = reviewer_only_support(tmp_path)
    path = root / "rules" / "finding_states.yaml"
    text = path.read_text(encoding="utf-8")
    at = text.index(f"roles: [{allowed}]", text.index("to: supported\n"))
    path.write_text(text[:at] + f"roles: [{allowed}x]" + text[at + len(f"roles: [{allowed}]"):], encoding="utf-8")
    [p] = [p for p in lint(root).problems if p.code == "dangling-reference"]
    assert (p.file, p.line) == ("rules/finding_states.yaml", text[:at].count("\n") + 1) and f"'{allowed}'" in p.hint


def test_bundled_role_limited_moves_have_examples_both_ways():
    book = load_rulebook(ROOT)
    table = book.table("finding_states")
    limited = [(name, t) for name, m in table.machines.items() for t in m.transitions if t.roles]
    assert limited
    for name, t in limited:
        results = {ex.get("role"): ex["result"] for ex in table.examples
                   if ex["machine"] == name and ex["to"] == t.to and ex["from"] in t.sources}
        assert any(r in t.roles and res == "ok" for r, res in results.items()), t.id
        assert any(r not in t.roles and res == table.role_refusal_code for r, res in results.items()), t.id
