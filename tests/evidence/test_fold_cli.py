"""`groundrules fold FILE|-`: the envelope on success, the refusal envelope and exit 1 otherwise."""
from __future__ import annotations

import io
import json
import sys

import pytest

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



@pytest.mark.parametrize("raw", [
    b"\x00\xff\xfe binary",
    b"[" * 100_000 + b"]" * 100_000,
    b'{"now": "2024-05-01T12:00:00+08:00", "records": [{"id": "E1", "type": "message", "role": "user", '
    b'"state": "sent", "content": "\\udc00"}], "interpretations": []}',
    b'{"now": 5, "records": {}, "interpretations": null}',
    b'{"now": "2024-13-01T00:00:00+08:00", "records": [], "interpretations": []}',
    b'{"now": "2024-05-01T12:00:00+08:00", "records": [{"id": "E1", "type": "lock", "lock": []}], '
    b'"interpretations": []}',
    b'{"now": "2024-05-01T12:00:00+08:00", "records": [], "interpretations": [{"id": "I", "events": '
    b'[{"id": "e", "type": "set", "slot": "region", "value": 1e999, "evidence": ["x"]}], "dispositions": []}]}',
    b"",
])
def test_no_input_gives_a_traceback(tmp_path, capsys, raw):
    """Whatever the bytes: exit 1 with an error envelope whose code is catalogued, or one line on stderr."""
    path = tmp_path / "p.json"
    path.write_bytes(raw)
    rc, out, err = run(["fold", str(path)], capsys)
    assert rc == 1 and "Traceback" not in out + err
    if out:
        # the fold's own check, or the registry's of what fold_evidence lists (now is a timestamp)
        assert json.loads(out)["error"]["code"] in ("PAYLOAD_INVALID", "INVALID_ARGUMENT") and err == ""
    else:
        assert err.count("\n") == 1


def test_a_ten_megabyte_message_folds(tmp_path, capsys):
    content = "你好，我想咨询一下产品的交付时间。" * 600_000 + "地区是 A 地"
    payload = {"now": "2024-05-01T12:00:00+08:00",
               "records": [{"id": "E1", "type": "message", "role": "user", "state": "sent", "content": content}],
               "interpretations": [{"id": "I1", "dispositions": [], "events": [
                   {"id": "e1", "type": "set", "slot": "region", "value": "A 地", "evidence": [
                       {"message_id": "E1", "start": len(content) - 3, "end": len(content), "quote": "A 地"}]}]}]}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
    rc, out, err = run(["fold", str(path)], capsys)
    assert (rc, err) == (0, "")
    assert json.loads(out)["data"]["state"]["scopes"]["demand_1"]["slots"]["region"]["value"] == "A 地"
