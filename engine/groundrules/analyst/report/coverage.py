"""How well the corpora and the inline examples exercise each row, pattern and guard.

Decision tables with a case folder are evaluated on their cases; decision tables embedded in a
merge policy are counted while the fold corpus runs (each evaluation the fold makes is recorded);
lock patterns are counted over the conversation corpus. Example results come from each table's
own `check_examples()`, grouped by the row, pattern or guard they belong to.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .. import corpus
from ...core.errors import GroundrulesError
from ...evidence import fold
from ...locks import lock_messages
from ...locks.rules import row_fires
from ...locks.scan import raw_scan
from ...core.rulebook import Rulebook


@dataclass(frozen=True)
class Coverage:
    """Which cases of one corpus fired each row: `corpus` names it, `cases` counts its cases."""

    corpus: str
    cases: int
    fired: dict = field(default_factory=dict)     # row id ('default' too) -> tuple of case names


def decision_coverage(book: Rulebook, cases: Path) -> dict[str, Coverage]:
    """Table id -> Coverage, for every decision table some corpus exercises."""
    out: dict[str, Coverage] = {}
    for ref in corpus.decision_tables(book):
        values = corpus.table_cases(cases, ref.id)
        if values is None:
            continue
        fired: dict = {}
        for name, value in values:
            try:
                decision = ref.table.evaluate(value)
            except Exception:  # noqa: BLE001 - a case the table refuses fires nothing
                continue
            for f in decision.fired:
                fired.setdefault(f.row.id, []).append(name)
        out[ref.id] = Coverage(ref.id, len(values), {k: tuple(v) for k, v in fired.items()})
    out.update(_fold_coverage(book, cases))
    return out


class _Recorder:
    """A decision table that notes which rows fire for the case being folded, and otherwise is the table."""

    def __init__(self, table: Any, fired: dict):
        self._table = table
        self._fired = fired
        self.case = ""

    def evaluate(self, value: Any, **kwargs: Any) -> Any:
        decision = self._table.evaluate(value, **kwargs)
        for f in decision.fired:
            names = self._fired.setdefault(f.row.id, [])
            if not names or names[-1] != self.case:
                names.append(self.case)
        return decision

    def __getattr__(self, name: str) -> Any:
        return getattr(self._table, name)


def _fold_coverage(book: Rulebook, cases: Path) -> dict[str, Coverage]:
    payloads = corpus.fold_cases(cases)
    embedded = [ref for ref in corpus.decision_tables(book) if ref.run_by == corpus.FOLD]
    if payloads is None or not embedded:
        return {}
    fired: dict = {ref.id: {} for ref in embedded}
    recorders = {ref.id: _Recorder(ref.table, fired[ref.id]) for ref in embedded}
    tables = dict(book.tables)
    for owner in sorted({ref.owner for ref in embedded}):
        swaps = {ref.key: recorders[ref.id] for ref in embedded if ref.owner == owner}
        tables[owner] = dataclasses.replace(tables[owner], **swaps)
    recording = dataclasses.replace(book, tables=MappingProxyType(tables), memo={})
    for name, payload in payloads:
        for r in recorders.values():
            r.case = name
        try:
            fold(payload, recording)
        except GroundrulesError:
            continue
    return {ref.id: Coverage(corpus.FOLD, len(payloads), {k: tuple(v) for k, v in fired[ref.id].items()})
            for ref in embedded}


def lock_coverage(book: Rulebook, cases: Path) -> Coverage | None:
    """Pattern id -> the conversations in which it locked something (valid or not), over the
    conversations lint counts (the lock corpus and the chat corpora)."""
    convs = corpus.lock_conversations(cases)
    if convs is None:
        return None
    fired: dict = {}
    for name, messages in convs:
        try:
            found = lock_messages(messages, book)
        except GroundrulesError:
            continue
        for pattern in sorted({c["pattern"] for c in found}):
            fired.setdefault(pattern, []).append(name)
    return Coverage(corpus.LOCK_COVERAGE_CORPUS, len(convs), {k: tuple(v) for k, v in fired.items()})


def lock_rule_coverage(book: Rulebook, cases: Path) -> Coverage | None:
    """'<table>:<section>.<rule>' -> the conversations in which the context rule held on a
    candidate of its patterns (an attempt rule: on an invalid one), every lock table scanning; over
    the conversations lint counts."""
    convs = corpus.lock_conversations(cases)
    if convs is None:
        return None
    tables = book.of_kind("lock_patterns")
    patterns = tuple(p for t in tables for p in t.patterns)
    fired: dict = {}
    for name, messages in convs:
        held: set = set()
        for message in messages if isinstance(messages, list) else ():
            if not isinstance(message, dict) or not isinstance(message.get("content"), str):
                continue
            role, state, content = message.get("role"), message.get("state", "sent"), message["content"]
            mine = tuple(p for p in patterns if role in p.roles and state in p.states)
            try:
                raws = raw_scan(mine, str(message.get("id", "")), role, state, content)
                for t in tables:
                    for row in t.rows:
                        key = f"{t.id}:{row.section}.{row.id}"
                        if key not in held and row_fires(row, raws, content)[0]:
                            held.add(key)
            except TimeoutError:       # a message past its budget tells nothing about the rules
                continue
        for key in sorted(held):
            fired.setdefault(key, []).append(name)
    return Coverage(corpus.LOCK_COVERAGE_CORPUS, len(convs), {k: tuple(v) for k, v in fired.items()})


@dataclass(frozen=True)
class Examples:
    """The results of one item's examples: (n, ok, message); n is None for an item-level failure
    such as "row has no example"."""

    results: tuple

    @property
    def passed(self) -> int:
        return sum(1 for _, ok, _ in self.results if ok)

    @property
    def failed(self) -> tuple:
        return tuple(message for _, ok, message in self.results if not ok)

    @property
    def total(self) -> int:
        return len(self.results)


def example_status(table: Any) -> dict[str, Examples]:
    """Item (row, pattern or guard id; 'examples' for table-level ones) -> its examples' results.
    Result ids are `<table id>:<item>:<n>`, or `<table id>:<item>` for an item-level failure."""
    check = getattr(table, "check_examples", None)
    if check is None:
        return {}
    prefix = f"{table.id}:"
    results: dict = {}
    for result in check():
        rest = result.id[len(prefix):] if result.id.startswith(prefix) else result.id
        item, _, n = rest.rpartition(":")
        number = int(n) if n.isdigit() and item else None
        if number is None:
            item = rest
        results.setdefault(item, []).append((number, result.ok, result.message))
    return {item: Examples(tuple(results[item])) for item in sorted(results)}
