"""A throwaway PostgreSQL cluster per test session (see ../shared notes "postgres-tests"): started
from the server binaries on a unix socket in a short /tmp dir, stopped with the session, killed
with pytest if pytest dies. As root (CI) the server runs as the `postgres` user.

Each test gets a fresh database cloned from a template that already holds both ledgers' tables
(CREATE DATABASE ... TEMPLATE, ~0.1 s). In CI (CI=true) a missing server fails the run; elsewhere
the PostgreSQL tests skip, and the session header says why.
"""
from __future__ import annotations

import glob
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

ROOT_USER = os.geteuid() == 0
IN_CI = os.environ.get("CI", "").lower() == "true"
_names = itertools.count()


def pg_bindir() -> str | None:
    if os.environ.get("PG_BINDIR"):
        return os.environ["PG_BINDIR"]
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[-3]))
    if debian:
        return os.path.dirname(debian[-1])                     # Debian/Ubuntu, newest major
    found = shutil.which("pg_ctl")
    return os.path.dirname(found) if found else None


def missing_reason() -> str | None:
    """Why the PostgreSQL tests cannot run here, or None when they can."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return "psycopg / psycopg_pool not installed (pip install -e '.[test]')"
    if pg_bindir() is None:
        return "PostgreSQL server binaries not found (apt-get install postgresql, or set PG_BINDIR)"
    return None


def _as_owner(cmd: list[str], pdeathsig: bool = False) -> list[str]:
    pre = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"] if ROOT_USER else []
    if pdeathsig and sys.platform == "linux":
        pre = (pre or ["setpriv"]) + ["--pdeathsig=TERM"]    # the postmaster exits if pytest is SIGKILLed
    return [*pre, "--", *cmd] if pre else cmd


class Cluster:
    def __init__(self, folder: str):
        self.folder = folder

    def uri(self, dbname: str) -> str:
        return f"postgresql://postgres@/{dbname}?host={self.folder}"

    def admin(self):
        import psycopg
        return psycopg.connect(self.uri("postgres"), autocommit=True)

    def fresh_database(self) -> str:
        name = f"t{os.getpid()}_{next(_names)}"
        with self.admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE gr_template')
        return name

    def drop(self, name: str) -> None:
        with self.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def start_cluster():
    """Yield a running Cluster; stop and remove it afterwards."""
    reason = missing_reason()
    if reason:
        (pytest.fail if IN_CI else pytest.skip)(reason)
    bindir, folder = pg_bindir(), tempfile.mkdtemp(prefix="pgt.", dir="/tmp")   # short: socket path limit
    if ROOT_USER:
        shutil.chown(folder, "postgres", "postgres")
    subprocess.run(_as_owner([f"{bindir}/initdb", "-D", f"{folder}/data", "-U", "postgres", "-A", "trust",
                              "-E", "UTF8", "--no-locale", "--no-sync"]), check=True, capture_output=True)
    with open(f"{folder}/log", "w") as log:
        proc = subprocess.Popen(_as_owner([f"{bindir}/postgres", "-D", f"{folder}/data", "-c", "listen_addresses=",
                                           "-k", folder, "-c", "max_connections=200"], pdeathsig=True),
                                stdout=log, stderr=subprocess.STDOUT)
    try:
        started = time.monotonic()
        while subprocess.run([f"{bindir}/pg_isready", "-q", "-h", folder]).returncode != 0:
            if proc.poll() is not None or time.monotonic() - started > 30:
                raise RuntimeError(open(f"{folder}/log").read())
            time.sleep(0.02)
        cluster = Cluster(folder)
        with cluster.admin() as conn:
            conn.execute("CREATE DATABASE gr_template")
        from groundrules.store import open_decision_store, open_evidence_store, open_finding_store
        for opener in (open_finding_store, open_evidence_store, open_decision_store):
            opener(cluster.uri("gr_template")).close()           # both ledgers' migrations, once
        yield cluster
    finally:
        proc.send_signal(signal.SIGQUIT)                          # immediate shutdown
        proc.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_cluster():
    yield from start_cluster()


@pytest.fixture
def pg_db(pg_cluster) -> str:
    """A fresh database with both ledgers' tables and the decision log's: its postgresql:// URI."""
    name = pg_cluster.fresh_database()
    yield pg_cluster.uri(name)
    pg_cluster.drop(name)
