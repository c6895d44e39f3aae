"""`groundrules explain` on hostile input: an envelope or one line on stderr, never a traceback."""
from __future__ import annotations

import json
import subprocess

import pytest

from cli_inproc import run_cli
from sr_cases import ROOT, case_path, corpus
from said import said


def _explain_cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return run_cli("explain", *args, stdin=stdin, cwd=ROOT)


@pytest.mark.parametrize("stem, field", [("context-is-null", "context"), ("context-is-list", "context"),
                                         ("evidence-deeply-nested-lists", "context.evidence[0]")])
def test_malformed_context_is_refused_naming_the_field_the_listing_types(stem, field):
    """The tool's listed input holds the whole context contract, and the registry enforces it: a
    context that breaks it is refused naming the field (the library's explain() answers 'unknown')."""
    run = _explain_cli(str(case_path("support_reason_malformed", stem)))
    assert run.returncode == 1 and run.stderr == b""
    envelope = json.loads(run.stdout)
    assert envelope["ok"] is False and envelope["error"]["code"] == "INVALID_ARGUMENT"
    assert envelope["error"]["field"] == field


def test_invalid_json_is_one_line_on_stderr():
    run = _explain_cli("-", stdin=b'{"query": "2024 \xe9\x87\x8d\xe5\xba\x86 \xe7\x94\xb3\xe8\xae\xba", ')
    err = run.stderr.decode("utf-8")
    assert run.returncode != 0 and run.stdout == b""
    assert "Traceback" not in err and err.count("\n") == 1


def test_lone_surrogate_in_a_string_is_refused_without_traceback():
    ctx = dict(corpus()["partial-engine-error-shenlun-count"])
    ctx["engines"] = [{"name": "wiki_recall", "status": "error", "error": "ConnectionError: \ud800"},
                      {"name": "search.py", "status": "ok", "result_count": 3}]
    run = _explain_cli("-", stdin=json.dumps(ctx).encode("ascii"))
    err = run.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err
    assert run.returncode == 1 and run.stdout == b"" and said("usage.json_surrogate", input="stdin") in err
