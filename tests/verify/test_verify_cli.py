"""`groundrules verify FILE|-`: the envelope on stdout, exit 0 when the candidate verifies."""
from __future__ import annotations

import io
import json
import shutil

import pytest

from groundrules.cli.main import main
from verify_seed_examples import CANDIDATE, MISSING_CANDIDATE, MISSING_ERROR, MISSING_REQUEST, REQUEST, RESULT
from verify_support import ROOT, VERIFY_TABLES, cases, expectations


@pytest.fixture(scope="module")
def rules_dir(tmp_path_factory):
    """A rules folder holding this part's tables only (the engine's schemas beside them)."""
    root = tmp_path_factory.mktemp("verify_rules")
    shutil.copytree(ROOT / "schemas", root / "schemas")
    for name in VERIFY_TABLES:
        src, dst = ROOT / name, root / name
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst)
    return root


def run(rules_dir, payload, capsys, *flags, stdin=False, monkeypatch=None):
    if stdin:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(json.dumps(payload).encode("utf-8"))))
        target = "-"
    else:
        target = str(rules_dir / "payload.json")
        (rules_dir / "payload.json").write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
    code = main(["--rules", str(rules_dir), "verify", *flags, target])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out else None), err


def test_verified_candidate_prints_the_seed_result(rules_dir, capsys):
    code, env, _ = run(rules_dir, {"request": REQUEST, "instance": "meeting_time", "candidate": CANDIDATE}, capsys)
    assert code == 0
    assert (env["ok"], env["data"], env["error"], env["warnings"]) == (True, RESULT, None, [])
    assert env["rulebook"]


def test_missing_material_prints_the_seed_error(rules_dir, capsys, monkeypatch):
    payload = {"request": MISSING_REQUEST, "instance": "meeting_time", "candidate": MISSING_CANDIDATE}
    code, env, _ = run(rules_dir, payload, capsys, stdin=True, monkeypatch=monkeypatch)
    assert code == 1
    assert (env["ok"], env["data"], env["error"]) == (False, None, MISSING_ERROR)


def test_report_flag_adds_grounding(rules_dir, capsys):
    code, env, _ = run(rules_dir, {"request": REQUEST, "instance": "meeting_time", "candidate": CANDIDATE},
                       capsys, "--report")
    assert code == 0 and env["data"]["data"] == RESULT
    assert [(g["start"], g["end"]) for g in env["data"]["grounding"]] == [(21, 26), (7, 26)]


@pytest.mark.parametrize("payload", [
    {"request": {"input": "x", "fields": ["orderID"]}, "instance": "order_note", "candidate": {}},
    {"request": {"input": "x"}, "candidate": {}},
    {"request": {"input": "x"}, "instance": "order_note", "schema": {}, "candidate": {}},
    {"request": {"input": "x"}, "instance": "order_note", "candidate": {}, "extra": 1},
    [],
])
def test_bad_arguments_are_an_invalid_argument_envelope(rules_dir, capsys, payload):
    code, env, err = run(rules_dir, payload, capsys)
    assert code == 1 and err == ""
    assert env["ok"] is False and env["error"]["code"] == "INVALID_ARGUMENT"
    assert str(rules_dir) not in env["error"]["message"]


def test_unreadable_input_is_one_line_on_stderr(rules_dir, capsys):
    (rules_dir / "bad.json").write_text("{not json", encoding="utf-8")
    code = main(["--rules", str(rules_dir), "verify", str(rules_dir / "bad.json")])
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1


def test_help_names_the_payload(capsys):
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    assert "instance" in capsys.readouterr().out


@pytest.mark.parametrize("group,name", [("prohibitions", "dropped"), ("withdrawals", "zh_xian_bu_gai_le_fix_refused"),
                                        ("joins", "joined_slash"), ("prohibitions", "kept_zh"),
                                        ("withdrawals", "not_zh_bu_yao_ji")])
def test_seed002_paraphrases_answer_on_the_command_line_as_their_cases_expect(rules_dir, capsys, group, name):
    """Issue 22, item 7: a dropped prohibition, a withdrawn action carried on and a joined target
    are refused (exit 1, repairable MODEL_OUTPUT_INVALID); their kept counterparts pass (exit 0)."""
    expect = expectations(group)[name]
    code, env, _ = run(rules_dir, cases(group)[name], capsys, "--report")
    assert code == (0 if expect["ok"] else 1) and env["ok"] is expect["ok"]
    assert [i["code"] for i in (env["data"]["error"] or {}).get("issues", [])] == expect["issues"]
    if not expect["ok"]:
        assert env["data"]["error"]["code"] == "MODEL_OUTPUT_INVALID" and env["data"]["repairable"] is True

