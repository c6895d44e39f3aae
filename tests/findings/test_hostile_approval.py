"""Issue 13, items 1-3: an approval applies its rule exactly once across crashes, writes only inside
the project root while folders are swapped for symlinks, and only where rules/rule_targets.yaml
allows (never `.git/`, hooks, lookalike names)."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from findings_support import EXPERIMENT, ROOT, TABLES, finding, ok, refused

RULE = "- 排查差异前先记录 GPU 温度"

# A child process approves one proposal and SIGKILLs itself at one step of the approval.
CRASHER = r"""
import os, signal, sys
from groundrules.cli.main import main
from groundrules.findings import call, rule_files
from groundrules.store import findings_postgres, findings_sqlite

point = sys.argv[1]
def die():
    os.kill(os.getpid(), signal.SIGKILL)

if point == "before_commit":            # the decision is in the open transaction, not committed
    for tx_class in (findings_sqlite.FindingTx, findings_postgres.PgFindingTx):
        def decide(self, *a, real_decide=tx_class.decide_proposal, **k):
            real_decide(self, *a, **k); die()
        tx_class.decide_proposal = decide
elif point == "after_commit":           # the decision is committed, the document not yet written
    call.Call.committed = lambda self: die()
elif point == "before_rename":          # the new document is in its temporary file
    rule_files.os.replace = lambda *a, **k: die()
elif point == "after_rename":           # the new document is in place, the folder not yet synced
    real_replace = os.replace
    def replace(*a, **k):
        real_replace(*a, **k); die()
    rule_files.os = type(sys)("os_shim")
    rule_files.os.__dict__.update({k: getattr(os, k) for k in dir(os) if not k.startswith("__")})
    rule_files.os.replace = replace
sys.exit(main(sys.argv[2:]))
"""
POINTS = ["before_commit", "after_commit", "before_rename", "after_rename"]


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / "docs").mkdir(parents=True)
    (root / "AGENTS.md").write_text("# 规则\n- 已有规则\n", encoding="utf-8")
    return root


def rules_root(tmp_path: Path) -> Path:
    root = tmp_path / "rules-root"
    (root / "rules").mkdir(parents=True)
    for table in TABLES:
        (root / "rules" / table.name).symlink_to(table)
    (root / "schemas").symlink_to(ROOT / "schemas")
    return root


def propose(ledger, target_path: str, rule_text: str = RULE) -> dict:
    fid = ok(ledger.call("log_finding", finding(evidence=[EXPERIMENT])))["finding_id"]
    return ledger.call("propose_rule", {"finding_id": fid, "rule_text": rule_text, "target_path": target_path,
                                        "rationale": "两次误判"})


def status(ledger, pid: str) -> str:
    """The proposal's status, read through the store interface (either backend)."""
    with ledger.store.read() as tx:
        return tx.proposal(ledger.caller.projects[0], pid)["status"]


@pytest.mark.extended
@pytest.mark.parametrize("point", POINTS)
def test_a_crash_at_any_step_of_an_approval_neither_loses_nor_repeats_the_rule(ledger, book, db, project,
                                                                                 tmp_path, point):
    pid = ok(propose(ledger, "AGENTS.md"))["proposal_id"]
    argv = ["--rules", str(rules_root(tmp_path)), "findings", "approve-rule", pid, "--db", str(db),
            "--project", "p1", "--root", str(project), "--operator", "alice"]
    kept = lookalikes(project, tmp_path)
    crashed = subprocess.run([sys.executable, "-c", CRASHER, point, *argv], capture_output=True, timeout=120)
    assert crashed.returncode == -9, crashed.stderr.decode()[-2000:]
    left = {p.name for p in project.iterdir()} - kept - {"AGENTS.md", "docs"}
    assert len(left) == (point == "before_rename"), left    # the killed approval's temporary file
    again = subprocess.run([sys.executable, "-m", "groundrules.cli.main", *argv], capture_output=True,
                           timeout=120)
    assert again.returncode == 0, again.stdout.decode() + again.stderr.decode()
    text = (project / "AGENTS.md").read_text(encoding="utf-8")
    marker = book.table("rule_targets").marker("AGENTS.md", pid)
    assert text.count(RULE) == 1 and text.count(marker) == 1
    assert text.startswith("# 规则\n- 已有规则\n")
    assert status(ledger, pid) == "applied"
    # the next approval removed the debris of the killed one, and nothing else
    assert {p.name for p in project.iterdir()} == kept | {"AGENTS.md", "docs"}
    assert all((project / name).is_symlink() or (project / name).is_dir() or (project / name).read_bytes() == b"keep"
               for name in kept)


