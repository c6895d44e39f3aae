"""The command line, run inside the test process: `main(argv)` with stdin, stdout and stderr as bytes.

A spawned `python -m groundrules` costs about a second of imports and table loading; the same
command in-process costs what the command costs. `run_cli` answers like `subprocess.run(...,
capture_output=True)` so a test reads `returncode`, `stdout` and `stderr` (bytes) the same way.
What only a real process shows (the entry point, hash seeds, a cold cache, signals, stdio servers)
stays in the tests marked `extended`.
"""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import traceback
from pathlib import Path

from groundrules.cli.main import main


class _Stream(io.TextIOWrapper):
    """A text stream over bytes, as a process's standard streams are (utf-8, `.buffer` available)."""

    def __init__(self, data: bytes = b""):
        super().__init__(io.BytesIO(data), encoding="utf-8", errors="strict", newline=None, write_through=True)

    def value(self) -> bytes:
        self.flush()
        return self.buffer.getvalue()


@contextlib.contextmanager
def _environment(env: dict | None):
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def run_cli(*args: str | Path, stdin: bytes | str | None = None, cwd: Path | str | None = None,
            env: dict | None = None) -> subprocess.CompletedProcess:
    """`groundrules ARGS` in this process: its exit status and the bytes it wrote."""
    argv = [str(a) for a in args]
    data = stdin.encode("utf-8") if isinstance(stdin, str) else (stdin or b"")
    streams = _Stream(data), _Stream(), _Stream()
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = streams
    try:
        with _environment(env), contextlib.chdir(cwd or os.getcwd()):
            try:
                code = main(argv)
            except SystemExit as exc:          # argparse's usage errors and --help
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:              # what a process would print before dying
                sys.stderr.write(traceback.format_exc())
                code = 1
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    return subprocess.CompletedProcess(["groundrules", *argv], code, streams[1].value(), streams[2].value())
