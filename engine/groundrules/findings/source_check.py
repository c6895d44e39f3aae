"""What groundrules checks itself before a quoted excerpt may count (the fact `source_check` of
rules/independent_support.yaml): the excerpt is looked up in the file its source_ref names under
the ledger's project root, at the evidence's revision when the root is a git checkout
(`git cat-file blob REV:path`), else in the working file; a locator of lines (`L12`, `L12-L20`)
narrows the search to them. Only the methods rules/finding_provenance.yaml lists are checked, and
only when the ledger has a root: a caller's word that it quoted a file never counts by itself.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from .rule_files import MAX_DOCUMENT_BYTES, read_document, safe_relative

FOUND, NOT_FOUND, NO_SOURCE, UNCHECKED = "found", "not_found", "no_source", "unchecked"
_LINES = re.compile(r"L?([1-9][0-9]{0,8})(?:-L?([1-9][0-9]{0,8}))?")
_REVISION = re.compile(r"[0-9A-Za-z_][0-9A-Za-z._/~^-]{0,199}")     # never an option: no leading '-'
GIT_TIMEOUT_S = 10


def check(root: Path | None, evidence: dict) -> str:
    """FOUND, NOT_FOUND (the file was read, the excerpt is not in it), NO_SOURCE (no such file or
    revision under the root) or UNCHECKED (no root, or nothing quoted)."""
    if root is None or not evidence["excerpt"]:
        return UNCHECKED
    path = evidence["source_ref"]
    if not safe_relative(path):
        return NO_SOURCE
    revision = evidence["revision"]
    if revision and (root / ".git").exists():
        content = _at_revision(root, path, revision)
    else:
        content = read_document(root, path)
    if content is None:
        return NO_SOURCE
    text = content.decode("utf-8", errors="replace")
    lines = _LINES.fullmatch(evidence["locator"])
    if lines is not None:
        first = int(lines.group(1))
        last = int(lines.group(2) or first)
        text = "\n".join(text.splitlines()[first - 1:last])
    return FOUND if evidence["excerpt"] in text else NOT_FOUND


def _at_revision(root: Path, path: str, revision: str) -> bytes | None:
    """The file at `revision` of the git checkout `root`, or None (no such revision or file)."""
    if not _REVISION.fullmatch(revision):
        return None
    try:
        done = subprocess.run(["git", "-C", str(root), "cat-file", "blob", f"{revision}:{path}"],
                              capture_output=True, timeout=GIT_TIMEOUT_S, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0 or len(done.stdout) > MAX_DOCUMENT_BYTES:
        return None
    return done.stdout
