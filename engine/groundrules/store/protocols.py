"""What a ledger asks of its store, whichever backend holds it: the seam between a domain (the
finding ledger, the decision log) and its SQLite or PostgreSQL store, typed, so that a third
backend knows what to provide and a checker sees a domain call no store has."""
from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Callable, Iterator, Protocol, TypeVar

from .findings_sql import FindingOps

T = TypeVar("T")


class FindingStore(Protocol):
    """The finding ledger's store: one transaction per call, its statements the shared FindingOps."""

    def run_write(self, body: Callable[[FindingOps], T], *, appends_only: bool = False) -> T: ...

    def read(self) -> AbstractContextManager[FindingOps]: ...

    def close(self) -> None: ...


class DecisionStore(Protocol):
    """The decision log's store: rows appended in batches, read by project or in append order."""

    def append(self, rows: list[dict]) -> None: ...

    def page(self, project: str, *, decision_id: str | None = None, tool: str | None = None,
             since: str | None = None, ok: bool | None = None, before: int | None = None,
             limit: int = 20) -> list[dict]: ...

    def seq_of(self, project: str, decision_id: str) -> int | None: ...

    def scan(self, **filters) -> Iterator[dict]: ...

    def pages(self, *, projects: list | None = None, tools: list | None = None, since: str | None = None,
              ids: list | None = None, size: int = 2000) -> Iterator[list[dict]]: ...

    def erase(self, project: str, ids: list[str], redaction_id: str) -> None: ...

    def purge(self, cutoffs: dict, default_cutoff: str) -> int: ...

    def forget(self) -> None: ...

    def close(self) -> None: ...
