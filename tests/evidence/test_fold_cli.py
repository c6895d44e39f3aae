"""`groundrules fold FILE|-`: the envelope on success, the refusal envelope and exit 1 otherwise."""
from __future__ import annotations

import io
import json
import sys

from groundrules.cli.main import main

from fold_support import CASES, group


def run(argv, capsys, stdin=None):
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
    try:
        rc = main(argv)
    finally:
        sys.stdin = sys.__stdin__
    out, err = capsys.readouterr()
    return rc, out, err


def test_fold_prints_the_envelope(tmp_path, capsys, rulebook):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(group("seed_contact")["phone_declined"], ensure_ascii=False), encoding="utf-8")
    rc, out, err = run(["--rules", str(CASES.parents[2]), "fold", str(path)], capsys)
    envelope = json.loads(out)
    assert rc == 0 and err == ""
    assert list(envelope) == ["ok", "data", "warnings", "error", "rulebook"]
    assert envelope["ok"] is True and envelope["rulebook"] == rulebook.version
    assert envelope["data"]["state"]["scopes"]["demand_1"]["slots"]["phone"]["status"] == "declined"


def test_fold_refusal_is_an_error_envelope(capsys):
    payload = json.dumps(group("refusals")["LOCK_DROPPED.no_disposition"], ensure_ascii=False)
    rc, out, err = run(["fold", "-"], capsys, stdin=payload)
    envelope = json.loads(out)
    assert rc == 1 and envelope["ok"] is False and envelope["data"] is None
    assert envelope["error"]["code"] == "LOCK_DROPPED"


def test_fold_bad_json_is_one_line_on_stderr(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text("{", encoding="utf-8")
    rc, out, err = run(["fold", str(path)], capsys)
    assert rc == 1 and out == "" and err.count("\n") == 1 and "Traceback" not in err
