"""`$.name` inside a list test (issue 36, item 2): a row comparing an item with a field of the whole
input loads, fires as the grammar says, and the trace and the report show what it read."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_inproc import run_cli
from groundrules import load_rulebook
from table_edits import TableFile

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "tests/cases/support_reason/sufficient-guokao-registration-time.json"


def _root(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "root"
    for d in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / d, root / d)
    table = TableFile(root / "rules" / "support_reason.yaml")
    rows = table.at("rows")
    code = next(c for c in table.at("priority") if table.at("outputs", c).get("role") == "diagnostic")
    row = f"{code}.quotes_the_query"
    table.insert_after(("rows", len(rows) - 1), f"- id: {row}\n  code: {code}\n"
                       "  when: {field: evidence, any: {field: quote, eq: {field: $.query}}}")
    return root, row


def test_a_row_reading_the_input_from_inside_a_list_fires_and_is_traced(tmp_path):
    root, row = _root(tmp_path)
    case = json.loads(CASE.read_text("utf-8"))
    table = load_rulebook(root, cache=False).table("support_reason")
    assert row not in [f.row.id for f in table.evaluate(case).fired]
    case["evidence"][0]["quote"] = case["query"]
    assert row in [f.row.id for f in table.evaluate(case).fired]
    case["evidence"][0]["quote"] = "另一句话"
    (tmp_path / "case.json").write_text(json.dumps(case, ensure_ascii=False), encoding="utf-8")
    traced = run_cli("--rules", root, "eval", "support_reason", tmp_path / "case.json", "--trace").stdout.decode()
    said = traced[traced.index(f"not fired {row}"):]
    assert f'{{"field": "$.query", "read": {json.dumps(case["query"], ensure_ascii=False)}}}: read 另一句话' in said


def test_the_report_writes_the_outer_reference_in_the_row(tmp_path):
    root, row = _root(tmp_path)
    done = run_cli("--rules", root, "report", "--out", tmp_path / "report")
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "report" / "index.html").read_text("utf-8")
    assert "(quote = $.query)" in page[page.index(row):]
