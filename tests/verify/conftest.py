"""Fixtures for the verification tests."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

# the helpers beside these tests (verify_support, verify_seed_examples) import under any import mode
sys.path.insert(0, str(Path(__file__).resolve().parent))

from verify_support import load_verify_book  # noqa: E402


@pytest.fixture(scope="session")
def vbook():
    return load_verify_book()