def lookalikes(project: Path, tmp_path: Path) -> set[str]:
    """Files beside the document that only look like an interrupted approval's temporary file, or
    are one of a process still running: the cleanup must keep every one of them."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead, alive = int(gone.stdout), os.getpid()
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"keep")
    names = {f".AGENTS.md.{alive}.0123abcd.tmp",             # a running approval's
             f".AGENTS.md.{dead}.0123abc.tmp", f".AGENTS.md.{dead}.0123ABCD.tmp", ".AGENTS.md.tmp",
             f"AGENTS.md.{dead}.0123abcd.tmp", f".AGENTS.md.{dead}.0123abcd.tmp.bak",
             f".docs.{dead}.0123abcd.tmp", f".AGENTS.md.x{dead}.0123abcd.tmp"}
    for name in names:
        (project / name).write_bytes(b"keep")
    link = f".AGENTS.md.{dead}.feedbeef.tmp"                # a symlink is never ours
    (project / link).symlink_to(outside)
    folder = f".AGENTS.md.{dead}.cafef00d.tmp"              # nor is a folder
    (project / folder).mkdir()
    (project / folder / "inside").write_bytes(b"keep")
    return names | {link, folder}


def test_approving_twice_in_a_row_writes_once(make_ledger, ledger, book, project):
    pid = ok(propose(ledger, "docs/rules.md"))["proposal_id"]
    approver = make_ledger(root=project)
    first, second = (ok(approver.call("approve_rule", {"proposal_id": pid})) for _ in range(2))
    assert first == second
    assert (project / "docs" / "rules.md").read_text(encoding="utf-8").count(RULE) == 1


def snapshot(folder: Path) -> dict:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and not p.is_symlink()}


def test_swapping_a_folder_for_a_symlink_during_approvals_writes_nothing_outside(make_ledger, ledger, book,
                                                                                 project, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "rules.md").write_text("outside\n", encoding="utf-8")
    before = snapshot(outside)
    pids = [ok(propose(ledger, "docs/rules.md", f"- 规则 {i}"))["proposal_id"] for i in range(30)]
    approver = make_ledger(root=project)
    stop = threading.Event()
    docs, hidden = project / "docs", project / ".docs-real"

    def swap() -> None:
        while not stop.is_set():
            os.rename(docs, hidden)
            os.symlink(outside, docs)
            os.unlink(docs)
            os.rename(hidden, docs)

    swapper = threading.Thread(target=swap)
    swapper.start()
    try:
        answers = [approver.call("approve_rule", {"proposal_id": pid}) for pid in pids]
    finally:
        stop.set()
        swapper.join()
    assert snapshot(outside) == before and sorted(p.name for p in outside.iterdir()) == ["rules.md"]
    written = (docs / "rules.md").read_text(encoding="utf-8") if (docs / "rules.md").exists() else ""
    targets = book.table("rule_targets")
    for pid, answer in zip(pids, answers):
        present = targets.marker("docs/rules.md", pid) in written
        # an approval that answered ok wrote its rule; one refused before recording wrote nothing
        assert present == answer["ok"], answer
        if not answer["ok"]:
            assert answer["error"]["code"] == "INVALID_ARGUMENT"
            assert status(ledger, pid) == ("applied" if answer["error"].get("decision_recorded") else "proposed")
    # no temporary file anywhere: not outside, not inside
    assert [p for p in project.rglob("*.tmp")] == [] and [p for p in outside.rglob("*.tmp")] == []
    # without the swapper, approving every proposal again (refused, or recorded but unwritten, or done)
    # leaves each rule in the document exactly once, and still nothing outside
    for pid in pids:
        ok(approver.call("approve_rule", {"proposal_id": pid}))
    written = (docs / "rules.md").read_text(encoding="utf-8")
    assert all(written.count(targets.marker("docs/rules.md", pid)) == 1 for pid in pids)
    assert all(written.count(f"- 规则 {i}\n") == 1 for i in range(len(pids)))
    assert snapshot(outside) == before


def refused_examples() -> list[str]:
    import yaml
    table = yaml.safe_load((ROOT / "rules" / "rule_targets.yaml").read_text(encoding="utf-8"))
    return table["examples"]["refused"]


ATTACKS = [".git/config", ".git/hooks/pre-commit", "docs/rules.md ", "docs/rules.md\n", "docs/rules.md\t",
           "docs/rules.md\r", "docs/\u202erules.md", "docs/rules.md.", "docs/ rules.md", "hooks/pre-commit.md",
           "docs/.git/hooks/post-merge", ".github/workflows/ci.yml", "docs/rules\x00.md", "AGENTS.MD\u3000",
           "docs/rul\u0435s.md", "\uff41gents.md"]


@pytest.mark.parametrize("target", sorted(set(refused_examples() + ATTACKS)), ids=repr)
def test_propose_rule_refuses_paths_the_targets_table_does_not_allow(ledger, project, target):
    error = refused(propose(ledger, target), "INVALID_ARGUMENT")
    assert error["field"] == "target_path"


def test_allowed_examples_of_the_targets_table_are_accepted(ledger):
    import yaml
    table = yaml.safe_load((ROOT / "rules" / "rule_targets.yaml").read_text(encoding="utf-8"))
    for target in table["examples"]["allowed"]:
        assert ok(propose(ledger, target))["status"] == "proposed"


def test_a_rule_text_cannot_forge_another_proposals_marker(ledger, book):
    forged = book.table("rule_targets").marker("AGENTS.md", "RP-000002")
    error = refused(propose(ledger, "AGENTS.md", f"- 规则\n{forged}"), "INVALID_ARGUMENT")
    assert error["field"] == "rule_text"


def test_sqlite_a_hook_proposed_before_the_table_existed_is_not_written_on_approval(book, sqlite_db, project):
    """SQLite only: the old proposal is forged with raw SQL, which is backend-specific."""
    from findings_support import open_client
    ledger = open_client(sqlite_db, rulebook=book)
    (project / ".git" / "hooks").mkdir(parents=True)
    hook = project / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\n", encoding="utf-8")
    hook.chmod(0o755)
    pid = ok(propose(ledger, "AGENTS.md"))["proposal_id"]
    ledger.store.conn.execute("UPDATE rule_proposals SET target_path = '.git/hooks/pre-commit' WHERE id = ?", (pid,))
    ledger.store.conn.commit()
    approver = open_client(sqlite_db, rulebook=book, root=project)
    error = refused(approver.call("approve_rule", {"proposal_id": pid}), "INVALID_ARGUMENT")
    assert error["field"] == "target_path" and hook.read_text(encoding="utf-8") == "#!/bin/sh\n"


def test_a_target_broken_after_the_decision_says_so_and_approving_again_writes_it(make_ledger, ledger, book,
                                                                                 project, monkeypatch):
    from groundrules.findings import proposals
    pid = ok(propose(ledger, "docs/rules.md"))["proposal_id"]
    (project / "docs" / "rules.md").symlink_to(project / "docs" / "rules.md")     # a loop, met while writing
    monkeypatch.setattr(proposals, "probe", lambda root, path: None)              # as if it broke after the check
    approver = make_ledger(root=project)
    error = refused(approver.call("approve_rule", {"proposal_id": pid}), "INVALID_ARGUMENT")
    assert error["decision_recorded"] is True and error["proposal_id"] == pid and status(ledger, pid) == "applied"
    (project / "docs" / "rules.md").unlink()
    monkeypatch.undo()
    ok(approver.call("approve_rule", {"proposal_id": pid}))
    text = (project / "docs" / "rules.md").read_text(encoding="utf-8")
    assert text.count(RULE) == 1 and text.count(book.table("rule_targets").marker("docs/rules.md", pid)) == 1


def test_approving_into_a_folder_not_made_yet_says_so_not_symlinks(make_ledger, ledger, book, project):
    """propose_rule accepts any relative path; approve_rule into a folder the project lacks names the
    real cause (the folder is missing), and once it is made the approval writes (issue 32, item 5)."""
    pid = ok(propose(ledger, "rules/agents.md"))["proposal_id"]
    approver = make_ledger(root=project)
    error = refused(approver.call("approve_rule", {"proposal_id": pid}), "INVALID_ARGUMENT")
    vocabulary = book.table("findings_vocabulary")
    assert vocabulary.message("target_folder_missing") in error["message"]
    assert vocabulary.message("target_target") not in error["message"]
    (project / "rules").mkdir()
    ok(approver.call("approve_rule", {"proposal_id": pid}))
    assert RULE in (project / "rules" / "agents.md").read_text(encoding="utf-8")
