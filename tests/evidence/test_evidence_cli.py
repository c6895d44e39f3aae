"""`groundrules evidence append|interpret|fold`: the stored ledger and its interpretations from the
command line, answering what the registry answers."""
from __future__ import annotations

import json

from groundrules.cli.main import main

NOW = "2024-05-02T00:00:00+08:00"
CLOCK = ("--step-clock", "2024-05-01T02:00:00Z")   # records observed before NOW (a later one is refused)
MESSAGE = {"id": "m_41", "type": "message", "role": "user", "state": "sent", "subject": "demand_1",
           "content": "不方便接电话"}
DECLINE = {"id": "I1", "events": [{"id": "e1", "type": "decline", "slot": "phone", "evidence": ["m_41"]}],
           "dispositions": []}


def run(capsys, *argv: str) -> dict:
    main(list(argv))
    out, _ = capsys.readouterr()
    return json.loads(out)


def test_interpret_stores_and_fold_folds_the_stored(tmp_path, capsys):
    db = str(tmp_path / "ledger.db")
    files = {}
    for name, value in (("message", MESSAGE), ("decline", DECLINE), ("given", [DECLINE])):
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    assert run(capsys, "evidence", "append", str(files["message"]), "--db", db, *CLOCK)["ok"]
    empty = run(capsys, "evidence", "fold", "--now", NOW, "--db", db)
    assert empty["ok"] and empty["data"]["events"] == []
    stored = run(capsys, "evidence", "interpret", str(files["decline"]), "--db", db)
    assert stored["ok"] and stored["data"]["id"] == "I1"
    again = run(capsys, "evidence", "interpret", str(files["decline"]), "--db", db)
    assert again["error"]["code"] == "DUPLICATE_ID"
    folded = run(capsys, "evidence", "fold", "--now", NOW, "--db", db)
    assert folded == run(capsys, "evidence", "fold", "--now", NOW, "--interpretations", str(files["given"]), "--db", db)
    assert [e["id"] for e in folded["data"]["events"]] == ["e1"]
