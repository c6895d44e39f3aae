"""Shared fixtures: the bundled rulebook, and snapshots stored as canonical JSON in snapshots/."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from groundrules import load_rulebook
from groundrules.core import canonical
from pg_cluster import missing_reason, pg_cluster, pg_db  # noqa: F401  (fixtures for every test folder)

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "cases"
# The analyst gate runs this whole suite in an edited copy of the repository; there it stays out.
collect_ignore = ["analyst"] if os.environ.get("GROUNDRULES_GATE_INNER") else []

# Property tests state their full example counts through `budget.examples(n)`: the default run
# takes a tenth of each, `--hypothesis-profile=full` (CI's extended run) all of them.
settings.register_profile("fast", max_examples=10)
settings.register_profile("full")
settings.load_profile("fast")


def pytest_collection_modifyitems(items) -> None:
    for item in items:
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker(pytest.mark.property)


class CanonicalJSONSnapshot(SingleFileSnapshotExtension):
    """One file per snapshot under snapshots/<test module path below tests/>/, in our canonical JSON,
    so a snapshot diff is exactly the output diff a reviewer must read."""

    _write_mode = WriteMode.TEXT
    file_extension = "json"

    def serialize(self, data, **_kwargs) -> str:
        return canonical.dumps(data) + "\n"

    @classmethod
    def dirname(cls, *, test_location) -> str:
        module = Path(test_location.filepath).resolve().relative_to(ROOT / "tests").with_suffix("")
        return str(ROOT / "snapshots" / module)


@pytest.fixture
def snapshot_json(snapshot):
    """Assert `value == snapshot_json` to pin a whole case group in one reviewed file."""
    return snapshot.use_extension(CanonicalJSONSnapshot)


@pytest.fixture
def tables_copy(tmp_path: Path) -> Path:
    """A writable copy of the bundled tables (rules, locks, schemas) for a test that edits them."""
    import shutil
    root = tmp_path / "tables"
    for folder in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / folder, root / folder)
    return root


@pytest.fixture(scope="session")
def rulebook():
    return load_rulebook(ROOT)


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto`: one worker more than the cores. A share of the suite waits on what it starts
    (servers, subprocesses, a browser, a database cluster): with one worker per core the two cores
    were 88% busy, and a third worker took the default run from 3:38 to 3:23 on a quiet 2-core
    machine. --maxprocesses in pyproject still caps it."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return cores + 1


def pytest_report_header(config) -> str:
    reason = missing_reason()
    return "postgresql: " + (f"tests skip: {reason}" if reason else "tests run on a throwaway cluster")
