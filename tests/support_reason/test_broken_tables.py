"""Deliberately broken decision tables: each must fail the whole load with its problem at file:line.

Every case in tests/cases/broken_tables/<case>/ is laid out like a rules root (`rules/*.yaml`)
plus `expect.yaml` naming the problem `code`, the `file` (relative to the root), the `line`,
optionally the `column`, and optionally a `hint` fragment (the did-you-mean the analyst needs) and a
`message` fragment (a duplicate names its first use's line).
`key` is the dotted key path the problem must name. A known loader gap is kept as a strict xfail
through `xfail: {load|key: reason}` in expect.yaml, so it turns into a failure once fixed.
The repo's schemas/ is copied next to the case's rules/ into a temporary root, so the cases never
carry their own copy of the contracts.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from cli_inproc import run_cli
from groundrules import Holder, RulesError, explain, load_rulebook
from groundrules.core import canonical

from sr_cases import CASES, ROOT, case_path

BROKEN = CASES / "broken_tables"
NAMES = sorted(p.name for p in BROKEN.iterdir() if p.is_dir())
EXPECT_KEYS = {"code", "file", "line", "column", "key", "hint", "message", "xfail"}
SEED_SAMPLE = case_path("support_reason", "partial-engine-error-shenlun-count")

# The problems the corpus must keep covering (issue 2, item 8).
REQUIRED_CODES = {
    "yaml-syntax", "duplicate-key", "unknown-kind", "missing-key", "unknown-key", "unknown-operator",
    "bad-regex", "bad-argument", "unknown-field", "priority-missing-code", "duplicate-code",
    "unknown-code", "unknown-filter", "bad-template", "unknown-binding", "code-not-in-contract",
    "duplicate-row-id", "duplicate-table-id",
}


def expect(name: str) -> dict:
    return yaml.safe_load((BROKEN / name / "expect.yaml").read_text(encoding="utf-8"))


def cases(aspect: str, only=lambda exp: True) -> list:
    """The case names as pytest params, strict-xfail where expect.yaml records a known gap for `aspect`."""
    out = []
    for name in NAMES:
        exp = expect(name)
        if not only(exp):
            continue
        known = exp.get("xfail") or {}
        reason = known.get(aspect) or known.get("load")        # a table that loads names no key either
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(name, marks=marks, id=name))
    return out


def build_root(base: Path, rules_from: list[Path]) -> Path:
    """A rules root at `base`: the repo's schemas/ plus the tables of every folder in `rules_from`."""
    shutil.copytree(ROOT / "schemas", base / "schemas")
    swap_rules(base, rules_from)
    return base


def swap_rules(root: Path, rules_from: list[Path]) -> None:
    """Replace root/rules/ by the tables of every folder in `rules_from`."""
    shutil.rmtree(root / "rules", ignore_errors=True)
    (root / "rules").mkdir()
    for folder in rules_from:
        shutil.copytree(folder, root / "rules", dirs_exist_ok=True)


def matching(problems, exp: dict) -> list:
    return [p for p in problems if p.code == exp["code"] and p.file == exp["file"] and p.line == exp["line"]
            and ("column" not in exp or p.column == exp["column"])]


@pytest.fixture(scope="module")
def good_rules(tmp_path_factory) -> Path:
    """A folder holding only the bundled support_reason table (other parts' tables stay out)."""
    folder = tmp_path_factory.mktemp("good_rules")
    shutil.copy(ROOT / "rules" / "support_reason.yaml", folder / "support_reason.yaml")
    return folder


# --- the corpus itself -----------------------------------------------------------------------

def test_broken_table_corpus_covers_the_required_problems():
    assert len(NAMES) >= 18
    assert sorted(REQUIRED_CODES - {expect(n)["code"] for n in NAMES}) == []


@pytest.mark.parametrize("name", NAMES)
def test_case_is_well_formed(name):
    exp = expect(name)
    assert {"code", "file", "line"} <= set(exp) <= EXPECT_KEYS
    assert set(exp.get("xfail") or {}) <= {"load", "key"}
    assert exp["file"].startswith("rules/") and (BROKEN / name / exp["file"]).is_file()
    assert isinstance(exp["line"], int) and exp["line"] >= 1
    assert not (BROKEN / name / "schemas").exists()


def _problems(name: str, tmp_path: Path) -> tuple:
    with pytest.raises(RulesError) as caught:
        load_rulebook(build_root(tmp_path, [BROKEN / name / "rules"]))
    return caught.value.problems


# --- the loader ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", cases("load"))
def test_load_fails_with_the_expected_problem(name, tmp_path):
    exp = expect(name)
    problems = _problems(name, tmp_path)
    found = matching(problems, exp)
    assert found, f"expected {exp}, got:\n" + "\n".join(map(str, problems))
    assert all(p.message for p in found)
    if "hint" in exp:
        assert any(p.hint and exp["hint"] in p.hint for p in found), [p.hint for p in found]
    if "message" in exp:
        assert any(exp["message"] in p.message for p in found), [p.message for p in found]
    assert all(p.severity == "error" for p in found)


@pytest.mark.parametrize("name", cases("key", only=lambda exp: "key" in exp))
def test_problem_names_its_key(name, tmp_path):
    exp = expect(name)
    found = matching(_problems(name, tmp_path), exp)
    assert [p.key for p in found if p.key == exp["key"]], [str(p) for p in found]


@pytest.mark.parametrize("name", cases("load"))
def test_one_bad_table_fails_the_whole_load_and_reload_keeps_the_old_rulebook(name, tmp_path, good_rules):
    root = build_root(tmp_path, [good_rules])
    holder = Holder(root)
    old = holder.current
    sample = json.loads(SEED_SAMPLE.read_text(encoding="utf-8"))
    before = canonical.dumps(explain(sample, old))

    swap_rules(root, [good_rules, BROKEN / name / "rules"])       # a valid table beside the broken one
    with pytest.raises(RulesError) as caught:
        holder.reload()
    assert matching(caught.value.problems, expect(name))
    assert holder.current is old
    assert sorted(holder.current.tables) == ["support_reason"]
    assert canonical.dumps(explain(sample, holder.current)) == before
    assert explain(sample, holder.current)["primary"] == "partial_slot_coverage"

    swap_rules(root, [good_rules])                                 # fixed: the next reload swaps
    assert holder.reload() is holder.current is not old


# --- the CLI ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", cases("load"))
def test_lint_cli_prints_path_line_col_code_and_fails(name, tmp_path):
    exp = expect(name)
    root = build_root(tmp_path / "root", [BROKEN / name / "rules"])
    run = run_cli("--rules", root, "lint", cwd=tmp_path)
    out, err = run.stdout.decode("utf-8"), run.stderr.decode("utf-8")
    assert run.returncode != 0
    assert "Traceback" not in out + err
    column = str(exp["column"]) if "column" in exp else r"\d+"
    pattern = rf"^{re.escape(exp['file'])}:{exp['line']}:{column}: {re.escape(exp['code'])}: \S"
    assert re.search(pattern, out, re.MULTILINE), out + err
