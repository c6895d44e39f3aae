"""The evidence ledger's store over plain lists: for tests and short-lived hosts. One lock makes
each transaction whole; a write block that raises leaves nothing behind."""
from __future__ import annotations

import copy
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence, TypeVar

from . import evidence_rows as layout
from .lifecycle import Lifecycle

T = TypeVar("T")


class MemoryEvidenceStore:
    """The evidence ledger in memory, gone with the process: each project a dict, a write a draft
    kept only when its body returns."""

    kind = "memory"  # the backend (backends.py), as a server reports it

    def __init__(self) -> None:
        self._projects: dict[str, dict] = {}
        self._lock = threading.RLock()

    def run_write(self, project: str, body: Callable[["MemoryEvidenceTx"], T], *,
                  lifecycle: Lifecycle | None = None) -> T:
        """`body(tx)` on a draft of `project`, kept only when it returns."""
        with self.write(project, lifecycle=lifecycle) as tx:
            return body(tx)

    @contextmanager
    def write(self, project: str, *, lifecycle: Lifecycle | None = None) -> Iterator["MemoryEvidenceTx"]:
        with self._lock:
            data = self._projects.setdefault(project, {"records": [], "redactions": [], "interpretations": [], "keys": {}})
            draft = copy.deepcopy(data)
            if lifecycle is not None:
                lifecycle.attempt()
            yield MemoryEvidenceTx(draft, project)
            if lifecycle is not None:
                lifecycle.before_commit()
            self._projects[project] = draft

    @contextmanager
    def read(self, project: str) -> Iterator["MemoryEvidenceTx"]:
        with self._lock:
            yield MemoryEvidenceTx(self._projects.get(project, {"records": [], "redactions": [], "interpretations": [], "keys": {}}),
                                   project)

    def forget(self) -> None:
        """Nothing outlives a cleared field in memory."""

    def unkeyed(self) -> list[dict]:
        """Every interpretation here was keyed as it was stored."""
        return []

    def keyed_all(self) -> None:
        """Nothing was pending."""

    def close(self) -> None:
        """Nothing to release."""


class MemoryEvidenceTx:
    def __init__(self, data: dict, project: str):
        self.data, self.project = data, project

    def insert(self, filed: list[dict]) -> None:
        self.data["records"] += [dict(layout.row(f), redaction_id=None) for f in filed]

    def rows(self) -> list[dict]:
        return [layout.record(r) for r in self.data["records"]]

    def row(self, record_id: str) -> dict | None:
        return next((layout.record(r) for r in self.data["records"] if r["id"] == record_id), None)

    def owner(self, name: str) -> str | None:
        return next((r["id"] for r in self.data["records"] if name in (r["id"], r["message_id"], r["lock_id"])), None)

    def rows_about(self, subject: str) -> list[dict]:
        return self._seq_rows(lambda r: r["subject"] == subject)

    def locks_inside(self, sources: list[str]) -> list[dict]:
        return self._seq_rows(lambda r: r["source_id"] is not None and r["source_id"] in sources)

    def rows_named(self, ids: list[str]) -> list[dict]:
        return self._seq_rows(lambda r: r["id"] in ids)

    def observed_from(self, second: int) -> list[dict]:
        return self._seq_rows(lambda r: r["observed_s"] >= second)

    def _seq_rows(self, wanted: Callable[[dict], bool]) -> list[dict]:
        return [layout.record(dict(r, seq=n)) for n, r in enumerate(self.data["records"], 1) if wanted(r)]

    def redaction(self, redaction_id: str) -> dict | None:
        return next((layout.redaction(r) for r in self.data["redactions"] if r["id"] == redaction_id), None)

    def redaction_rows(self) -> list[dict]:
        return [layout.redaction(r) for r in self.data["redactions"]]

    def add_interpretation(self, interpretation: dict, recorded_at: str, keys: Sequence[str] = ()) -> None:
        self.data["interpretations"].append({"id": interpretation["id"], "recorded_at": recorded_at,
                                             "body": layout.dumps(interpretation), "redaction_id": None})
        self.add_keys(len(self.data["interpretations"]), keys)

    def add_keys(self, seq: int, keys: Sequence[str]) -> None:
        for key in keys:
            self.data["keys"].setdefault(key, set()).add(seq)

    def interpretation_rows(self) -> list[dict]:
        return [layout.interpretation(dict(r, seq=n)) for n, r in enumerate(self.data["interpretations"], 1)]

    def keyed(self, keys: list[str]) -> list[int]:
        return sorted({seq for key in keys for seq in self.data["keys"].get(key, ())})

    def interpretations_at(self, seqs: list[int]) -> list[dict]:
        keys_of: dict = {}
        for key, holders in self.data["keys"].items():
            for seq in holders:
                keys_of.setdefault(seq, []).append(key)
        rows = self.interpretation_rows()
        return [dict(rows[seq - 1], keys=keys_of.get(seq, [])) for seq in sorted(set(seqs)) if 0 < seq <= len(rows)]

    def withdraw(self, ids: list[str], redaction_id: str) -> None:
        for row in self.data["interpretations"]:
            if row["id"] in ids:
                row["body"], row["redaction_id"] = None, redaction_id

    def clear(self, events: list[dict]) -> None:
        for event in events:
            self.data["redactions"].append({"id": event["id"], "record_id": event["record"], "event": layout.dumps(event)})
            for row in self.data["records"]:
                if row["id"] == event["record"]:
                    row["personal"], row["redaction_id"] = None, event["id"]
