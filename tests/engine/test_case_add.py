"""`groundrules case add` (issue 36, item 1): a corpus case is added by a command, checked against
the table's contract, written as the corpus files are, and then read by lint's coverage."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_inproc import run_cli
from said import said

ROOT = Path(__file__).resolve().parents[2]
TABLE = "support_reason"


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for folder in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / folder, root / folder)
    shutil.copytree(ROOT / "tests" / "cases" / TABLE, root / "tests" / "cases" / TABLE)
    return root


def _a_case() -> Path:
    return sorted((ROOT / "tests" / "cases" / TABLE).glob("*.json"))[0]


def test_a_case_is_added_as_the_corpus_writes_them_and_names_the_rows_it_fires(tmp_path):
    root = _root(tmp_path)
    source = _a_case()
    done = run_cli("--rules", root, "case", "add", TABLE, source, "--name", "added-by-the-analyst")
    assert done.returncode == 0, done.stderr
    written = root / "tests" / "cases" / TABLE / "added-by-the-analyst.json"
    assert written.read_bytes() == source.read_bytes()            # the corpus's own layout
    printed = done.stdout.decode()
    assert printed.startswith(f"added tests/cases/{TABLE}/added-by-the-analyst.json: fires ")
    from groundrules import load_rulebook
    fired = [f.row.id for f in load_rulebook(root).table(TABLE).evaluate(json.loads(source.read_text("utf-8"))).fired]
    assert printed.strip().endswith(", ".join(fired))
    again = run_cli("--rules", root, "case", "add", TABLE, source, "--name", "added-by-the-analyst")
    assert again.returncode == 1 and said("case.exists", table=TABLE, name="added-by-the-analyst") \
        in again.stderr.decode("utf-8")


def test_a_value_outside_the_contract_or_an_unknown_table_is_refused_and_nothing_written(tmp_path):
    root = _root(tmp_path)
    before = sorted(p.name for p in (root / "tests" / "cases" / TABLE).iterdir())
    case = json.loads(_a_case().read_text("utf-8"))
    case["metrics"] = "many"                         # an object in the contract
    bad = run_cli("--rules", root, "case", "add", TABLE, "-", "--name", "bad", stdin=json.dumps(case))
    assert bad.returncode == 1 and b"CASE_REFUSED" in bad.stderr and b"metrics" in bad.stderr
    typo = run_cli("--rules", root, "case", "add", TABLE[:-1], _a_case(), "--name", "x")
    assert typo.returncode == 1 and said("case.no_table_close", table=TABLE[:-1], closest=TABLE) \
        in typo.stderr.decode("utf-8")
    assert sorted(p.name for p in (root / "tests" / "cases" / TABLE).iterdir()) == before
