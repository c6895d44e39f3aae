"""`groundrules report`: what the page says about each table, read back from its HTML."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest
import yaml

from groundrules import load_rulebook, report
from groundrules.corpus import decision_tables
from groundrules.corpus_diff import corpus_diff
from page_reader import Page

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases"
CLI = [sys.executable, "-m", "groundrules.cli.main"]


@pytest.fixture(scope="module")
def page(rulebook) -> Page:
    return Page(report.render(rulebook, CASES))


def fired_by_corpus(table, folder: Path) -> dict:
    """row id -> number of cases in `folder` on which the table fires it (read with the engine)."""
    counts: dict = {}
    for path in sorted(folder.glob("*.json")):
        for f in table.evaluate(json.loads(path.read_text(encoding="utf-8"))).fired:
            counts[f.row.id] = counts.get(f.row.id, 0) + 1
    return counts


def edited(tmp_path: Path, file: str, *edits: tuple[str, str]) -> Path:
    if not (tmp_path / "rules").exists():
        for d in ("rules", "locks", "schemas"):
            shutil.copytree(ROOT / d, tmp_path / d)
    path = tmp_path / file
    text = path.read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return tmp_path


def test_every_decision_table_is_a_grid_of_all_its_rows(rulebook, page):
    for ref in decision_tables(rulebook):
        section = page.sections[ref.id]
        assert "decision" in section["class"]
        expected = [r.id for r in ref.table.rows] + (["default"] if ref.table.default is not None else [])
        assert [r["id"] for r in section["rows"]] == expected, ref.id


def test_coverage_and_example_figures_match_the_corpus_and_the_examples(rulebook, page):
    table = rulebook.table("support_reason")
    folder = CASES / "support_reason"
    total = len(list(folder.glob("*.json")))
    counts = fired_by_corpus(table, folder)
    rows = {r["id"]: r for r in page.sections["support_reason"]["rows"]}
    for row in table.rows:
        assert rows[row.id]["cells"]["cov"] == f"{counts.get(row.id, 0)} / {total}", row.id
        assert ("uncovered" in rows[row.id]["class"]) == (row.id not in counts)
        assert rows[row.id]["cells"]["ex"] == f"✓ {len(row.examples)}/{len(row.examples)}"


def test_tables_without_a_corpus_say_so(rulebook, page):
    for ref in decision_tables(rulebook):
        rows = page.sections[ref.id]["rows"]
        if (CASES / ref.id).is_dir() or ref.run_by:
            assert all(r["cells"]["cov"] != "no corpus" for r in rows), ref.id
        else:
            assert all(r["cells"]["cov"] == "no corpus" for r in rows), ref.id


def test_merge_tables_are_covered_by_the_fold_corpus(rulebook, page):
    policy = rulebook.of_kind("merge_policy")[0]
    payloads = sum(len(json.loads(p.read_text(encoding="utf-8"))) for p in sorted((CASES / "fold").glob("*.json")))
    rows = {r["id"]: r["cells"]["cov"] for r in page.sections[policy.resolve.id]["rows"]}
    assert rows["first_value"].endswith(f" / {payloads}") and not rows["first_value"].startswith("0 ")


def test_transition_tables_are_drawn_and_lock_tables_list_their_patterns(rulebook, page):
    for table in rulebook.of_kind("transition_table"):
        section = page.sections[table.id]
        moves = [(t.id, src) for m in table.machines.values() for t in m.transitions for src in t.sources]
        assert len(section["transitions"]) == len(moves)
        assert sorted(s for s, _ in section["states"]) == sorted(s for m in table.machines.values() for s in m.states)
    for table in rulebook.of_kind("lock_patterns"):
        assert [p for p, _ in page.sections[table.id]["patterns"]] == [p.id for p in table.patterns]


def test_the_page_needs_no_network_and_no_other_file(rulebook):
    html = report.render(rulebook, CASES)
    assert all(ref.startswith("#") for ref in Page(html).refs)
    assert not re.search(r"<link\b|<img\b|@import|url\((?!#)|https?://", html)


def test_same_tables_give_the_same_bytes_across_processes(tmp_path):
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / seed
        run = subprocess.run(CLI + ["report", "--out", str(out)], capture_output=True, text=True, cwd=ROOT,
                             env=dict(os.environ, PYTHONHASHSEED=seed))
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith(f"wrote {out / 'index.html'}")
        outs.append((out / "index.html").read_bytes())
    assert outs[0] == outs[1]


def test_with_a_base_the_rows_and_cases_the_edit_changes_are_highlighted(tmp_path, rulebook):
    root = edited(tmp_path, "rules/support_reason.yaml",
                  ("  - scope_gap\n  - conflict_candidate\n", "  - conflict_candidate\n  - scope_gap\n"),
                  ("label: 检索引擎降级", "label: 检索引擎部分失败"))
    after = load_rulebook(root)
    section = Page(report.render(after, CASES, rulebook)).sections["support_reason"]
    table = after.table("support_reason")
    touched = {"scope_gap", "conflict_candidate", "engine_degraded"}
    assert {r["id"] for r in section["rows"] if "changed" in r["class"]} == \
        {r.id for r in table.rows if r.code in touched}
    diff = corpus_diff(rulebook, after, CASES)
    changed = next(t for t in diff["decision_tables"] if t["table"] == "support_reason")["changes"]
    assert changed and all(f"\n  {c['case']}\n" in "\n" + section["changes"] for c in changed)
    assert "- 检索引擎降级" in section["changes"] and "+ 检索引擎部分失败" in section["changes"]


def test_with_a_base_edited_moves_and_patterns_are_highlighted(tmp_path, rulebook):
    root = edited(tmp_path, "rules/finding_states.yaml",
                  ("        via: [set_finding_state]\n      - id: archive",
                   "        via: [set_finding_state, withdraw_finding]\n      - id: archive"))
    text = (ROOT / "locks" / "cn_mobile.yaml").read_text(encoding="utf-8")
    sep_line = next(line for line in text.splitlines() if line.strip().startswith("sep:"))   # the separators
    edited(root, "locks/cn_mobile.yaml", (sep_line, sep_line.replace("–—―", "–―")))
    html = report.render(load_rulebook(root), CASES, rulebook)
    page = Page(html)
    machines = page.sections["finding_states"]["transitions"]
    assert {t for t, cls in machines if "changed" in cls} == {"withdraw"}
    uses_sep = {f"cn_mobile.{p['id']}" for p in yaml.safe_load(text)["patterns"] if "{sep}" in str(p)}
    assert "cn_mobile.mobile" in uses_sep
    assert {p for p, cls in page.sections["cn_mobile"]["patterns"] if "changed" in cls} == uses_sep
    shown = unescape(html)
    assert "contact/em_dash_typed" in shown and '- cn_mobile.mobile [3:16] "150—1234—5678"' in shown


def test_the_command_refuses_a_file_as_out_and_a_bad_base_in_one_line(tmp_path):
    afile = tmp_path / "x"
    afile.write_text("", encoding="utf-8")
    for args in (["--out", str(afile)], ["--out", str(tmp_path / "o"), "--base", "no-such-rev"]):
        run = subprocess.run(CLI + ["report", *args], capture_output=True, text=True, cwd=ROOT)
        assert run.returncode == 1 and "Traceback" not in run.stderr and len(run.stderr.splitlines()) == 1
    assert not (tmp_path / "o" / "index.html").exists()
