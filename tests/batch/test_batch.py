"""`groundrules batch` and the library entry point: every row answered through the registry as one
call would be, the same bytes for any worker count and through every format, a bad row an error
row, a rerun resuming after what was written, and memory bounded by the chunks under way."""
from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from groundrules import Caller, Service
from groundrules.batch import formats, run as runner
from groundrules.batch.answer import COLUMNS, Answerer, answer_batch, answer_rows, arrow_schema
from groundrules.batch.plan import Plan, parse_map, parse_set
from groundrules.batch.progress import Progress
from groundrules.core import limits
from cli_inproc import run_cli
from said import said, words
from corpora import chats, contexts, lock_rows, write_jsonl

AGENT = Caller("batch", "agent", ())


@pytest.fixture(scope="module")
def messages():
    return chats(240)


@pytest.fixture(scope="module")
def archive(tmp_path_factory, messages) -> Path:
    """The chat archive as lock_message arguments, one JSONL line each, with two bad lines."""
    path = tmp_path_factory.mktemp("archive") / "chats.jsonl"
    lines = [json.dumps(r, ensure_ascii=False) for r in lock_rows(messages)]
    lines.insert(17, "{not json")
    lines.insert(90, json.dumps({"message": {"id": "x"}}))        # a row the tool refuses
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def expected_line(service: Service, key, arguments) -> str:
    """What one call through the registry answers, with the row's key in front."""
    envelope = service.call("lock_message", arguments, AGENT)
    return json.dumps({"key": key, **envelope}, ensure_ascii=False)


def test_each_row_is_answered_as_one_registry_call(rulebook, messages):
    rows = lock_rows(messages[:60])
    service = Service(rulebook)
    assert answer_rows(rows, Plan("lock_message"), caller=AGENT) == \
        [expected_line(service, i, r) for i, r in enumerate(rows, 1)]


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_the_output_is_the_same_bytes_for_any_worker_count(archive, tmp_path, rulebook, workers):
    out = tmp_path / "out.jsonl"
    done = run_cli("batch", "lock_message", str(archive), "--out", str(out), "--workers", str(workers))
    assert done.returncode == 0, done.stderr
    service = Service(rulebook)
    caller = Caller(_operator(), "agent", ("default",))
    lines = out.read_text(encoding="utf-8").splitlines()
    raw = archive.read_bytes().splitlines()
    assert len(lines) == len(raw)
    for n in (1, 2, 50, len(raw)):                                # spot checks against one call each
        answer = json.loads(lines[n - 1])
        assert answer["key"] == f"{archive}:{n}"
        try:
            arguments = json.loads(raw[n - 1])
        except ValueError:
            assert answer["error"]["code"] == "INVALID_ROW"
            continue
        assert {k: v for k, v in answer.items() if k != "key"} == service.call("lock_message", arguments, caller)
    reference = tmp_path / "one.jsonl"
    assert run_cli("batch", "lock_message", str(archive), "--out", str(reference), "--workers", "1").returncode == 0
    assert out.read_bytes() == reference.read_bytes()


def _operator() -> str:
    import getpass
    return getpass.getuser()


def test_a_bad_row_is_an_error_row_worded_by_the_role_table_and_the_run_goes_on(archive, tmp_path, rulebook):
    out = tmp_path / "out.jsonl"
    done = run_cli("batch", "lock_message", str(archive), "--out", str(out), "--workers", "2")
    assert done.returncode == 0
    answers = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    refused = {a["key"]: a["error"] for a in answers if not a["ok"]}
    assert set(refused) == {f"{archive}:18", f"{archive}:91"}
    assert refused[f"{archive}:18"]["code"] == "INVALID_ROW"
    template = rulebook.table("roles").messages["row_not_json"]
    assert refused[f"{archive}:18"]["message"].startswith(template.render({"problem": ""}))
    code = Service(rulebook).call("lock_message", {"message": {"id": "x"}}, AGENT)["error"]["code"]
    assert refused[f"{archive}:91"]["code"] == code
    assert b"INVALID_ROW 1" in done.stderr and f"{code} 1".encode() in done.stderr


