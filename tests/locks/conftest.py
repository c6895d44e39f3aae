"""The lock tables alone (locks/), so these tests do not depend on other parts' tables."""
from __future__ import annotations

from pathlib import Path

import pytest

from groundrules import load_rulebook

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def lock_book():
    return load_rulebook(ROOT, files=[ROOT / "locks"])

