"""The Node tools some tests run (a real OAuth authorization server, the MCP conformance suite, the
official TypeScript SDK client and the MCP Inspector CLI).

tests/node/install.sh puts them under tests/node/ (.ci/run calls it): the npm packages of its
package-lock.json, and a Node 22 where the machine's is older. A test that needs one and finds it
missing skips with the command that installs it, except in CI (CI=true), where it fails.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

NODE_DIR = Path(__file__).resolve().parent / "node"
INSTALL = "bash tests/node/install.sh"


def node(min_major: int, min_minor: int = 0) -> str | None:
    """A node binary of at least `min_major`.`min_minor`: the one install.sh fetched, else the machine's."""
    candidates = sorted(NODE_DIR.glob("node22/node_modules/node-linux-*/bin/node")) + [shutil.which("node")]
    for candidate in candidates:
        if candidate is None:
            continue
        try:
            out = subprocess.run([str(candidate), "-p", "process.versions.node"], capture_output=True, text=True,
                                 timeout=60).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        version = out.strip().split(".")
        if len(version) >= 2 and all(part.isdigit() for part in version[:2]) \
                and (int(version[0]), int(version[1])) >= (min_major, min_minor):
            return str(candidate)
    return None


def package(name: str) -> Path | None:
    path = NODE_DIR / "node_modules" / name
    return path if (path / "package.json").is_file() else None


def require(min_major: int, *packages: str, min_minor: int = 0) -> str:
    """The node binary to run `packages` with; skips (fails in CI) when something is missing."""
    binary = node(min_major, min_minor)
    wanted = f"node >= {min_major}" + (f".{min_minor}" if min_minor else "")
    missing = [p for p in packages if package(p) is None] + ([wanted] if binary is None else [])
    if missing:
        reason = f"missing {', '.join(missing)}: run {INSTALL}"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return binary
