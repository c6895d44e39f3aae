"""Issue 13, item 5: a database that cannot be a ledger is one line with a stable code from every
command that opens it, `serve` included, never a traceback; reading commands open it read-only and
so work in a folder nobody may write."""
from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from cli_inproc import run_cli
from findings_support import EXPERIMENT, finding, ok, open_client
from said import said

COMMANDS = [["findings", "list"], ["findings", "show", "F-000001"], ["findings", "reject-rule", "RP-000001"],
            ["serve"]]


def run(*argv: str) -> subprocess.CompletedProcess:
    done = run_cli(*argv)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode("utf-8"),
                                       done.stderr.decode("utf-8"))


def run_as(user: str, *argv: str) -> subprocess.CompletedProcess:
    """The command as another user: a real process."""
    prefix = ["setpriv", f"--reuid={user}", "--regid=nogroup", "--clear-groups"]
    return subprocess.run([*prefix, sys.executable, "-m", "groundrules.cli.main", *argv], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=60)


def bad_databases(folder: Path) -> dict[str, str]:
    (folder / "a-folder").mkdir()
    (folder / "junk.db").write_bytes(os.urandom(4096))
    (folder / "header.db").write_bytes(b"SQLite format 3\x00" + os.urandom(4096))
    (folder / "text.db").write_text("not a database\n", encoding="utf-8")
    return {"folder": str(folder / "a-folder"), "device": "/dev/null", "junk": str(folder / "junk.db"),
            "corrupt header": str(folder / "header.db"), "text": str(folder / "text.db"),
            "missing folder": str(folder / "no" / "such.db")}


def assert_one_line(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_bad_database_is_one_line_with_a_stable_code(tmp_path, command):
    for name, db in bad_databases(tmp_path).items():
        result = run(*command, "--db", db)
        assert_one_line(result)
        assert ": STORAGE_ERROR: " in result.stderr or said("usage.db_folder_missing", db=db) in result.stderr, \
            (name, result)
        assert name == "missing folder" or str(tmp_path) not in result.stderr   # a usage error names the input
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-folder", "header.db", "junk.db", "text.db"]


@pytest.mark.extended
def test_a_database_locked_exclusively_elsewhere_is_one_line(tmp_path):
    """Waits out the SQLite busy timeout (5 s) per command."""
    db = tmp_path / "ledger.db"
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("CREATE TABLE held (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        for command in (["findings", "list"], ["serve"]):
            result = run(*command, "--db", str(db))
            assert_one_line(result)
            assert ": STORAGE_ERROR: " in result.stderr and "SQLITE_BUSY" in result.stderr
    finally:
        holder.close()


@pytest.mark.extended
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root to run the reader as another user")
def test_reading_commands_work_in_a_folder_nobody_may_write(book):
    folder = Path(tempfile.mkdtemp(prefix="groundrules-ro-"))
    try:
        folder.chmod(0o755)
        db = folder / "ledger.db"
        writer = open_client(db, rulebook=book)
        fid = ok(writer.call("log_finding", finding(evidence=[EXPERIMENT])))["finding_id"]
        writer.close()
        folder.chmod(0o555)
        db.chmod(0o444)
        listed = run_as("nobody", "findings", "list", "--db", str(db), "--project", "p1")
        assert listed.returncode == 0, listed.stderr
        shown = run_as("nobody", "findings", "show", fid, "--db", str(db), "--project", "p1")
        assert shown.returncode == 0 and fid in shown.stdout, shown.stderr
        assert sorted(p.name for p in folder.iterdir()) == ["ledger.db"]       # no -wal, no -shm made
        written = run_as("nobody", "findings", "reject-rule", "RP-000001", "--db", str(db), "--project", "p1")
        assert_one_line(written)
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


def test_reading_commands_never_create_a_database(tmp_path):
    result = run("findings", "list", "--db", str(tmp_path / "new.db"))
    assert_one_line(result)
    assert list(tmp_path.iterdir()) == []
