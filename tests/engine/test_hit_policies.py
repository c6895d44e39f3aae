"""Hit policies as data: every file in tests/cases/hit_policies/ holds a decision table and the rows
it must fire on each value, in order (or the error it must raise). The table goes through the real
loader, and every case runs untraced and traced: the two must decide alike."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from groundrules import GroundrulesError, load_rulebook

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases" / "hit_policies"
FILES = sorted(CASES.glob("*.yaml"))


def _spec(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _params():
    for path in FILES:
        for n, case in enumerate(_spec(path)["cases"]):
            yield pytest.param(path, case, id=f"{path.stem}:{n}:{case['description'][:50]}")


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """Every case file's table, compiled by the loader (priority sorting happens there)."""
    folder = tmp_path_factory.mktemp("hit_policies")
    out = {}
    for path in FILES:
        table_file = folder / path.name
        table_file.write_text(json.dumps(_spec(path)["table"], ensure_ascii=False), encoding="utf-8")
        book = load_rulebook(ROOT, files=[table_file])
        out[path] = book.table(_spec(path)["table"]["id"])
    return out


def test_every_hit_policy_of_the_metaschema_has_a_case_file():
    schema = json.loads((ROOT / "schemas" / "kinds" / "decision_table.schema.json").read_text(encoding="utf-8"))
    policies = set(schema["properties"]["hit_policy"]["enum"])
    covered = {_spec(p)["table"]["hit_policy"] for p in FILES}
    assert policies <= covered
    assert any("default" in _spec(p)["table"] for p in FILES)


@pytest.mark.parametrize("path, case", list(_params()))
def test_hit_policy_case(tables, path, case):
    table = tables[path]
    if "error" in case:
        for trace in (False, True):
            with pytest.raises(GroundrulesError) as exc:
                table.evaluate(case["given"], trace=trace)
            assert exc.value.code == case["error"]
        return
    plain = table.evaluate(case["given"])
    traced = table.evaluate(case["given"], trace=True)
    assert [f.row.id for f in plain.fired] == case["fired"]
    assert [(f.row.id, f.code, f.outputs) for f in traced.fired] == [(f.row.id, f.code, f.outputs) for f in plain.fired]
    if "outputs" in case:
        assert [f.outputs for f in plain.fired] == case["outputs"]
    # the trace has one note per row, and says of each exactly what the untraced run did
    notes = traced.trace
    assert sorted(n["row"] for n in notes) == sorted(r.id for r in table.rows)
    assert [n["row"] for n in notes if n["fired"]] == [r for r in case["fired"] if r != "default"]
    for note in notes:
        assert note["fired"] or ("skipped" in note) != ("failed" in note)
    if "skipped" in case:
        assert [n["row"] for n in notes if "skipped" in n] == case["skipped"]
