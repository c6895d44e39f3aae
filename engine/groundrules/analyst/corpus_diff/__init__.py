"""What an edit of the tables changes over the case corpora, for the analyst who made it.

Every decision table (top-level or embedded) is evaluated on its cases (`tests/cases/<table-id>/`)
with the rulebook before and after the edit; the lock tables scan the conversations of
`tests/cases/locks/` and the chat corpora (`tests/cases/lock_chat*/`); the merge policy folds the
payloads of `tests/cases/fold/`; the finding ledger runs the call sequences of
`tests/cases/findings/`, which exercise the transition tables. Each case whose
outcome differs is described the way a person reads it: the primary code, codes added, removed or
reordered, each changed sentence before and after; locks added, removed or changed per message;
slot states, event outcomes and questions per fold case. `text.lines()` prints the same structure.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import corpus, corpus_runs
from ...core.decide import outcome
from ...core.rulebook import Rulebook
from . import decisions, findings, fold, locks


def corpus_diff(before: Rulebook, after: Rulebook, cases: Path) -> dict:
    """The whole effect of going from `before` to `after`, as plain JSON-able data."""
    return {"base": before.version, "current": after.version,
            "edited": edited_tables(before, after) + edited_schemas(before, after),
            "decision_tables": decision_tables(before, after, cases),
            "locks": lock_corpus(before, after, cases),
            "chat": chat_corpus(before, after, cases),
            "fold": fold_corpus(before, after, cases),
            "transitions": findings_corpus(before, after, cases),
            "edited_rows": edited_rows(before, after, cases)}


def edited_tables(before: Rulebook, after: Rulebook) -> list[dict]:
    """Tables added, removed or edited (their YAML data differs), by id."""
    out = []
    for table_id in sorted(set(before.tables) | set(after.tables)):
        old, new = before.sources.get(table_id), after.sources.get(table_id)
        change = "added" if old is None else "removed" if new is None else \
            "edited" if old.data != new.data else ""
        if change:
            source = new or old
            assert source is not None, "the id is a table of one rulebook or the other"
            out.append({"table": table_id, "file": source.file, "change": change})
    return out


def edited_schemas(before: Rulebook, after: Rulebook) -> list[dict]:
    """Schema files added, removed or edited (a contract or a kind's metaschema), by file; `table`
    is null: a schema is no table, but what the tables may read and hold."""
    old, new = before.schemas.by_name, after.schemas.by_name
    out = []
    for name in sorted(set(old) | set(new)):
        change = "added" if name not in old else "removed" if name not in new else \
            "edited" if old[name] != new[name] else ""
        if change:
            out.append({"table": None, "file": f"schemas/{name}", "change": change})
    return out


def decision_tables(before: Rulebook, after: Rulebook, cases: Path) -> list[dict]:
    old = {ref.id: ref for ref in corpus.decision_tables(before)}
    new = {ref.id: ref for ref in corpus.decision_tables(after)}
    out = []
    for table_id in sorted(set(old) | set(new)):
        a, b = old.get(table_id), new.get(table_id)
        values = corpus.table_cases(cases, table_id)
        changes = []
        for name, value in values or ():
            change = decisions.compare(name, outcome(a.table if a is not None else None, value),
                                       outcome(b.table if b is not None else None, value))
            if change is not None:
                changes.append(change)
        ref = b or a
        assert ref is not None, "the id is a table of one rulebook or the other"
        out.append({"table": table_id, "file": ref.file, "key": ref.key,
                    "change": _change(a, b, before, after),
                    "corpus": table_id if values is not None else None, "exercised_by": ref.run_by or None,
                    "cases": len(values or ()), "changes": changes})
    return out


def edited_rows(before: Rulebook, after: Rulebook, cases: Path) -> list[dict]:
    """Each row of a decision table the edit added or changed (its `when`, its outputs, or its
    code's attributes such as a rank or a label), with how many corpus values it holds on: the
    table's own cases, or the values the fold asked an embedded table. A row no value reaches is
    an edit the diff cannot show: `groundrules diff` warns about it instead of a silent zero."""
    old = {ref.id: ref for ref in corpus.decision_tables(before)}
    asked = None
    out = []
    for ref in corpus.decision_tables(after):
        base = old.get(ref.id)
        changed = _changed_rows(base.data(before) if base is not None else None, ref.data(after))
        if not changed:
            continue
        if ref.run_by == corpus.FOLD:
            if asked is None:
                asked = (corpus_runs.fold_evaluations(after, cases) or (0, {}))[1]
            values, where = [v for _, vs in asked.get(ref.id, ()) for v in vs], f"tests/cases/{corpus.FOLD}"
        else:
            values, where = [v for _, v in corpus.table_cases(cases, ref.id) or ()], f"tests/cases/{ref.id}"
        source = after.sources[ref.owner]
        prefix = (ref.key,) if ref.key else ()
        for row in sorted(ref.table.rows, key=lambda r: r.index):
            if row.id not in changed:
                continue
            held = sum(1 for v in values if _holds(row, v))
            out.append({"table": ref.id, "row": row.id, "file": ref.file,
                        "line": source.where(prefix + row.where)[0], "corpus": where, "values": len(values),
                        "exercised": held})
    return out


def _changed_rows(old: dict | None, new: dict) -> set:
    """Ids of the rows of `new` added or changed since `old` (row data, or its code's outputs)."""
    if not isinstance(new, dict):
        return set()
    old = old if isinstance(old, dict) else {}
    old_rows = {r.get("id"): r for r in old.get("rows", ()) if isinstance(r, dict)}
    old_out, new_out = old.get("outputs", {}) or {}, new.get("outputs", {}) or {}
    out = set()
    for row in new.get("rows", ()):
        code = row.get("code", row.get("id"))
        if old_rows.get(row.get("id")) != row or old_out.get(code) != new_out.get(code):
            out.add(row.get("id"))
    return out


def _holds(row: Any, value: Any) -> bool:
    try:
        return bool(row.when.test(value))
    except Exception:  # noqa: BLE001 - a corpus may hold values the row cannot read (a date with no now)
        return False


def lock_corpus(before: Rulebook, after: Rulebook, cases: Path) -> dict:
    convs = corpus.lock_cases(cases)
    changes = [c for name, messages in convs or ()
               if (c := locks.compare(name, locks.scan(before, messages), locks.scan(after, messages)))]
    return {"corpus": corpus.LOCKS if convs is not None else None, "cases": len(convs or ()),
            "changes": changes}


def chat_corpus(before: Rulebook, after: Rulebook, cases: Path) -> dict:
    """The lock tables over the chat corpora, one conversation per category file."""
    convs = corpus.chat_cases(cases)
    changes = [c for name, messages in convs or ()
               if (c := locks.compare(name, locks.scan(before, messages), locks.scan(after, messages)))]
    return {"corpus": corpus.CHATS if convs is not None else None, "cases": len(convs or ()), "changes": changes}


def findings_corpus(before: Rulebook, after: Rulebook, cases: Path) -> dict:
    """The finding ledger's call sequences, which exercise the transition tables (and the ledger's
    decision tables): each call whose outcome, moves or warnings changed."""
    old, new = corpus_runs.findings_runs(before, cases), corpus_runs.findings_runs(after, cases)
    if old is None or new is None:
        return {"corpus": None, "cases": 0, "changes": []}
    changes = [c for name in old if (c := findings.compare(name, findings.summary(old[name]),
                                                            findings.summary(new.get(name))))]
    return {"corpus": corpus.FINDINGS, "cases": len(old), "changes": changes}


def fold_corpus(before: Rulebook, after: Rulebook, cases: Path) -> dict:
    payloads = corpus.fold_cases(cases)
    changes = [c for name, payload in payloads or ()
               if (c := fold.compare(name, fold.run(before, payload), fold.run(after, payload)))]
    return {"corpus": corpus.FOLD if payloads is not None else None, "cases": len(payloads or ()),
            "changes": changes}


def _change(a, b, before: Rulebook, after: Rulebook) -> str:
    if a is None:
        return "added"
    if b is None:
        return "removed"
    return "edited" if a.data(before) != b.data(after) else ""
