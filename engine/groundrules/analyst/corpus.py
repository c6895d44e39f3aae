"""The case corpora an analyst's edit is judged on, and the decision tables they exercise.

`tests/cases/<table-id>/*.json` holds one value per file for a decision table;
`tests/cases/locks/**/*.json` holds conversations (`{"messages": [...]}`) for the lock tables, and
`tests/cases/lock_chat*/*.yaml` the labelled chat corpora (one file per category, its `messages`
as `{text, role?}`), read as one conversation per file;
`tests/cases/fold/*.json` holds named fold payloads (`{case name: payload}`);
`tests/cases/findings/*.json` holds sequences of finding-ledger tool calls (`[{tool, args}]`),
which exercise the transition tables. Decision tables
embedded in another table (the merge policy's `sources`, `resolve`, ...) are listed with the
file and key they live under, so that no decision table is left out of a diff or a report.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.decide import DecisionTable
from ..core.rulebook import Rulebook

LOCKS, FOLD, FINDINGS = "locks", "fold", "findings"
CHATS = "lock_chat*"          # the chat corpora: lock_chat (tuned on) and lock_chat_heldout
# The corpus that runs the decision tables embedded in a table of this kind (the part using them).
EMBEDDED_RUN_BY = {"merge_policy": FOLD}


@dataclass(frozen=True)
class TableRef:
    """A decision table of a rulebook: top-level (`key` empty) or embedded under `key` of `owner`."""

    id: str
    table: DecisionTable
    file: str
    owner: str            # id of the table whose file holds it
    key: str              # '' for a top-level table, else its key inside the owner
    run_by: str = ""      # for an embedded table: the corpus (locks, fold) whose part runs it

    def data(self, book: Rulebook) -> Any:
        """The table's YAML data, as written (for telling an edited table from an untouched one)."""
        data = book.sources[self.owner].data
        return data.get(self.key) if self.key else data


def decision_tables(book: Rulebook) -> list[TableRef]:
    """Every decision table, top-level or embedded in a compiled table's fields, sorted by id."""
    out = []
    for table_id in sorted(book.tables):
        table = book.tables[table_id]
        if isinstance(table, DecisionTable):
            out.append(TableRef(table_id, table, table.file, table_id, ""))
            continue
        if not dataclasses.is_dataclass(table):
            continue
        for f in dataclasses.fields(table):
            inner = getattr(table, f.name)
            if isinstance(inner, DecisionTable):
                kind = book.tables[table_id].kind       # the table as compiled (is_dataclass narrowed `table`)
                out.append(TableRef(inner.id, inner, inner.file, table_id, f.name, EMBEDDED_RUN_BY.get(kind, "")))
    return sorted(out, key=lambda ref: ref.id)


def read_json(path: Path) -> tuple[bool, Any]:
    """(True, value) for a readable JSON file; (False, None) for anything else (a broken case)."""
    try:
        return True, json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False, None


def table_cases(cases: Path, table_id: str) -> list[tuple[str, Any]] | None:
    """(name, value) of every case of a decision table, or None when it has no case folder."""
    folder = cases / table_id
    if not folder.is_dir():
        return None
    out = []
    for path in sorted(folder.glob("*.json")):
        ok, value = read_json(path)
        if ok:
            out.append((path.stem, value))
    return out


def lock_cases(cases: Path) -> list[tuple[str, Any]] | None:
    """(group/name, messages) of every conversation under tests/cases/locks/, or None without one."""
    folder = cases / LOCKS
    if not folder.is_dir():
        return None
    out = []
    for path in sorted(folder.rglob("*.json")):
        ok, doc = read_json(path)
        if ok and isinstance(doc, dict) and "messages" in doc:
            out.append((path.relative_to(folder).with_suffix("").as_posix(), doc["messages"]))
    return out


def fold_cases(cases: Path) -> list[tuple[str, Any]] | None:
    """(group/name, payload) of every named payload in tests/cases/fold/*.json, or None without one."""
    folder = cases / FOLD
    if not folder.is_dir():
        return None
    out = []
    for path in sorted(folder.glob("*.json")):
        ok, doc = read_json(path)
        if ok and isinstance(doc, dict):
            out += [(f"{path.stem}/{name}", payload) for name, payload in doc.items()]
    return out


def chat_cases(cases: Path) -> list[tuple[str, Any]] | None:
    """(corpus/category, messages) of every file of the chat corpora (tests/cases/lock_chat*/*.yaml),
    each message {id: <category>:<n>, role, content}; None without any."""
    folders = sorted(p for p in cases.glob(CHATS) if p.is_dir())
    if not folders:
        return None
    import yaml                       # only the chat corpora are YAML
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)   # libyaml's: the same data, 15x faster
    out = []
    for folder in folders:
        for path in sorted(folder.glob("*.yaml")):
            try:
                doc = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
            except (OSError, ValueError, yaml.YAMLError):
                continue
            if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
                continue
            category = doc.get("category", path.stem)
            messages = [{"id": f"{category}:{n}", "role": m.get("role", "user"), "content": m.get("text")}
                        for n, m in enumerate(doc["messages"], 1) if isinstance(m, dict)]
            out.append((f"{folder.name}/{path.stem}", messages))
    return out


def lock_conversations(cases: Path) -> list[tuple[str, Any]] | None:
    """The conversations lock coverage counts over, the same for lint and the report: the lock
    corpus and the chat corpora together; None without either."""
    convs, chats = lock_cases(cases), chat_cases(cases)
    if convs is None and chats is None:
        return None
    return (convs or []) + (chats or [])


LOCK_COVERAGE_CORPUS = f"{LOCKS} + {CHATS}"


def findings_cases(cases: Path) -> list[tuple[str, Any]] | None:
    """(name, [{tool, args}, ...]) of every call sequence in tests/cases/findings/*.json."""
    folder = cases / FINDINGS
    if not folder.is_dir():
        return None
    out = []
    for path in sorted(folder.glob("*.json")):
        ok, doc = read_json(path)
        if ok and isinstance(doc, list):
            out.append((path.stem, doc))
    return out
