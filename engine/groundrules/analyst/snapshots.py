"""The reviewed snapshot files of a checkout (snapshots/<test module>/…), checked and rewritten by
`groundrules test --snapshots` and `groundrules test --accept`, so that an analyst reaches them
through the same command as the tables' examples, never through a pytest flag.

A snapshot pins what one test module computes over a case corpus (the outputs of every corpus
case); the module, not this one, knows how to compute it, so both commands run the modules that
own snapshot files, in a child pytest, on the checkout's tables: checking reports each failing test
(a stale snapshot, or a corpus test that no longer holds); accepting rewrites the stale files and
says which changed and by how many lines, for the reviewer to read.
"""
from __future__ import annotations

import difflib
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

FOLDER = "snapshots"
TESTS = "tests"


@dataclass(frozen=True)
class SnapshotRun:
    ran: tuple           # the test modules run, relative to the checkout
    failed: tuple        # pytest's one-line summary of each failing test
    changed: tuple       # (snapshot file, lines removed, lines added), after --accept
    output: str          # the tail of pytest's output, for what the summary does not say


def is_checkout(root: Path) -> bool:
    """`root` holds the test suite and its snapshots (a repository checkout, not an installed copy)."""
    return (root / TESTS / "conftest.py").is_file() and (root / FOLDER).is_dir()


def modules(root: Path) -> list[str]:
    """The test modules owning a snapshot file (snapshots/<dir>/<module>/<test>.json)."""
    owners = {p.parent.relative_to(root / FOLDER).as_posix() for p in (root / FOLDER).rglob("*.json")}
    return sorted(f"{TESTS}/{owner}.py" for owner in owners if (root / TESTS / f"{owner}.py").is_file())


def run(root: Path, accept: bool = False, timeout_s: float = 1800) -> SnapshotRun:
    """Run the snapshot-owning modules in `root`; with `accept`, rewrite the stale snapshots."""
    owned = modules(root)
    before = _texts(root)
    args = [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-rf",
            "--no-header", *(["--snapshot-update"] if accept else []), *owned]
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    env.pop("PYTEST_ADDOPTS", None)
    done = subprocess.run(args, cwd=root, env=env, capture_output=True, timeout=timeout_s)
    out = done.stdout.decode("utf-8", "replace")
    failed = tuple(line[len("FAILED "):] for line in out.splitlines() if line.startswith("FAILED "))
    if done.returncode not in (0, 1) and not failed:
        failed = (f"pytest exited with status {done.returncode}",)
    after = _texts(root)
    changed = tuple(_counted(name, before.get(name, ""), after.get(name, ""))
                    for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name))
    return SnapshotRun(tuple(owned), failed, changed, "\n".join(out.splitlines()[-40:]))


def _texts(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted((root / FOLDER).rglob("*.json"))}


def _counted(name: str, old: str, new: str) -> tuple[str, int, int]:
    removed = added = 0
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0):
        if line.startswith("-") and not line.startswith("---"):
            removed += 1
        elif line.startswith("+") and not line.startswith("+++"):
            added += 1
    return name, removed, added
