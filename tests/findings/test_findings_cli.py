"""`groundrules findings list|show|approve-rule|reject-rule`: the ledger for people."""
from __future__ import annotations

import json
import shutil

import pytest

from findings_support import EXPERIMENT, ROOT, TABLES, finding, ok, open_client, sql
from groundrules.cli.main import main
from groundrules.store.findings_sqlite import SqliteFindingStore


@pytest.fixture
def rules_root(tmp_path):
    root = tmp_path / "rules-root"
    (root / "rules").mkdir(parents=True)
    for table in TABLES:
        shutil.copy(table, root / "rules" / table.name)
    (root / "schemas").symlink_to(ROOT / "schemas")
    return root


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "AGENTS.md").write_text("# 规则\n- 已有规则", encoding="utf-8")
    return root


@pytest.fixture
def cli(rules_root, db, capsys):
    def run(*argv: str) -> tuple[int, dict | None, str]:
        code = main(["--rules", str(rules_root), *argv[:2], "--db", str(db), "--project", "p1", *argv[2:]])
        out, err = capsys.readouterr()
        return code, json.loads(out) if out.strip() else None, err
    return run


def propose(ledger, target_path: str) -> str:
    fid = ok(ledger.call("log_finding", finding(evidence=[EXPERIMENT])))["finding_id"]
    return ok(ledger.call("propose_rule", {"finding_id": fid, "rule_text": "- 排查差异前先记录 GPU 温度",
                                           "target_path": target_path, "rationale": "两次误判"}))["proposal_id"]


def test_list_and_show(ledger, cli):
    fid = ok(ledger.call("log_finding", finding(statement="温度漂移导致误差", evidence=[EXPERIMENT])))["finding_id"]
    code, out, _ = cli("findings", "list", "--keyword", "漂移")
    assert code == 0 and [f["finding_id"] for f in out["data"]["findings"]] == [fid]
    code, out, _ = cli("findings", "show", fid)
    assert code == 0 and out["data"]["evidence"][0]["excerpt"] == EXPERIMENT["excerpt"]
    code, out, _ = cli("findings", "show", "F-999999")
    assert code == 1 and out["error"]["code"] == "NOT_FOUND"


def test_approving_appends_the_rule_and_records_applied(ledger, cli, project, book):
    pid = propose(ledger, "AGENTS.md")
    code, out, _ = cli("findings", "approve-rule", pid, "--root", str(project), "--operator", "alice")
    assert code == 0 and out["data"]["status"] == "applied"
    marker = book.table("rule_targets").marker("AGENTS.md", pid)
    expected = f"# 规则\n- 已有规则\n{marker}\n- 排查差异前先记录 GPU 温度\n"
    assert (project / "AGENTS.md").read_text(encoding="utf-8") == expected
    # approving again repairs a document that lacks the rule and never repeats it
    code, out, _ = cli("findings", "approve-rule", pid, "--root", str(project), "--operator", "alice")
    assert code == 0 and out["data"]["status"] == "applied"
    assert (project / "AGENTS.md").read_text(encoding="utf-8") == expected
    events = ok(ledger.call("get_finding", {"finding_id": "F-000001"}))["events"]
    assert events[-1]["kind"] == "rule_applied" and events[-1]["payload"]["decided_by"] == "alice"


def test_approving_creates_a_new_document_inside_the_root(ledger, cli, project, book):
    pid = propose(ledger, "docs/debugging.md")
    code, _, _ = cli("findings", "approve-rule", pid, "--root", str(project), "--operator", "alice")
    marker = book.table("rule_targets").marker("docs/debugging.md", pid)
    assert code == 0 and (project / "docs" / "debugging.md").read_text(encoding="utf-8") == \
        f"{marker}\n- 排查差异前先记录 GPU 温度\n"


def test_rejecting_records_rejected_and_touches_no_file(ledger, cli, project):
    pid = propose(ledger, "AGENTS.md")
    code, out, _ = cli("findings", "reject-rule", pid, "--operator", "bob", "--note", "太具体")
    assert code == 0 and out["data"]["status"] == "rejected"
    assert (project / "AGENTS.md").read_text(encoding="utf-8") == "# 规则\n- 已有规则"
    code, out, _ = cli("findings", "approve-rule", pid, "--root", str(project), "--operator", "alice")
    assert out["error"]["code"] == "INVALID_STATE_TRANSITION"


