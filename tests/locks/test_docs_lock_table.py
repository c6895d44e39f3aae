"""The lock table docs/locks.md shows analysts loads, and its examples pass: the documentation cannot
drift from what the engine accepts."""
from __future__ import annotations

from pathlib import Path

from groundrules import load_rulebook
from groundrules.core.examples import run_all

ROOT = Path(__file__).resolve().parents[2]


def test_the_documented_lock_table_loads_and_its_examples_pass(tmp_path):
    text = (ROOT / "docs" / "locks.md").read_text(encoding="utf-8")
    start = text.index("```yaml\nkind: lock_patterns\n") + len("```yaml\n")
    table = tmp_path / "documented.yaml"
    table.write_text(text[start:text.index("```", start)], encoding="utf-8")
    outcomes = run_all(load_rulebook(ROOT, files=[table]))
    assert len(outcomes) >= 6 and [o for o in outcomes if not o.ok] == []
