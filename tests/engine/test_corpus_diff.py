"""`groundrules diff`: an analyst sees exactly the cases an edit changes, before and after."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from groundrules import load_rulebook
from groundrules.corpus_diff import corpus_diff

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases"


def edited_root(tmp_path: Path, *edits: tuple[str, str]) -> Path:
    for d in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / d, tmp_path / d)
    table = tmp_path / "rules" / "support_reason.yaml"
    text = table.read_text(encoding="utf-8")
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    table.write_text(text, encoding="utf-8")
    return tmp_path


def test_no_edit_changes_nothing(rulebook):
    assert corpus_diff(rulebook, rulebook, CASES) == []


def test_a_detail_edit_shows_exactly_the_cases_whose_sentence_changed(tmp_path, rulebook):
    root = edited_root(tmp_path, ("缺失 {gaps|count} 个槽位", "缺 {gaps|count} 个槽位"))
    changes = corpus_diff(rulebook, load_rulebook(root), CASES)
    table = rulebook.table("support_reason")
    partial = [p.stem for p in sorted((CASES / "support_reason").glob("*.json"))
               if "partial_slot_coverage" in table.evaluate(json.loads(p.read_text(encoding="utf-8"))).codes]
    assert [c.case for c in changes] == partial and partial
    for change in changes:
        before = {r["code"]: r for r in change.before}
        after = {r["code"]: r for r in change.after}
        assert before["partial_slot_coverage"]["detail"].startswith("缺失 ")
        assert after["partial_slot_coverage"]["detail"].startswith("缺 ")


def test_a_priority_edit_reorders_reasons(tmp_path, rulebook):
    root = edited_root(tmp_path, ("  - scope_gap\n  - conflict_candidate\n", "  - conflict_candidate\n  - scope_gap\n"))
    changes = corpus_diff(rulebook, load_rulebook(root), CASES)
    for change in changes:
        assert [r["code"] for r in change.before] != [r["code"] for r in change.after]
        assert sorted(r["code"] for r in change.before) == sorted(r["code"] for r in change.after)


def test_the_command_against_a_folder_and_a_git_revision(tmp_path):
    root = edited_root(tmp_path, ("label: 检索引擎降级", "label: 检索引擎部分失败"))
    shutil.copytree(CASES, root / "tests" / "cases")
    run = subprocess.run([sys.executable, "-m", "groundrules.cli.main", "--rules", str(root), "diff",
                          "--base", str(ROOT), "--json"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    changes = json.loads(run.stdout)["data"]["changes"]
    assert changes and all(c["table"] == "support_reason" for c in changes)
    assert all(any(r["label"] == "检索引擎部分失败" for r in c["after"]) for c in changes)
    head = subprocess.run([sys.executable, "-m", "groundrules.cli.main", "diff", "--base", "HEAD"],
                          capture_output=True, text=True, cwd=ROOT)
    assert head.returncode == 0 and head.stdout.strip().endswith(")") and "case(s) changed" in head.stdout
    bad = subprocess.run([sys.executable, "-m", "groundrules.cli.main", "diff", "--base", "no-such-rev"],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr and len(bad.stderr.splitlines()) == 1
