"""`groundrules lock FILE|-`: the envelope on stdout, refusals as an error envelope, bad input as one line."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from groundrules import load_rulebook, lock, lock_messages
from groundrules.cli.main import main
from said import said, words

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def rules_dir(tmp_path):
    """A rules folder holding only the lock tables (and who may call the tool), so other parts'
    tables cannot interfere."""
    (tmp_path / "schemas").symlink_to(ROOT / "schemas")
    (tmp_path / "locks").symlink_to(ROOT / "locks")
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "roles.yaml").symlink_to(ROOT / "rules" / "roles.yaml")
    (tmp_path / "rules" / "messages.yaml").symlink_to(ROOT / "rules" / "messages.yaml")
    return tmp_path


def run(rules_dir, capsys, payload, raw: str | None = None):
    path = rules_dir / "in.json"
    path.write_text(raw if raw is not None else json.dumps(payload, ensure_ascii=False), encoding="utf-8")
    code = main(["--rules", str(rules_dir), "lock", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def test_one_message(rules_dir, capsys):
    message = {"id": "m1", "role": "user", "content": "不方便接电话，微信 wx_wang01"}
    code, out, err = run(rules_dir, capsys, message)
    env = json.loads(out)
    book = load_rulebook(rules_dir)
    assert (code, err) == (0, "")
    assert list(env) == ["ok", "data", "warnings", "error", "rulebook"]
    assert env["ok"] is True and env["rulebook"] == book.version
    assert env["data"] == {"locks": lock(message, book)}
    assert "wx_wang01" in out and "\\u" not in out          # UTF-8, not ASCII escapes


def test_messages_list_and_stdin(rules_dir, capsys, monkeypatch):
    doc = {"messages": [{"id": "m1", "role": "user", "content": "手机 13812345678"},
                        {"id": "a1", "role": "assistant", "content": "「需求摘要」", "state": "draft"}]}
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(json.dumps(doc).encode())))
    code = main(["--rules", str(rules_dir), "lock", "-"])
    env = json.loads(capsys.readouterr().out)
    assert code == 0 and env["data"] == {"locks": lock_messages(doc["messages"], load_rulebook(rules_dir))}
    assert [c["kind"] for c in env["data"]["locks"]] == ["phone"]


def test_refused_message_prints_an_error_envelope(rules_dir, capsys):
    code, out, err = run(rules_dir, capsys, {"id": "m1", "role": "bot", "content": "x"})
    env = json.loads(out)
    assert code == 1 and err == ""
    assert env["ok"] is False and env["data"] is None
    assert env["error"]["code"] == "INVALID_MESSAGE" and env["error"]["field"] == "role"


def test_invalid_json_is_one_line_on_stderr(rules_dir, capsys):
    code, out, err = run(rules_dir, capsys, None, raw='{"id": ')
    assert code == 1 and out == "" and err.count("\n") == 1 and all(w in err for w in words("usage.json_invalid"))


def test_missing_file_is_one_line(rules_dir, capsys):
    code = main(["--rules", str(rules_dir), "lock", str(rules_dir / "nope.json")])
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and err.count("\n") == 1 \
        and said("usage.no_such_file", input=str(rules_dir / "nope.json")) in err


def test_byte_identical_reruns(rules_dir, capsys):
    message = {"id": "m1", "role": "user", "content": "微信 13812345678，邮箱 a@b.com，QQ 1234567"}
    first = run(rules_dir, capsys, message)
    second = run(rules_dir, capsys, message)
    assert first == second and first[0] == 0


def test_a_timeout_is_an_error_envelope_naming_the_pattern(tmp_path, capsys):
    (tmp_path / "schemas").symlink_to(ROOT / "schemas")
    (tmp_path / "locks").mkdir()
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "roles.yaml").symlink_to(ROOT / "rules" / "roles.yaml")
    (tmp_path / "rules" / "messages.yaml").symlink_to(ROOT / "rules" / "messages.yaml")
    (tmp_path / "locks" / "slow.yaml").write_text(
        "kind: lock_patterns\nid: slow\ntimeout_ms: 5\ninvalid_reasons: {}\npatterns:\n"
        "  - id: bad\n    kind: demo\n    regex: '(x+x+)+y'\n    counts_in: {roles: [user], states: [sent]}\n"
        "    normalize: []\n    validate: []\n", encoding="utf-8")
    code, out, err = run(tmp_path, capsys, {"id": "m1", "role": "user", "content": "x" * 5000})
    env = json.loads(out)
    assert (code, err, env["ok"]) == (1, "", False)
    assert env["error"]["code"] == "LOCK_TIMEOUT" and env["error"]["pattern"] == "slow.bad"


@pytest.mark.parametrize("raw", [
    b"\x00\xff\xfe binary",
    b"[" * 100_000 + b"]" * 100_000,
    b'{"id": "m1", "role": "user", "content": "\\ud800 138"}',
    b'{"id": "m1", "role": "user", "content": NaN}',
    b'{"id": "m1", "role": "user", "content": "x", "state": ' + b"9" * 5000 + b"}",
    b'{"messages": [{"id": 1, "role": ["user"], "content": {"a": 1}}]}',
    b'{"messages": {"id": "m1"}}',
    b'"just a string"',
    b"",
])
def test_no_input_gives_a_traceback(rules_dir, capsys, raw):
    """Whatever the bytes: exit 0 with locks, or exit 1 with an error envelope or one line on stderr."""
    path = rules_dir / "in.json"
    path.write_bytes(raw)
    code = main(["--rules", str(rules_dir), "lock", str(path)])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in out + err
    if out:   # the tool's argument shape, or the lock part's own check of a message
        assert json.loads(out)["error"]["code"] in {"INVALID_ARGUMENT", "INVALID_MESSAGE"} and err == ""
    else:
        assert err.count("\n") == 1


def test_a_ten_megabyte_message(rules_dir, capsys):
    content = "你好，我想咨询一下产品的交付时间。" * 600_000
    code, out, err = run(rules_dir, capsys, {"id": "m1", "role": "user", "content": content + "手机 13812345678"})
    assert (code, err) == (0, "")
    [found] = json.loads(out)["data"]["locks"]
    assert found["locator"]["start"] == len(content) + 3


# issue 22 items 3 and 8, as the CLI answers them: (content, [(pattern, quote, normalized value, invalid_reason)])
ISSUE_22 = [
    ("电话 23800138000", [("cn_mobile.wrong_prefix", "23800138000", "23800138000", "bad_first_digit")]),
    ("手机 03800138000", [("cn_mobile.wrong_prefix", "03800138000", "03800138000", "bad_first_digit")]),
    ("手机号 2380013800", [("cn_mobile.wrong_prefix", "2380013800", "2380013800", "wrong_length")]),
    ("1380013800", [("cn_mobile.mobile", "1380013800", "1380013800", "wrong_length")]),
    ("(138)0013 8000", [("cn_mobile.mobile", "(138)0013 8000", "13800138000", None)]),
    ("电话 139\n0000 1234", [("cn_mobile.line_broken", "139\n0000 1234", "13900001234", None)]),
    ("188.0000.1234", [("cn_mobile.other_separators", "188.0000.1234", "18800001234", None)]),
    ("幺三八 零零零零 一二三四", [("cn_mobile.chinese_numerals", "幺三八 零零零零 一二三四", "13800001234", None)]),
]


@pytest.mark.parametrize("content, want", [pytest.param(c, w, id=c) for c, w in ISSUE_22])
def test_near_misses_and_chat_forms_through_the_cli(rules_dir, capsys, content, want):
    """Every near miss leaves an invalid candidate with its reason, and each chat form is a candidate
    judged by the structural rule, the quote as typed: the CLI's envelope holds exactly the library's."""
    message = {"id": "m1", "role": "user", "content": content}
    code, out, err = run(rules_dir, capsys, message)
    locks = json.loads(out)["data"]["locks"]
    assert (code, err) == (0, "") and locks == lock(message, load_rulebook(rules_dir))
    assert [(c["pattern"], c["quote"], c["normalized_value"], c["invalid_reason"]) for c in locks] == want
    assert all(c["valid"] is (c["invalid_reason"] is None) for c in locks)
