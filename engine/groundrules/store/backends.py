"""Which store holds a ledger, by the scheme of the URL that names its database: one registry.

A backend is one entry: its kind and, for each ledger it can hold (`findings`, `evidence`,
`decisions`), the store class, named `module:Class` and imported on first use, so that a process
imports only the driver it opens. What names a database:

  memory:                       in memory, gone with the process (the evidence ledger only)
  sqlite:PATH, sqlite:///PATH   a SQLite file (PATH relative, or /PATH absolute); ':memory:' too
  postgresql://…, postgres://…  a PostgreSQL database (the `postgres` extra), the URI as libpq reads it
  anything else                 a SQLite file path, as before URLs were read (a Path is one too)

A store class declares its `kind`, which a server reports (`/readyz`, its start line) instead of
guessing from the attributes a store happens to have. docs/contributing.md says how to add one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any

from ..core import codes
from ..core.errors import refusal

LEDGERS = ("findings", "evidence", "decisions")


@dataclass(frozen=True)
class Backend:
    """A kind of store, and the store class (`module:Class`, relative to this package) of each
    ledger it holds."""

    kind: str
    stores: dict[str, str]

    def store_class(self, ledger: str) -> Any:
        if ledger not in self.stores:
            raise refusal(codes.NOT_CONFIGURED, "store.no_ledger", kind=self.kind, ledger=ledger,
                          held=sorted(self.stores))
        module, _, name = self.stores[ledger].partition(":")
        return getattr(import_module(module, __package__), name)


BACKENDS: dict[str, Backend] = {
    "memory": Backend("memory", {"evidence": ".evidence_memory:MemoryEvidenceStore"}),
    "sqlite": Backend("sqlite", {"findings": ".findings_sqlite:SqliteFindingStore",
                                 "evidence": ".evidence_sqlite:SqliteEvidenceStore",
                                 "decisions": ".decisions_sqlite:SqliteDecisionStore"}),
    "postgresql": Backend("postgresql", {"findings": ".findings_postgres:PostgresFindingStore",
                                         "evidence": ".evidence_postgres:PostgresEvidenceStore",
                                         "decisions": ".decisions_postgres:PostgresDecisionStore"}),
}
SCHEMES = {"memory": "memory", "sqlite": "sqlite", "postgresql": "postgresql", "postgres": "postgresql"}
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):")      # two letters at least: C:\ is a path


def locate(db: str | Path | None) -> tuple[str, str | Path]:
    """(the backend's kind, what its store opens: a file path, ':memory:' or a PostgreSQL URI) of
    the database `db` names (None: in memory). A URL of an unknown scheme (`mysql://…`) is refused,
    naming the known ones; any other text is a file path, whatever colons it holds."""
    if db is None:
        return "memory", ""
    if isinstance(db, Path):
        return "sqlite", db
    found = _SCHEME.match(db)
    scheme = found.group(1).lower() if found is not None else ""
    if scheme not in SCHEMES:
        if found is not None and db[found.end():].startswith("//"):
            raise refusal(codes.NOT_CONFIGURED, "store.scheme", scheme=found.group(1),
                          known=[f"{s}:" for s in SCHEMES])
        return "sqlite", db
    kind = SCHEMES[scheme]
    rest = db[len(scheme) + 1:]
    if kind == "postgresql":
        return kind, db
    if kind == "sqlite":
        return kind, rest[2:] if rest.startswith("//") else rest
    if rest:
        raise refusal(codes.NOT_CONFIGURED, "store.memory")
    return kind, ""


def open_store(ledger: str, db: str | Path | None, **options: Any) -> Any:
    """The store of `ledger` (findings, evidence, decisions) in the database `db` names."""
    kind, target = locate(db)
    cls = BACKENDS[kind].store_class(ledger)
    return cls() if kind == "memory" else cls(target, **options)
