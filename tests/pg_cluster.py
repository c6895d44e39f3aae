"""A throwaway PostgreSQL cluster per test session (see ../shared notes "postgres-tests"): started
from the server binaries on a unix socket in a short /tmp dir, stopped with the session, killed
with pytest if pytest dies. As root (CI) the server runs as the `postgres` user.

Each test gets a fresh database cloned from a template that already holds both ledgers' tables
(CREATE DATABASE ... TEMPLATE), cloned ahead by a thread that also drops the used ones. Each pytest
worker (xdist) runs its own cluster. The test cluster skips fsync (nothing a test can observe
depends on it); the benchmarks' throwaway cluster keeps the production settings. In CI (CI=true) a
missing server fails the run; elsewhere the PostgreSQL tests skip, and the session header says why.
"""
from __future__ import annotations

import glob
import itertools
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
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


def _uri(folder: str, dbname: str) -> str:
    return f"postgresql://postgres@/{dbname}?host={folder}"


class Cluster:
    """The cluster, and a thread that keeps fresh databases ready and drops used ones, so that a
    test waits neither for its CREATE DATABASE (~0.15 s) nor for the DROP of the one before."""

    READY = 2                                   # databases cloned ahead of the tests that take them
    BACKLOG = 8                                 # used databases waiting for their DROP, at most

    def __init__(self, folder: str):
        self.folder = folder
        self._ready: queue.Queue = queue.Queue()
        self._wanted = threading.Semaphore(self.READY)
        self._dropped: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._failure: BaseException | None = None
        self._worker = threading.Thread(target=self._keep_ready, name="pg-databases", daemon=True)
        self._worker.start()

    def uri(self, dbname: str) -> str:
        return _uri(self.folder, dbname)

    def admin(self):
        import psycopg
        return psycopg.connect(self.uri("postgres"), autocommit=True)

    def fresh_database(self) -> str:
        """A database no test used, with both ledgers' tables."""
        while True:
            try:
                name = self._ready.get(timeout=1)
                break
            except queue.Empty:
                if self._failure is not None or not self._worker.is_alive():
                    raise RuntimeError("the database preparer stopped") from self._failure
        self._wanted.release()
        return name

    def drop(self, name: str) -> None:
        self._dropped.put(name)

    def close(self) -> None:
        self._stop.set()
        self._wanted.release()
        self._worker.join(timeout=30)

    def _keep_ready(self) -> None:
        try:
            with self.admin() as conn:
                while not self._stop.is_set():
                    if self._dropped.qsize() > self.BACKLOG:       # keep the disk from filling up
                        conn.execute(f'DROP DATABASE IF EXISTS "{self._dropped.get()}" WITH (FORCE)')
                        continue
                    if self._wanted.acquire(timeout=0.05):
                        if self._stop.is_set():
                            return
                        name = f"t{os.getpid()}_{next(_names)}"
                        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE gr_template')
                        self._ready.put(name)
                        continue
                    try:
                        used = self._dropped.get_nowait()
                    except queue.Empty:
                        continue
                    conn.execute(f'DROP DATABASE IF EXISTS "{used}" WITH (FORCE)')
        except BaseException as exc:  # noqa: BLE001 - reported by fresh_database, which waits on it
            self._failure = exc


# Without an OS crash, fsync protects nothing a test can observe: a killed backend or postmaster
# leaves its WAL in the page cache, and recovery replays it. Commits still write their WAL before
# they answer (synchronous_commit stays on). The benchmarks keep the production settings.
NOT_DURABLE = ("-c", "fsync=off", "-c", "full_page_writes=off")


def start_cluster(durable: bool = True):
    """Yield a running Cluster; stop and remove it afterwards. `durable=False` skips fsync (tests)."""
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
                                           "-k", folder, "-c", "max_connections=200",
                                           *(() if durable else NOT_DURABLE)], pdeathsig=True),
                                stdout=log, stderr=subprocess.STDOUT)
    try:
        started = time.monotonic()
        while subprocess.run([f"{bindir}/pg_isready", "-q", "-h", folder]).returncode != 0:
            if proc.poll() is not None or time.monotonic() - started > 30:
                raise RuntimeError(open(f"{folder}/log").read())
            time.sleep(0.02)
        import psycopg
        with psycopg.connect(_uri(folder, "postgres"), autocommit=True) as conn:
            conn.execute("CREATE DATABASE gr_template")
        from groundrules.store import open_decision_store, open_evidence_store, open_finding_store
        for opener in (open_finding_store, open_evidence_store, open_decision_store):
            opener(_uri(folder, "gr_template")).close()           # the ledgers' and the decision log's migrations
        cluster = Cluster(folder)
        try:
            yield cluster
        finally:
            cluster.close()
    finally:
        proc.send_signal(signal.SIGQUIT)                          # immediate shutdown
        proc.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_cluster():
    yield from start_cluster(durable=False)


@pytest.fixture
def pg_db(pg_cluster) -> str:
    """A fresh database with both ledgers' tables and the decision log's: its postgresql:// URI."""
    name = pg_cluster.fresh_database()
    yield pg_cluster.uri(name)
    pg_cluster.drop(name)