def test_symlinks_out_of_the_root_are_refused(ledger, cli, project, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("", encoding="utf-8")
    (project / "link.md").symlink_to(outside)
    (project / "docs" / "escape").symlink_to(tmp_path)
    (project / "docs" / "loop").symlink_to(project / "docs" / "loop")
    (project / "docs" / "loop.md").symlink_to(project / "docs" / "loop.md")
    for target in ("link.md", "docs/escape/outside.md", "docs/missing/x.md", "docs/loop/x.md", "docs/loop.md"):
        pid = propose(ledger, target)
        code, out, _ = cli("findings", "approve-rule", pid, "--root", str(project), "--operator", "alice")
        assert code == 1 and out["error"]["code"] == "INVALID_ARGUMENT"
        assert str(tmp_path) not in out["error"]["message"]
        assert sql(ledger.store, "SELECT status FROM rule_proposals WHERE id = ?", (pid,)) == [("proposed",)]
    assert outside.read_text(encoding="utf-8") == ""


def test_bad_db_folder_is_one_line_error(cli, capsys, rules_root, tmp_path):
    code = main(["--rules", str(rules_root), "findings", "list", "--db", str(tmp_path / "nope" / "x.db")])
    assert code == 1 and "\n" not in capsys.readouterr().err.strip()


def test_every_findings_command_has_help(capsys):
    for argv in (["serve", "--help"], ["findings", "--help"], ["findings", "list", "--help"],
                 ["findings", "approve-rule", "--help"], ["findings", "reject-rule", "--help"]):
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 0
        assert "--db" in capsys.readouterr().out or argv == ["findings", "--help"]


# ------------------------------------------------------------------------------ approving is all or nothing

RECORD_FAILS = ("CREATE TEMP TRIGGER injected BEFORE INSERT ON finding_events WHEN NEW.kind = 'rule_applied' "
                "BEGIN SELECT RAISE(ABORT, 'injected'); END")
COMMIT_FAILS = (   # a deferred foreign key is checked at COMMIT: the COMMIT itself fails
    "CREATE TEMP TABLE doomed (id INTEGER PRIMARY KEY, ref INTEGER REFERENCES doomed(id) DEFERRABLE INITIALLY DEFERRED)",
    "CREATE TEMP TRIGGER injected AFTER INSERT ON finding_events WHEN NEW.kind = 'rule_applied' "
    "BEGIN INSERT INTO doomed (ref) VALUES (404); END")


def failing_ledger(book, db, project, *statements: str):
    from groundrules.findings import SequentialIds, StepClock

    def inject(conn) -> None:
        for sql in statements:
            conn.execute(sql)
    return open_client(SqliteFindingStore(db, on_connect=inject), "p1", rulebook=book, clock=StepClock(),
                       ids=SequentialIds(start=500), root=project, principal="alice")


def status(ledger, pid: str) -> str:
    return sql(ledger.store, "SELECT status FROM rule_proposals WHERE id = ?", (pid,))[0][0]


@pytest.mark.parametrize("target", ["AGENTS.md", "docs/new.md"])
@pytest.mark.parametrize("fault", [(RECORD_FAILS,), COMMIT_FAILS], ids=["record fails", "commit fails"])
def test_a_failed_approval_leaves_the_document_and_the_proposal_as_they_were_sqlite_temp_triggers(
        make_ledger, book, sqlite_db, project, target, fault):
    ledger = make_ledger(path=sqlite_db)
    pid = propose(ledger, target)
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    failing = failing_ledger(book, sqlite_db, project, *fault)
    env = failing.call("approve_rule", {"proposal_id": pid})
    assert env["error"]["code"] == "STORAGE_ERROR"
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before
    assert status(ledger, pid) == "proposed"
    # the failed COMMIT did not leave a transaction open: the same ledger still writes
    assert failing.call("reject_rule", {"proposal_id": pid})["ok"] is True
    failing.close()


def test_approving_keeps_the_document_mode(ledger, cli, project):
    (project / "AGENTS.md").chmod(0o600)
    pid = propose(ledger, "AGENTS.md")
    code, _, _ = cli("findings", "approve-rule", pid, "--root", str(project), "--operator", "alice")
    assert code == 0 and (project / "AGENTS.md").stat().st_mode & 0o777 == 0o600
    assert [p.name for p in project.iterdir() if p.name.startswith(".")] == []


def test_only_regular_files_are_approval_targets(ledger, make_ledger, project):
    import os
    os.mkfifo(project / "pipe.md")
    (project / "folder.md").mkdir()
    approver = make_ledger(root=project)
    for target in ("folder.md", "pipe.md"):
        pid = propose(ledger, target)
        env = approver.call("approve_rule", {"proposal_id": pid})
        assert (env["error"]["code"], env["error"]["field"]) == ("INVALID_ARGUMENT", "target_path")
        assert status(ledger, pid) == "proposed"


def test_a_missing_root_is_an_invalid_argument(ledger, make_ledger, tmp_path):
    pid = propose(ledger, "AGENTS.md")
    env = make_ledger(root=tmp_path / "no-such-project").call("approve_rule", {"proposal_id": pid})
    assert (env["error"]["code"], env["error"]["field"]) == ("INVALID_ARGUMENT", "root")
    assert str(tmp_path) not in env["error"]["message"]


def test_call_writes_and_findings_list_reads_the_same_ledger(rules_root, db, tmp_path, capsys):
    """`groundrules call` and `groundrules findings` on a --db path or a postgresql:// URI alike."""
    arguments = tmp_path / "args.json"
    arguments.write_text(json.dumps(finding(statement="命令行写入的漂移"), ensure_ascii=False), encoding="utf-8")
    code = main(["--rules", str(rules_root), "call", "log_finding", str(arguments), "--db", str(db), "--project", "p1"])
    created = json.loads(capsys.readouterr().out)
    assert code == 0 and created["ok"], created
    code = main(["--rules", str(rules_root), "findings", "list", "--db", str(db), "--project", "p1", "--keyword", "漂移"])
    listed = json.loads(capsys.readouterr().out)
    assert [f["finding_id"] for f in listed["data"]["findings"]] == [created["data"]["finding_id"]]


def test_an_unreachable_postgres_db_is_a_storage_error_naming_no_secret(rules_root, tmp_path, capsys):
    uri = f"postgresql://alice:hunter2@/ledger?host={tmp_path}/no-server&connect_timeout=2"
    code = main(["--rules", str(rules_root), "findings", "list", "--db", uri, "--project", "p1"])
    out, err = capsys.readouterr()
    assert code == 1 and "STORAGE_ERROR: 账本存储失败（OperationalError）" in err and "Traceback" not in out + err
    for secret in ("hunter2", "alice", "no-server", str(tmp_path)):
        assert secret not in out + err
