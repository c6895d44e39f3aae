"""Each tool's MCP annotations (its schema file's `annotations`) against what the tool does.

Hosts decide what needs a person's confirmation from these hints, so each one is checked against
behaviour, both ways: every case of the parity corpus (tests/api/test_parity.py, which drives
every tool with good and bad arguments) runs on its own copy of a prepared ledger while a spy
reads the whole environment (the SQLite file, dumped, and every file under the project root)
before the call, after it and after the same call again. A tool that changed anything is never
readOnlyHint; a read-only tool never changed anything; a tool that is not destructive only adds
(no text stored before is gone, files only grow); an idempotent tool's repeat changes nothing;
no tool opens a network connection (openWorldHint false). A hint that claims a write, a
destruction or a non-idempotent repeat must be shown by some case, so no hint is a guess.
"""
from __future__ import annotations

import re
import socket
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))     # the parity corpus

from groundrules import Caller, EvidenceLedger, FindingLedger, Service, default_rulebook  # noqa: E402
from groundrules.api import TOOLS  # noqa: E402
from groundrules.findings import SequentialIds, StepClock  # noqa: E402
from test_parity import CASES, CLOCK, IDS, OPERATOR, PROJECT, _fresh  # noqa: E402
from test_parity import prepared  # noqa: E402,F401  (the fixture)

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


@dataclass(frozen=True)
class Environment:
    """What a tool can change: the database's rows (every table, SQLite's own included) and files."""

    dump: frozenset
    texts: frozenset              # the text values of the ledgers' own tables
    files: tuple

    @classmethod
    def read(cls, db: Path, root: Path) -> "Environment":
        conn = sqlite3.connect(db)
        try:
            dump = frozenset(conn.iterdump())
            virtual = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                                  "AND sql LIKE 'CREATE VIRTUAL TABLE%'")]
            own = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                   if not r[0].startswith("sqlite_") and not any(r[0] == v or r[0].startswith(v + "_")
                                                                 for v in virtual)]
            texts = frozenset(v for table in own for row in conn.execute(f'SELECT * FROM "{table}"')
                              for v in row if isinstance(v, str))
        finally:
            conn.close()
        files = tuple((p.relative_to(root).as_posix(), p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file())
        return cls(dump, texts, files)

    def only_adds_to(self, before: "Environment") -> bool:
        """Nothing stored before is gone: every text is still there, every file still starts as it did."""
        now = dict(self.files)
        return before.texts <= self.texts and all(name in now and now[name].startswith(content)
                                                  for name, content in before.files)


@dataclass(frozen=True)
class Observed:
    tool: str
    ok: bool
    changed: bool
    only_added: bool
    repeat_changed: bool


@pytest.fixture(scope="module")
def observed(prepared, monkeypatch_module) -> list[Observed]:
    connects: list = []
    monkeypatch_module.setattr(socket.socket, "connect", lambda self, *a: connects.append(a) or _refuse())
    out = []
    for index, (tool, arguments, role, _) in enumerate(CASES):
        db, root = _fresh(prepared, f"spy-{index}")
        clock, ids = StepClock(CLOCK), SequentialIds(start=IDS)
        findings = FindingLedger(db, clock=clock, ids=ids, rules_root=root)
        evidence = EvidenceLedger(db, clock=clock, ids=lambda: ids.new("R"))
        service = Service(default_rulebook(), findings=findings, evidence=evidence)
        caller = Caller(OPERATOR, role, (PROJECT,))
        try:
            before = Environment.read(db, root)
            first = service.call(tool, arguments, caller)
            after = Environment.read(db, root)
            service.call(tool, arguments, caller)
            again = Environment.read(db, root)
        finally:
            findings.close()
            evidence.close()
        out.append(Observed(tool, first["ok"], after != before, after.only_adds_to(before), again != after))
    assert connects == []
    return out


def _refuse():
    raise OSError("no network for a tool")


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.fixture(scope="module")
def hints() -> dict[str, dict]:
    return {name: default_rulebook().schemas.get(f"tools/{name}.schema.json").get("annotations", {}) for name in TOOLS}


def test_every_tool_declares_every_hint(hints):
    for name, declared in hints.items():
        assert set(declared) == set(HINTS) and all(isinstance(v, bool) for v in declared.values()), name


def test_a_tool_that_writes_is_never_read_only_and_a_read_only_tool_never_writes(observed, hints):
    for name, declared in hints.items():
        mine = [o for o in observed if o.tool == name]
        if declared["readOnlyHint"]:
            assert not any(o.changed or o.repeat_changed for o in mine), name
        else:
            assert any(o.ok and o.changed for o in mine), f"{name} claims to write and no case shows it"


def test_the_registry_flags_agree_a_quick_or_ledgerless_tool_only_reads(hints):
    for name, tool in TOOLS.items():
        if tool.quick or not tool.ledger:
            assert hints[name]["readOnlyHint"], name


def test_a_tool_that_is_not_destructive_only_adds(observed, hints):
    for name, declared in hints.items():
        mine = [o for o in observed if o.tool == name]
        if declared["destructiveHint"]:
            assert any(o.ok and not o.only_added for o in mine), f"{name} claims to destroy and no case shows it"
        else:
            assert all(o.only_added for o in mine), name


def test_an_idempotent_tool_repeated_changes_nothing_more(observed, hints):
    for name, declared in hints.items():
        mine = [o for o in observed if o.tool == name]
        if declared["idempotentHint"]:
            assert not any(o.repeat_changed for o in mine), name
        else:
            assert any(o.ok and o.repeat_changed for o in mine), f"{name} claims a repeat has effects; none shown"


def test_no_tool_reaches_an_open_world(observed, hints):
    """The fixture refused every socket connection and saw none; so no tool may claim an open world."""
    assert {o.tool for o in observed} >= set(TOOLS)
    assert not any(declared["openWorldHint"] for declared in hints.values())


def test_the_docs_table_is_the_schema_files(hints):
    """docs/mcp-protocol.md lists every tool's hints as its schema file declares them."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "mcp-protocol.md").read_text(encoding="utf-8")
    rows = {m[0]: [v == "yes" for v in m[1:]]
            for m in re.findall(r"^\| `(\w+)` \| (yes|no) \| (yes|no) \| (yes|no) \| (yes|no) \|$", page, re.M)}
    assert rows == {name: [declared[h] for h in HINTS] for name, declared in hints.items()}
