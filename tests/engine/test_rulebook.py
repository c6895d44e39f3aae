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


def test_version_covers_the_schemas(tmp_path):
    """A contract edit changes what explain accepts, so it changes the version too."""
    root = copy_root(tmp_path)
    first = load_rulebook(root).version
    contract = root / "schemas" / "knowledge-gateway.v1.schema.json"
    contract.write_text(contract.read_text(encoding="utf-8").replace('"minimum": 0', '"minimum": 1', 1),
                        encoding="utf-8")
    assert load_rulebook(root).version != first


@pytest.mark.parametrize("setup, code, line", [
    (lambda s: (s / "kinds" / "decision_table.schema.json").write_text("{bad", encoding="utf-8"), "bad-schema", 1),
    (lambda s: (s / "x.schema.json").write_text('{"a": 1,\n "b": NaN}', encoding="utf-8"), "bad-schema", 1),
    (lambda s: (s / "x.schema.json").write_text("[]", encoding="utf-8"), "bad-schema", 1),
    (lambda s: (s / "x.schema.json").mkdir(), "unreadable", 1),
    (lambda s: (s / "x.schema.json").write_bytes(b'{"title": "\xff"}'), "unreadable", 1),
])
def test_a_broken_schema_file_is_a_located_problem(tmp_path, setup, code, line):
    root = copy_root(tmp_path)
    setup(root / "schemas")
    with pytest.raises(RulesError) as exc:
        load_rulebook(root)
    assert [(p.code, p.line) for p in exc.value.problems] == [(code, line)]
    assert exc.value.problems[0].file.startswith("schemas/")


def test_a_metaschema_jsonschema_cannot_apply_fails_the_load_naming_it(tmp_path):
    root = copy_root(tmp_path)
    kind = root / "schemas" / "kinds" / "decision_table.schema.json"
    kind.write_text(kind.read_text(encoding="utf-8").replace('"type": "string"', '"type": "strng"'),
                    encoding="utf-8")
    with pytest.raises(RulesError) as exc:
        load_rulebook(root)
    assert {p.code for p in exc.value.problems} == {"bad-schema"}     # kinds that $ref it fail too
    assert "schemas/kinds/decision_table.schema.json" in {p.file for p in exc.value.problems}
    # lint goes further and names the rule that is broken
    from groundrules.analyst.lint import lint
    report = lint(root)
    assert any(p.code == "bad-schema" and "properties" in p.key for p in report.problems)


def test_the_bundled_schemas_are_valid_json_schemas():
    from groundrules.core.tables import load_schemas, schema_problems
    assert schema_problems(load_schemas(ROOT)) == []


def test_one_mistake_is_reported_once(tmp_path):
    (tmp_path / "t.yaml").write_text("base: &b {kind: decision_table}\n<<: *b\nid: t\n", encoding="utf-8")
    with pytest.raises(RulesError) as exc:
        load_rulebook(ROOT, files=[tmp_path / "t.yaml"])
    assert len(exc.value.problems) == len(set(exc.value.problems))
