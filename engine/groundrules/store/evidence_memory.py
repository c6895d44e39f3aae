"""The evidence ledger's store over plain lists: for tests and short-lived hosts. One lock makes
each transaction whole; a write block that raises leaves nothing behind."""
from __future__ import annotations

import copy
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

from .. import abandon

T = TypeVar("T")


class MemoryEvidenceStore:
    def __init__(self) -> None:
        self._projects: dict[str, dict] = {}
        self._lock = threading.RLock()

    def run_write(self, project: str, body: Callable[["MemoryEvidenceTx"], T]) -> T:
        """`body(tx)` on a draft of `project`, kept only when it returns."""
        with self.write(project) as tx:
            return body(tx)

    @contextmanager
    def write(self, project: str) -> Iterator["MemoryEvidenceTx"]:
        with self._lock:
            data = self._projects.setdefault(project, {"records": [], "redactions": [], "interpretations": []})
            draft = copy.deepcopy(data)
            yield MemoryEvidenceTx(draft)
            abandon.before_commit()
            self._projects[project] = draft

    @contextmanager
    def read(self, project: str) -> Iterator["MemoryEvidenceTx"]:
        with self._lock:
            yield MemoryEvidenceTx(self._projects.get(project, {"records": [], "redactions": [], "interpretations": []}))

    def forget(self) -> None:
        """Nothing outlives a cleared field in memory."""

    def close(self) -> None:
        """Nothing to release."""


class MemoryEvidenceTx:
    def __init__(self, data: dict):
        self.data = data

    def insert(self, rows: list[dict]) -> None:
        self.data["records"] += [dict(r, redaction_id=None) for r in rows]

    def rows(self) -> list[dict]:
        return [dict(r) for r in self.data["records"]]

    def row(self, record_id: str) -> dict | None:
        return next((dict(r) for r in self.data["records"] if r["id"] == record_id), None)

    def owner(self, name: str) -> str | None:
        return next((r["id"] for r in self.data["records"] if name in (r["id"], r["message_id"], r["lock_id"])), None)

    def redaction_rows(self) -> list[dict]:
        return [dict(r) for r in self.data["redactions"]]

    def add_interpretation(self, row: dict) -> None:
        self.data["interpretations"].append(dict(row, redaction_id=None))

    def interpretation_rows(self) -> list[dict]:
        return [dict(r) for r in self.data["interpretations"]]

    def withdraw(self, ids: list[str], redaction_id: str) -> None:
        for row in self.data["interpretations"]:
            if row["id"] in ids:
                row["body"], row["redaction_id"] = None, redaction_id

    def clear(self, events: list[dict]) -> None:
        for event in events:
            self.data["redactions"].append({"id": event["id"], "record_id": event["record"], "event": event["json"]})
            for row in self.data["records"]:
                if row["id"] == event["record"]:
                    row["personal"], row["redaction_id"] = None, event["id"]
