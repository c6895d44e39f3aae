"""The compiled rulebook: versioned by content, immutable, swapped only when a reload compiles."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from groundrules import Holder, RulesError, load_rulebook

ROOT = Path(__file__).resolve().parents[2]


def copy_root(tmp_path: Path) -> Path:
    for d in ("rules", "locks", "schemas"):
        if (ROOT / d).is_dir():
            shutil.copytree(ROOT / d, tmp_path / d)
    return tmp_path


def test_version_is_a_function_of_content(tmp_path):
    root = copy_root(tmp_path)
    first = load_rulebook(root).version
    table = root / "rules" / "support_reason.yaml"
    text = table.read_text(encoding="utf-8")
    table.write_text("# a comment changes nothing\n" + text, encoding="utf-8")
    assert load_rulebook(root).version == first
    table.write_text(text.replace("label: 检索引擎降级", "label: 检索引擎部分失败"), encoding="utf-8")
    assert load_rulebook(root).version != first


def test_version_is_stable_across_processes_and_hash_seeds():
    code = "import groundrules; print(groundrules.load_rulebook().version)"
    versions = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        versions.add(out.stdout.strip())
    assert len(versions) == 1


def test_tables_are_read_only(rulebook):
    with pytest.raises(TypeError):
        rulebook.tables["x"] = 1
    with pytest.raises(AttributeError):
        rulebook.table("support_reason").hit_policy = "first"


def test_reload_keeps_the_old_rulebook_when_the_new_one_is_broken(tmp_path):
    root = copy_root(tmp_path)
    holder = Holder(root)
    before = holder.current
    table = root / "rules" / "support_reason.yaml"
    table.write_text(table.read_text(encoding="utf-8").replace("hit_policy: output_order",
                                                               "hit_policy: output_ordr"), encoding="utf-8")
    with pytest.raises(RulesError) as exc:
        holder.reload()
    assert holder.current is before
    assert [p.code for p in exc.value.problems] == ["bad-value"]
    assert exc.value.problems[0].hint == "did you mean 'output_order'?"


def test_reload_swaps_when_the_new_rulebook_compiles(tmp_path):
    root = copy_root(tmp_path)
    holder = Holder(root)
    table = root / "rules" / "support_reason.yaml"
    table.write_text(table.read_text(encoding="utf-8").replace("label: 检索引擎降级", "label: 引擎降级"),
                     encoding="utf-8")
    fresh = holder.reload()
    assert holder.current is fresh
    assert fresh.table("support_reason").codes["engine_degraded"]["label"] == "引擎降级"


def test_every_problem_of_an_edit_is_reported_at_once(tmp_path):
    root = copy_root(tmp_path)
    table = root / "rules" / "support_reason.yaml"
    text = table.read_text(encoding="utf-8")
    text = text.replace("{field: conflict_status, eq: candidate}", "{field: conflict_status, eqq: candidate}")
    text = text.replace("{field: incomparable, empty: false}", "{field: incomparabel, empty: false}")
    table.write_text(text, encoding="utf-8")
    with pytest.raises(RulesError) as exc:
        load_rulebook(root)
    codes = sorted(p.code for p in exc.value.problems)
    assert codes == ["unknown-field", "unknown-operator"]
    for p in exc.value.problems:
        assert p.file == "rules/support_reason.yaml" and p.line > 1 and p.hint
