"""The chat corpus in tests/cases/locks/<group>/: every group pinned as one reviewed snapshot."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundrules import lock_messages

CASES = Path(__file__).resolve().parents[1] / "cases" / "locks"
GROUPS = sorted(p.name for p in CASES.iterdir() if p.is_dir())


def test_every_group_holds_cases():
    assert "noise" in GROUPS                      # test_noise_locks_nothing reads it by name
    assert [g for g in GROUPS if not any((CASES / g).glob("*.json"))] == []


@pytest.mark.parametrize("group", GROUPS)
def test_group(lock_book, snapshot_json, group):
    out = {}
    for path in sorted((CASES / group).glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        out[path.stem] = lock_messages(doc["messages"], lock_book)
    assert out == snapshot_json


def test_noise_locks_nothing(lock_book):
    for path in sorted((CASES / "noise").glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert lock_messages(doc["messages"], lock_book) == [], path.stem
