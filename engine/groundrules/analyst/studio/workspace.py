"""The editor's state and every action of its page, as plain functions of JSON-able values.

The edited copy of each table lives here, in memory, until Save: every check (lint, the table's
inline examples through the gate, the corpus diff against the saved files, the simulator) runs on
the rulebook loaded with those copies standing in for their files (`load(..., overrides=...)`);
the file is written only by `save`, and only when lint finds no error anywhere. Only the tables
under the project's rules/ and locks/ are editable, named exactly as the loader names them: a path
from the page is looked up in that list, never joined to the root.
"""
from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping

from . import grid, simulate, yamltext
from .. import gate
from ..corpus_diff import (decision_tables, edited_rows, edited_tables, fold_corpus, findings_corpus,
                           lock_corpus, chat_corpus, text as diff_text)
from ..lint import lint
from ...core import codes
from ...core.errors import GroundrulesError, RulesError
from ...core.resources import TABLE_DIRS
from ...core.rulebook import Rulebook, load
from ...core.tables import table_files

# the kinds the editor opens: those an analyst edits as grids of rows
KINDS = ("decision_table", "lock_patterns", "transition_table", "merge_policy")
# what part of the corpus diff runs a table of each kind (beside its decision tables' corpora)
CORPORA: dict[str, tuple[tuple[str, Callable], ...]] = {
    "decision_table": (),
    "lock_patterns": (("locks", lock_corpus), ("chat", chat_corpus)),
    "merge_policy": (("fold", fold_corpus),),
    "transition_table": (("transitions", findings_corpus),),
}
NOT_YAML = "not-yaml"


class StudioRefusal(GroundrulesError):
    """A request the editor will not carry out (a file it does not edit, an edit that cannot be
    made); its message names no path outside the project."""

    def __init__(self, message: str):
        super().__init__(codes.INVALID_ARGUMENT, message)


