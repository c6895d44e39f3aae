"""Issue 13, item 8: every input a command reads is capped. Endless devices and oversized stdin are
one clear line naming the limit (rules/limits.yaml inputs.input_bytes; tables: capped.TABLE_BYTES),
never a MemoryError or a traceback."""
from __future__ import annotations

import subprocess

import pytest

from cli_inproc import run_cli
from groundrules.core import capped, rulebook


def run(*argv: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return run_cli(*argv, stdin=stdin)


@pytest.mark.parametrize("argv", [("explain", "/dev/zero"), ("lock", "/dev/urandom"), ("fold", "/dev/zero"),
                                  ("verify", "/dev/urandom"), ("call", "explain_support", "/dev/zero")],
                         ids=" ".join)
def test_an_endless_input_file_is_refused_at_the_limit(argv):
    result = run(*argv)
    err = result.stderr.decode("utf-8")
    cap = rulebook.default().table("limits").input_bytes
    assert result.returncode == 1 and "Traceback" not in err and err.count("\n") == 1, err[-2000:]
    assert capped.words(cap) in err and result.stdout == b""


def test_oversized_stdin_is_refused_at_the_limit():
    cap = rulebook.default().table("limits").input_bytes
    result = run("explain", "-", stdin=b" " * (cap + 1))
    err = result.stderr.decode("utf-8")
    assert result.returncode == 1 and "stdin" in err and capped.words(cap) in err and "Traceback" not in err


def test_an_endless_table_is_a_located_problem():
    result = run("lint", "/dev/zero")
    out = result.stdout.decode("utf-8") + result.stderr.decode("utf-8")
    assert result.returncode == 1 and "too-large" in out and "Traceback" not in out