def test_a_csv_with_one_content_column_is_mapped_and_keyed(tmp_path, messages, rulebook):
    source = tmp_path / "chats.csv"
    with open(source, "w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["id", "content"])
        for m in messages[:40]:
            writer.writerow([m["id"], m["content"]])
    out = tmp_path / "out.jsonl"
    done = run_cli("batch", "lock_message", str(source), "--out", str(out), "--key", "id",
                   "--map", "message.id=id", "--map", "message.content=content", "--set", "message.role=user")
    assert done.returncode == 0, done.stderr
    service = Service(rulebook)
    caller = Caller(_operator(), "agent", ("default",))
    got = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [a["key"] for a in got] == [m["id"] for m in messages[:40]]
    for answer, m in zip(got, messages[:40]):
        arguments = {"message": {"id": m["id"], "content": m["content"], "role": "user"}}
        assert {k: v for k, v in answer.items() if k != "key"} == service.call("lock_message", arguments, caller)


def test_a_row_without_a_mapped_column_is_an_error_row(rulebook):
    plan = Plan("lock_message", maps=(parse_map("message.content=content"),), sets=(parse_set("message.role=user"),))
    line = json.loads(Answerer(rulebook, plan, AGENT).lines([("r:1", {"text": "x"})])[0])
    assert line["error"] == {"code": "INVALID_ROW",
                             "message": rulebook.table("roles").message("row_no_column", column="content")}


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_every_format_carries_the_same_answers(archive, tmp_path, fmt):
    pytest.importorskip("pyarrow")
    jsonl, other = tmp_path / "out.jsonl", tmp_path / f"out.{fmt}"
    assert run_cli("batch", "lock_message", str(archive), "--out", str(jsonl), "--workers", "1").returncode == 0
    assert run_cli("batch", "lock_message", str(archive), "--out", str(other), "--workers", "2").returncode == 0
    assert list(formats.answers(str(other))) == list(formats.answers(str(jsonl)))
    assert not (tmp_path / f"out.{fmt}{runner.JOURNAL}").exists()


def test_parquet_rows_in_arrow_batches_out(tmp_path, messages, rulebook):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    table = pa.table({"id": [m["id"] for m in messages[:50]], "content": [m["content"] for m in messages[:50]]})
    pq.write_table(table, tmp_path / "chats.parquet")
    plan = Plan("lock_message", key="id", maps=(parse_map("message.id=id"), parse_map("message.content=content")),
                sets=(parse_set("message.role=user"),))
    answered = answer_batch(table.to_batches()[0], plan, caller=AGENT)
    assert answered.schema == arrow_schema() and answered.num_rows == 50
    out = tmp_path / "out.parquet"
    done = run_cli("batch", "lock_message", str(tmp_path / "chats.parquet"), "--out", str(out), "--key", "id",
                   "--map", "message.id=id", "--map", "message.content=content", "--set", "message.role=user",
                   "--role", "agent", "--operator", "batch")
    assert done.returncode == 0, done.stderr
    written = pq.read_table(out)
    assert written.schema == arrow_schema()
    assert written.to_pylist() == answered.to_pylist()                # the library, and batch, byte for byte


def test_a_folder_is_read_in_sorted_order_and_stdin_out(tmp_path, messages):
    folder = tmp_path / "in"
    folder.mkdir()
    rows = lock_rows(messages[:30])
    write_jsonl(folder / "b.jsonl", rows[10:])
    write_jsonl(folder / "a.jsonl", rows[:10])
    done = run_cli("batch", "lock_message", str(folder), "--out", "-", "--workers", "1")
    assert done.returncode == 0
    keys = [json.loads(line)["key"] for line in done.stdout.decode().splitlines()]
    assert keys == [f"{folder / 'a.jsonl'}:{n}" for n in range(1, 11)] + [f"{folder / 'b.jsonl'}:{n}" for n in range(1, 21)]


def test_a_rerun_resumes_after_the_rows_written(archive, tmp_path):
    whole = tmp_path / "whole.jsonl"
    assert run_cli("batch", "lock_message", str(archive), "--out", str(whole), "--workers", "1").returncode == 0
    out = tmp_path / "out.jsonl"
    data = whole.read_bytes()
    lines = data.splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:100]) + lines[100][:40])          # stopped while writing row 101
    done = run_cli("batch", "lock_message", str(archive), "--out", str(out), "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == data
    assert b"(100 answered by an earlier run)" in done.stderr
    again = run_cli("batch", "lock_message", str(archive), "--out", str(out), "--workers", "2")
    assert again.returncode == 0 and out.read_bytes() == data
    assert f"({len(lines)} answered by an earlier run)".encode() in again.stderr


def test_a_rerun_under_other_tables_or_on_other_input_is_refused(archive, tmp_path, messages):
    out = tmp_path / "out.jsonl"
    assert run_cli("batch", "lock_message", str(archive), "--out", str(out), "--workers", "1").returncode == 0
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    version = json.loads(lines[0])["rulebook"]
    out.write_text("".join(lines[:5]).replace(f'"rulebook": "{version}"', '"rulebook": "0000000000000000"'),
                   encoding="utf-8")
    refused = run_cli("batch", "lock_message", str(archive), "--out", str(out))
    assert refused.returncode == 1 and b"0000000000000000" in refused.stderr and b"--restart" in refused.stderr
    assert run_cli("batch", "lock_message", str(archive), "--out", str(out), "--restart").returncode == 0
    other = write_jsonl(tmp_path / "other.jsonl", lock_rows(messages[:3]))
    keyed = run_cli("batch", "lock_message", str(other), "--out", str(out))
    assert keyed.returncode == 1 and all(w in keyed.stderr.decode() for w in words("usage.batch_resume_mismatch"))


def test_an_interrupted_parquet_output_resumes_from_its_journal(archive, tmp_path):
    pytest.importorskip("pyarrow")
    whole = tmp_path / "whole.parquet"
    assert run_cli("batch", "lock_message", str(archive), "--out", str(whole)).returncode == 0
    journal_source = tmp_path / "whole.jsonl"
    assert run_cli("batch", "lock_message", str(archive), "--out", str(journal_source)).returncode == 0
    out = tmp_path / "out.parquet"
    journal = tmp_path / f"out.parquet{runner.JOURNAL}"
    journal.write_bytes(b"".join(journal_source.read_bytes().splitlines(keepends=True)[:60]))
    done = run_cli("batch", "lock_message", str(archive), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert b"(60 answered by an earlier run)" in done.stderr and not journal.exists()
    assert list(formats.answers(str(out))) == list(formats.answers(str(whole)))
    assert run_cli("batch", "lock_message", str(archive), "--out", str(out)).returncode == 1   # complete: --restart


def test_the_chunks_under_way_are_bounded_whatever_the_input(rulebook):
    """The reader runs at most workers × chunks_in_flight chunks ahead of the writer."""
    table = limits.of(rulebook)
    workers, in_flight = 2, table.chunks_in_flight
    pulled = []

    def chunks():
        for n in range(40):
            pulled.append(n)
            yield [(f"r:{n}", {"message": {"id": f"m{n}", "role": "user", "content": "电话 13812345678"}})]

    answerer = Answerer(rulebook, Plan("lock_message"), AGENT)
    ahead = []
    for n, (lines, codes) in enumerate(runner._answered(answerer, chunks(), workers, in_flight)):
        ahead.append(len(pulled) - n)
        assert len(lines) == 1 and not codes
    assert len(ahead) == 40 and max(ahead) <= workers * in_flight


def test_progress_is_plain_lines_off_a_terminal():
    import io
    stream, now = io.StringIO(), [0.0]
    progress = Progress(stream=stream, every_s=5.0, clock=lambda: now[0])
    progress.add(500, Counter())
    now[0] = 6.0
    progress.add(500, Counter({"INVALID_ROW": 2}))
    assert stream.getvalue() == "batch: 1000 row(s), 998 ok, 2 refused (INVALID_ROW 2)\n"


def test_the_command_refuses_what_it_cannot_run(archive, tmp_path):
    out = str(tmp_path / "o.jsonl")
    cases = [(["log_finding"], "usage.batch_stateless"), (["lock_message", "--set", "a=1"], "usage.batch_set_needs_map"),
             (["lock_message", "--map", "nocolumn"], "usage.batch_map"), (["lock_message", "--workers", "0"], "usage.at_least")]
    for argv, message in cases:
        for lang in ("zh", "en"):
            done = run_cli("--lang", lang, "batch", argv[0], str(archive), "--out", out, *argv[1:])
            err = done.stderr.decode("utf-8")
            assert done.returncode == 1 and err.startswith("groundrules batch: USAGE: ") \
                and all(w in err for w in words(message, lang)), (argv, err)
    missing = run_cli("batch", "lock_message", str(tmp_path / "nope.jsonl"), "--out", out)
    assert missing.returncode == 1 and said("usage.no_such_path", input=str(tmp_path / "nope.jsonl")) \
        in missing.stderr.decode("utf-8")


def test_a_role_the_table_does_not_let_call_the_tool_is_refused_on_every_row(archive, tmp_path):
    """The role table is checked on every row: here a copy where only reviewers may lock."""
    import shutil
    import yaml
    from groundrules import load_rulebook
    root = Path(__file__).resolve().parents[2]
    for folder in ("rules", "locks", "schemas"):
        shutil.copytree(root / folder, tmp_path / folder)
    table = tmp_path / "rules" / "roles.yaml"
    data = yaml.safe_load(table.read_text(encoding="utf-8"))
    data["tools"]["lock_message"]["roles"] = ["reviewer"]
    table.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    book = load_rulebook(tmp_path)
    out = tmp_path / "o.jsonl"
    assert run_cli("--rules", str(tmp_path), "batch", "lock_message", str(archive), "--out", str(out)).returncode == 0
    answers = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {a["error"]["code"] for a in answers} == {"PERMISSION_DENIED", "INVALID_ROW"}
    assert {a["rulebook"] for a in answers} == {book.version}


def test_contexts_run_through_explain_support(tmp_path, rulebook):
    rows = [{"context": c} for c in contexts(64)]
    out = tmp_path / "out.jsonl"
    source = write_jsonl(tmp_path / "contexts.jsonl", rows)
    assert run_cli("batch", "explain_support", str(source), "--out", str(out), "--workers", "2").returncode == 0
    service = Service(rulebook)
    caller = Caller(_operator(), "agent", ("default",))
    got = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [{k: v for k, v in a.items() if k != "key"} for a in got] == \
        [service.call("explain_support", r, caller) for r in rows]
    assert list(COLUMNS) == list(got[0])


def test_progress_is_a_bar_on_a_terminal():
    import io

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    progress = Progress(stream=stream)
    progress.add(250, Counter({"INVALID_ROW": 1}))
    progress.close()
    assert "250row" in stream.getvalue().replace(" ", "") and "refused=1" in stream.getvalue()