class Workspace:
    """One project's tables, their unsaved copies, and what the page asks of them."""

    def __init__(self, root: Path, cases: Path | None = None,
                 decisions: Callable[[dict], Mapping[str, Any]] | None = None):
        self.root = Path(root).resolve()
        self.cases = cases if cases is not None else self.root / "tests" / "cases"
        self.decisions = decisions        # (read_decisions arguments) -> envelope, as a reviewer
        self.texts: dict[str, str] = {}   # display path -> the edited copy
        self._base: tuple[tuple, Rulebook] | None = None
        self._edited_book: tuple[tuple, Rulebook] | None = None

    # ---- the tables --------------------------------------------------------------------------

    def files(self) -> list[dict]:
        """Every editable table file: its path, table id, kind and title, and whether it has edits."""
        out = []
        for display, path in self._paths().items():
            data = _head(path)
            if data.get("kind") in KINDS:
                out.append({"file": display, "table": data.get("id"), "kind": data.get("kind"),
                            "title": data.get("title", ""), "edited": display in self.texts})
        return out

    def _paths(self) -> dict[str, Path]:
        return {p.relative_to(self.root).as_posix(): p for p in table_files(self.root, TABLE_DIRS)}

    def _file(self, file: Any) -> str:
        editable = {f["file"] for f in self.files()}
        if not isinstance(file, str) or file not in editable:
            raise StudioRefusal("only the tables under the project's rules/ and locks/ are editable "
                          f"(decision, lock, transition and merge tables); not {str(file)[:80]!r}")
        return file

    def text(self, file: str) -> str:
        file = self._file(file)
        if file not in self.texts:
            return self._saved(file)
        return self.texts[file]

    def _saved(self, file: str) -> str:
        return self._paths()[file].read_text(encoding="utf-8")

    # ---- actions -----------------------------------------------------------------------------

    def open(self, file: str) -> dict:
        return self.view(self._file(file))

    def edit(self, file: str, path: list, text: str, typed: bool) -> dict:
        """Set the cell at `path` to `text` (read as YAML when `typed`); an empty typed cell removes
        its key. YAML that does not parse is not applied: the cell says why."""
        file = self._file(file)
        current = self.text(file)
        where = tuple(path)
        if typed:
            try:
                value = yamltext.read(text) if text.strip() else None
            except Exception as exc:  # noqa: BLE001 - PyYAML's errors share no root worth naming
                view = self.view(file)
                view["problems"].insert(0, {"file": file, "line": 0, "column": 0, "code": NOT_YAML,
                                            "message": f"this cell is not YAML ({exc.__class__.__name__}); "
                                                       "the table keeps its last value",
                                            "hint": "a value is written as in the table: {field: x, eq: 1}",
                                            "severity": "error", "cell": list(path), "row": list(path[:-1])})
                return view
        else:
            value = text
        try:
            if value is None and isinstance(where[-1], str):
                parent = yamltext.get(yamltext.read(current), where[:-1])
                new = yamltext.remove_key(current, where) if where[-1] in parent else current
            else:
                new = yamltext.set_value(current, where, value)
        except (yamltext.EditError, KeyError, IndexError, TypeError) as exc:
            raise StudioRefusal(f"cannot edit {'.'.join(map(str, path))}: {exc}") from None
        return self._edited(file, new)

    def rows(self, file: str, op: str, section: list, index: int, to: int | None = None) -> dict:
        """Add a row after `index` (-1: at the top), delete row `index`, or move it to `to`."""
        file = self._file(file)
        current, at = self.text(file), tuple(section)
        try:
            holder = yamltext.get(yamltext.read(current), at)
            if op == "add":
                new = yamltext.insert_item(current, at, index + 1, _blank(holder))
            elif op == "delete":
                new = yamltext.delete_item(current, at, index)
            elif op == "move" and to is not None:
                new = yamltext.move_item(current, at, index, to)
            else:
                raise StudioRefusal(f"no row action {op!r}")
        except (yamltext.EditError, KeyError, IndexError, TypeError) as exc:
            raise StudioRefusal(f"cannot {op} row {index} of {'.'.join(map(str, section))}: {exc}") from None
        return self._edited(file, new)

    def revert(self, file: str) -> dict:
        self.texts.pop(self._file(file), None)
        return self.view(file)

    def save(self, file: str) -> dict:
        """Write the edited copy, if lint finds no error in any table with it; else say where."""
        file = self._file(file)
        view = self.view(file, corpus=False)
        if any(p["severity"] == "error" for p in view["problems"]):
            view["saved"] = False
            view["refusal"] = "not saved: lint finds errors (at the marked cells); the file is unchanged"
            return view
        new = self.text(file)
        old = self._saved(file)
        changed = [line for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
                   if line[:1] in "+-" and line[:3] not in ("+++", "---")]
        _write(self._paths()[file], new)
        self.texts.pop(file, None)
        self._base = None
        view.update(saved=True, edited=False, diff=changed)
        return view

    def simulate(self, file: str, table: str, given: dict) -> dict:
        """One input through `table` of the edited rulebook: `given` is {"input": value},
        {"case": name} or {"decision": id}."""
        file = self._file(file)
        try:
            book = self._book()
        except RulesError:
            raise StudioRefusal("the edited tables do not load (lint marks where): the simulator runs once they do") from None
        kinds = dict(simulate.tables_in(book, file))
        if table not in kinds:
            raise StudioRefusal(f"{table!r}: no table of {file} the simulator runs (it runs: {', '.join(kinds)})")
        if "case" in given:
            found = dict(simulate.cases(self.cases, book, table, kinds[table]))
            if given["case"] not in found:
                raise StudioRefusal(f"no case {str(given['case'])[:80]!r} in {table}'s corpus")
            value = found[given["case"]]
        elif "decision" in given:
            value = self._logged(kinds[table], given["decision"])
        else:
            value = given.get("input")
        return simulate.run(book, table, value)

    def inputs(self, file: str) -> dict:
        """What the simulator can run in `file`: per table, its kind and corpus case names; and the
        logged decisions a reviewer may read (when the editor was given a decision log)."""
        file = self._file(file)
        try:
            book = self._book()
        except RulesError:
            book = self.base()
        tables = [{"table": t, "kind": k, "cases": [name for name, _ in simulate.cases(self.cases, book, t, k)]}
                  for t, k in simulate.tables_in(book, file)]
        logged = []
        if self.decisions is not None:
            envelope = self.decisions({"limit": 50})
            if not envelope.get("ok"):
                logged = [{"error": (envelope.get("error") or {}).get("message", "")}]
            else:
                logged = [{"id": d["id"], "tool": d["tool"], "at": d["at"]}
                          for d in envelope["data"]["decisions"]
                          if d["tool"] in {tool for tool, _ in simulate.LOGGED_INPUT.values()}]
        return {"tables": tables, "decisions": logged}

    def _logged(self, kind: str, decision_id: Any) -> Any:
        if self.decisions is None:
            raise StudioRefusal("no decision log: start the studio with --db (and the decision key)")
        envelope = self.decisions({"decision_id": str(decision_id)})
        if not envelope.get("ok"):
            raise StudioRefusal((envelope.get("error") or {}).get("message", "the decision could not be read"))
        found = (envelope["data"]["decisions"] or [None])[0]
        value = simulate.logged_input(kind, found or {})
        if value is None:
            raise StudioRefusal(f"decision {str(decision_id)[:80]} is no call whose input this table reads")
        return value

    # ---- checking ----------------------------------------------------------------------------

    def _edited(self, file: str, new: str) -> dict:
        if new == self._saved(file):
            self.texts.pop(file, None)
        else:
            self.texts[file] = new
        return self.view(file)

    def _overrides(self) -> dict[str, bytes]:
        return {f: t.encode("utf-8") for f, t in self.texts.items()}

    def _book(self) -> Rulebook:
        """The rulebook with the edited copies, kept while neither they nor the saved files change (a
        rulebook compiles each table on first use: the simulator asks the same one again and again)."""
        key = (self._saved_key(), tuple(sorted(self.texts.items())))
        if self._edited_book is None or self._edited_book[0] != key:
            self._edited_book = (key, load(self.root, overrides=self._overrides()))
        return self._edited_book[1]

    def base(self) -> Rulebook:
        """The rulebook of the saved files (what the corpus diff compares with)."""
        saved = self._saved_key()
        if self._base is None or self._base[0] != saved:
            self._base = (saved, load(self.root))
        return self._base[1]

    def _saved_key(self) -> tuple:
        return tuple(sorted((p, os.stat(p).st_mtime_ns, os.stat(p).st_size) for p in map(str, self._paths().values())))

    def view(self, file: str, corpus: bool = True) -> dict:
        """The grids of `file`'s edited copy, lint's problems (each at its cell where it has one),
        the table's inline examples and, with `corpus`, what the edit changes over the corpora."""
        text = self.text(file)
        sections = grid.grids(text)
        report = lint(self.root, overrides=self._overrides())
        problems = [self._placed(p.as_dict(), file, sections) for p in report.problems]
        out = {"file": file, "edited": file in self.texts, "grids": sections, "problems": problems,
               "examples": None, "corpus": None, "lines": text.count("\n")}
        try:
            book = self._book()
        except RulesError:
            return out
        table_id = yamltext.read(text).get("id")
        if table_id in book.tables:
            outcomes = gate.run(book, [table_id])
            out["examples"] = {"passed": sum(o.ok for o in outcomes), "failed": sum(not o.ok for o in outcomes),
                               "failures": [self._placed({"file": o.file, "line": o.line, "column": o.column,
                                                         "code": o.code, "message": f"{o.id}: {o.message}",
                                                         "severity": "error"}, file, sections)
                                            for o in outcomes if not o.ok]}
            if corpus:
                out["corpus"] = self._corpus(book, table_id, book.kinds[table_id])
        return out

    def _corpus(self, book: Rulebook, table_id: str, kind: str) -> dict:
        """What the edited copies change over the corpora that run this table, against the saved files."""
        base = self.base()
        file = book.sources[table_id].file
        diff: dict = {"base": base.version, "current": book.version,
                      "edited": edited_tables(base, book),
                      "decision_tables": [t for t in decision_tables(base, book, self.cases) if t["file"] == file],
                      "edited_rows": [r for r in edited_rows(base, book, self.cases) if r["file"] == file]}
        for part, run in CORPORA[kind]:
            diff[part] = run(base, book, self.cases)
        changed = sum(len(t["changes"]) for t in diff["decision_tables"]) + \
            sum(len(diff[part]["changes"]) for part, _ in CORPORA[kind])
        cases = sum(t["cases"] for t in diff["decision_tables"]) + sum(diff[part]["cases"] for part, _ in CORPORA[kind])
        return {"cases": cases, "changed": changed, "lines": diff_text.lines(diff)}

    @staticmethod
    def _placed(problem: dict, file: str, sections: list[dict]) -> dict:
        cell, row = grid.cell_of(sections, problem["line"]) if problem["file"] == file else (None, None)
        return dict(problem, cell=cell, row=row)


