"""A copy of the project's tables, schemas and case corpora for the studio's tests: what they save
lands in the copy, never in the checkout."""
from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COPIED = ("rules", "locks", "schemas", "tests/cases")


def copy_project(target: Path) -> Path:
    for part in COPIED:
        shutil.copytree(ROOT / part, target / part)
    return target
