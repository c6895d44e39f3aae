"""A record that breaks several rules at once answers one code on every path: the fold, the ledger's
append (all at once, one by one, with append_message), the tools (fold_evidence, append_evidence)
and the CLI (`groundrules fold`, `groundrules evidence append`). Which code is the refusal
catalogue's to say (evidence_refusals.yaml `precedence`), not the order in which a path happens to
run its checks: reorder the list in a copy of the tables and every path follows."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from groundrules import Caller, EvidenceLedger, GroundrulesError, Service, load_rulebook, lock
from groundrules.cli.main import main
from table_edits import TableFile

from fold_support import outcome

ROOT = Path(__file__).resolve().parents[2]
NOW = "2024-05-01T12:00:00+08:00"
CLOCK = "2024-05-01T10:00:00+08:00"
TEXT = "我的手机是 138 0013-8000"
MESSAGE = {"id": "E44", "type": "message", "role": "user", "state": "sent", "message_id": "m_44", "content": TEXT}
AGENT = Caller("agent-7", "agent", ("alpha",))


def cases(rulebook) -> dict[str, tuple[list, set]]:
    """why -> (a message and a lock record that breaks the rules named, the codes of those rules)."""
    (found,) = lock({"id": "m_44", "role": "user", "content": TEXT}, rulebook)
    forged = dict(found, normalized_value="13900000000")          # not the engine's lock: LOCK_MISMATCH
    elsewhere = dict(found, locator={"message_id": "m_44", "start": 0, "end": 5}, quote="我的手机")
    return {
        "a lock record reusing the message's record id": (
            [MESSAGE, {"id": "E44", "type": "lock", "lock": dict(forged, id="L1")}], {"DUPLICATE_ID", "LOCK_MISMATCH"}),
        "a lock named by the message's id": (
            [MESSAGE, {"id": "L1", "type": "lock", "lock": dict(forged, id="m_44")}], {"DUPLICATE_ID", "LOCK_MISMATCH"}),
        "a reused id quoting what the message does not hold there": (
            [MESSAGE, {"id": "E44", "type": "lock", "lock": dict(elsewhere, id="L1")}], {"DUPLICATE_ID", "QUOTE_MISMATCH"}),
        "a lock of a message nobody sent, under a reused id": (
            [MESSAGE, {"id": "E44", "type": "lock", "lock": dict(forged, id="L1",
                                                                 locator=dict(found["locator"], message_id="m_9"))}],
            {"DUPLICATE_ID", "UNKNOWN_EVIDENCE"}),
    }


def ledger(rulebook) -> EvidenceLedger:
    n = iter(range(1, 10**6))
    return EvidenceLedger(None, ids=lambda: f"R{next(n)}", clock=lambda: CLOCK, rulebook=rulebook)


def code(fn) -> str:
    with pytest.raises(GroundrulesError) as info:
        fn()
    return info.value.code


def cli(capsys, tmp_path: Path, *argv: str) -> dict:
    main([str(a) for a in argv])
    return json.loads(capsys.readouterr()[0])


def answers(rulebook, records: list, tmp_path: Path, capsys, rules: Path | None = None) -> dict[str, str]:
    """path -> the code it answers for the records (append_message only where the lock's own id is
    the name it reuses: it files a lock under the lock's id)."""
    tmp_path.mkdir()
    payload = {"now": NOW, "records": records, "interpretations": []}
    service = Service(rulebook, evidence=ledger(rulebook))
    tool_ledger = Service(rulebook, evidence=ledger(rulebook))
    tool_ledger.call("append_evidence", {"record": records[0]}, AGENT)
    (tmp_path / "payload.json").write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
    for n, record in enumerate(records):
        (tmp_path / f"record{n}.json").write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    db = tmp_path / "ledger.db"
    rules_args = ("--rules", rules) if rules else ()
    clock = ("--step-clock", "2024-05-01T02:00:00Z")
    cli(capsys, tmp_path, *rules_args, "evidence", "append", tmp_path / "record0.json", "--db", db, *clock)

    def one_by_one() -> None:
        alone = ledger(rulebook)
        for record in records:
            alone.append(record)
    return {
        "fold": outcome(payload, rulebook).get("error", {}).get("code"),
        "EvidenceLedger.append_all": code(lambda: ledger(rulebook).append_all(records)),
        "EvidenceLedger.append": code(one_by_one),
        "EvidenceLedger.append_message": code(lambda: ledger(rulebook).append_message(records[0], [records[1]["lock"]]))
        if records[1]["lock"]["id"] in (records[0]["id"], records[0]["message_id"]) else None,
        "fold_evidence": service.call("fold_evidence", payload, AGENT)["error"]["code"],
        "append_evidence": tool_ledger.call("append_evidence", {"record": records[1]}, AGENT)["error"]["code"],
        "groundrules fold": cli(capsys, tmp_path, *rules_args, "fold", tmp_path / "payload.json")["error"]["code"],
        "groundrules evidence append": cli(capsys, tmp_path, *rules_args, "evidence", "append", tmp_path / "record1.json",
                                           "--db", db, *clock)["error"]["code"],
    }


def first(precedence: tuple, broken: set) -> str:
    return min(broken, key=precedence.index)


def test_a_record_breaking_two_rules_answers_the_code_the_catalogue_puts_first_on_every_path(
        rulebook, tmp_path, capsys):
    precedence = rulebook.table("evidence_refusals").precedence
    for n, (why, (records, broken)) in enumerate(cases(rulebook).items()):
        assert broken <= set(precedence), why
        got = {path: c for path, c in answers(rulebook, records, tmp_path / f"case{n}", capsys).items() if c is not None}
        assert set(got.values()) == {first(precedence, broken)}, (why, got)


def test_reordering_the_precedence_reorders_the_answer_on_every_path(rulebook, tmp_path, capsys):
    root = tmp_path / "tables"
    for folder in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / folder, root / folder)
    table = TableFile(root / "rules" / "evidence_refusals.yaml")
    precedence = list(table.at("precedence"))
    table.swap_items(("precedence",), precedence.index("DUPLICATE_ID"), precedence.index("LOCK_MISMATCH"))
    edited = load_rulebook(root)
    assert edited.table("evidence_refusals").precedence.index("LOCK_MISMATCH") < \
        edited.table("evidence_refusals").precedence.index("DUPLICATE_ID")
    records, broken = cases(edited)["a lock record reusing the message's record id"]
    got = {path: c for path, c in answers(edited, records, tmp_path / "run", capsys, rules=root).items() if c is not None}
    assert set(got.values()) == {"LOCK_MISMATCH"}, got


def test_a_precedence_naming_no_code_of_the_catalogue_fails_the_load_at_its_item(tmp_path):
    root = tmp_path / "tables"
    for folder in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / folder, root / folder)
    table = TableFile(root / "rules" / "evidence_refusals.yaml")
    table.add_item(("precedence",), "LOCK_MISMATCHED")
    line, col = table.source.positions[("precedence", len(table.at("precedence")) - 1)]
    with pytest.raises(GroundrulesError) as info:
        load_rulebook(root)
    [problem] = info.value.problems
    assert (problem.file, problem.line, problem.column, problem.code) == (
        "rules/evidence_refusals.yaml", line, col, "unknown-code")
    assert "LOCK_MISMATCH" in problem.hint