def _blank(holder: Any) -> Any:
    """A new row: {id: new_row_N} in a list of rows, a new name in a mapping, a new word in a list."""
    if isinstance(holder, dict):
        n = next(i for i in range(1, len(holder) + 2) if f"new_{i}" not in holder)
        sample = next(iter(holder.values()), "")
        return {f"new_{n}": {} if isinstance(sample, dict) else ""}
    if holder and isinstance(holder[0], dict):
        ids = {str(r.get("id")) for r in holder if isinstance(r, dict)}
        return {"id": next(f"new_row_{i}" for i in range(1, len(holder) + 2) if f"new_row_{i}" not in ids)}
    return next(f"new_{i}" for i in range(1, len(holder) + 2) if f"new_{i}" not in holder)


def _head(path: Path) -> dict:
    """A table file's kind, id and title (the first lines that name them), without compiling it."""
    out: dict = {}
    try:
        with path.open(encoding="utf-8") as f:
            for line in f:
                key, sep, rest = line.partition(":")
                if sep and key in ("kind", "id", "title") and key not in out:
                    out[key] = rest.split(" #")[0].strip().strip("'\"")
                if len(out) == 3:
                    break
    except (OSError, UnicodeDecodeError):
        pass
    return out


def _write(path: Path, text: str) -> None:
    """Write whole or not at all: a temporary file beside it, renamed over it."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
