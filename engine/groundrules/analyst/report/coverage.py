"""How well the corpora and the inline examples exercise each row, pattern and guard.

Decision tables are evaluated on the values lint counts them over: their own case folder, or what
the fold or the finding ledger asked them while their corpora ran (corpus_runs.asked_values); lock
patterns are counted over the conversation corpus. Example results come from each table's
own `check_examples()`, grouped by the row, pattern or guard they belong to.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import corpus, corpus_runs
from ...core.errors import GroundrulesError
from ...locks import lock_messages
from ...locks.rules import row_fires
from ...locks.scan import raw_scan
from ...core.rulebook import Rulebook


@dataclass(frozen=True)
class Coverage:
    """Which cases of one corpus fired each row: `corpus` names it, `cases` counts its cases. `taken`
    names the cases whose value a row's condition held on but a row before it won under the hit
    policy: lint counts those as held, so the page shows both."""

    corpus: str
    cases: int
    fired: dict = field(default_factory=dict)     # row id ('default' too) -> tuple of case names
    taken: dict = field(default_factory=dict)     # row id -> tuple of case names held on but not fired


def decision_coverage(book: Rulebook, cases: Path) -> dict[str, Coverage]:
    """Table id -> Coverage, for every decision table some corpus exercises, over the values lint
    counts (corpus_runs.asked_values: a table's own cases, or what the fold or the finding ledger
    asked it), so the page's figures are lint's."""
    out: dict[str, Coverage] = {}
    runs = corpus_runs.findings_runs(book, cases)
    tables = {table.id: table for table, _, _ in book.decision_tables()}
    for table_id, (folder, per_case) in corpus_runs.asked_values(book, cases, runs).items():
        table = tables[table_id]
        fired: dict = {}
        taken: dict = {}
        for name, values in per_case:
            for value in values:
                try:
                    decision = table.evaluate(value)
                except Exception:  # noqa: BLE001 - a case the table refuses fires nothing
                    continue
                _note(table, value, decision, name, fired, taken)
        out[table_id] = Coverage(folder or table_id, len(per_case), _frozen(fired), _frozen(taken))
    return out


def _note(table: Any, value: Any, decision: Any, case: str, fired: dict, taken: dict) -> None:
    """Add `case` to the rows that fired on `value` and to those that held on it but lost to an
    earlier row (each case once per row, however often the table is asked). The default holds
    on everything, so it is only ever counted as fired."""
    won = [f.row.id for f in decision.fired]
    for row_id in won:
        _add(fired, row_id, case)
    for row in table.rows:
        if row.id not in won and _holds(row, value):
            _add(taken, row.id, case)


def _holds(row: Any, value: Any) -> bool:
    try:
        return bool(row.when.test(value))
    except Exception:  # noqa: BLE001 - a value a row cannot read holds nothing
        return False


def _add(named: dict, row_id: str, case: str) -> None:
    names = named.setdefault(row_id, [])
    if not names or names[-1] != case:
        names.append(case)


def _frozen(named: dict) -> dict:
    return {k: tuple(v) for k, v in named.items()}


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
            role: Any = message.get("role")                  # a corpus message as written: checked by the scan
            state, content = message.get("state", "sent"), message["content"]
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
