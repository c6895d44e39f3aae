"""Lock-table edits an analyst makes, chosen from what the tables and the lock corpus hold: the set a
pattern reads, a character of it that a corpus lock depends on, never a line of a file searched for
by its text (issue 23, item 4). What the edit changes is read back with the engine."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from groundrules import lock_messages
from groundrules.analyst import corpus
from table_edits import TableFile

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "cases"


@dataclass(frozen=True, eq=False)
class SetEdit:
    """One character taken out of a lock table's named set (`sets.<name>`)."""

    table: str                # the lock table's id
    file: str                 # its file, relative to the tables' root
    name: str                 # the set
    char: str                 # the character taken out
    patterns: frozenset       # the table's patterns that read the set ('<table>.<pattern>')
    lock: dict                # a valid corpus lock the edit should change
    case: str                 # the lock corpus conversation it is in

    def apply(self, root: Path) -> None:
        table = TableFile(root / self.file)
        table.write_scalar(("sets", self.name), table.at("sets", self.name).replace(self.char, ""))


def _locks(book):
    """(case, lock, table id, table file, the table's YAML, the lock's pattern entry) of every valid
    lock of the lock corpus, in corpus order."""
    for case, messages in corpus.lock_cases(CASES):
        for lock in lock_messages(messages, book):
            if not lock["valid"]:
                continue
            table_id, pattern = lock["pattern"].split(".", 1)
            table = book.table(table_id)
            data = TableFile(ROOT / table.file).data
            entry = next(p for p in data["patterns"] if p["id"] == pattern)
            yield case, lock, table_id, table.file, data, entry


def _readers(table_id: str, data: dict, name: str) -> frozenset:
    return frozenset(f"{table_id}.{p['id']}" for p in data["patterns"] if "{" + name + "}" in str(p))


def _first_that_changes(book, root: Path, candidates) -> SetEdit:
    """The first candidate edit that, made in the copy of the tables at `root`, changes its lock
    (the copy is left with that edit made, and only that one)."""
    from groundrules import load_rulebook
    for edit in candidates:
        table = TableFile(root / edit.file)
        before = table.text
        edit.apply(root)
        messages = dict(corpus.lock_cases(CASES))[edit.case]
        after = lock_messages(messages, load_rulebook(root))
        same = [k for k in after if k["locator"] == edit.lock["locator"] and k["pattern"] == edit.lock["pattern"]]
        if same != [edit.lock]:
            return edit
        table.path.write_text(before, encoding="utf-8")
    raise AssertionError("no candidate edit changes a corpus lock")


def separator_edit(book, root: Path) -> SetEdit:
    """A separator dropped, in the copy of the tables at `root`: a character between the digits of a
    valid corpus lock's quote, taken out of the set its pattern's regex allows there."""
    def candidates():
        for case, lock, table_id, file, data, entry in _locks(book):
            quote = lock["quote"]
            for n, char in enumerate(quote[1:-1], 1):
                if not (quote[n - 1].isdigit() and quote[n + 1].isdigit()) or char.isalnum() or char.isspace():
                    continue
                for name, chars in (data.get("sets") or {}).items():
                    if char in chars and "{" + name + "}" in entry["regex"]:
                        yield SetEdit(table_id, file, name, char, _readers(table_id, data, name), lock, case)
    return _first_that_changes(book, root, candidates())


def check_edit(book, root: Path) -> tuple[SetEdit, int, str]:
    """A character a `char_at` check allows taken out of its set, in the copy of the tables at
    `root`, where a valid corpus lock has it: (the edit, the check's index, the reason it refuses with)."""
    found = {}

    def candidates():
        for case, lock, table_id, file, data, entry in _locks(book):
            sets = data.get("sets") or {}
            for check in entry.get("validate", ()):
                named, index = str(check.get("in", "")).strip("{}"), check.get("index")
                if (check.get("check") == "char_at" and len(sets.get(named, "")) > 1     # left non-empty
                        and lock["normalized_value"][index] in sets[named]):
                    edit = SetEdit(table_id, file, named, lock["normalized_value"][index],
                                   _readers(table_id, data, named), lock, case)
                    found[edit] = (index, check["reason"])
                    yield edit
    edit = _first_that_changes(book, root, candidates())
    return (edit, *found[edit])


def changed_cases(before, after) -> list[str]:
    """The lock corpus conversations whose locks differ between two rulebooks, in corpus order."""
    return [case for case, messages in corpus.lock_cases(CASES)
            if lock_messages(messages, before) != lock_messages(messages, after)]
