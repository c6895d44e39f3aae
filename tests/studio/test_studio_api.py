"""The studio's JSON API, in process and over loopback HTTP: the grids, lint's problems at their
cells, the examples and the corpus on an unsaved copy, Save (refused while lint fails; a one-cell
edit changes one line), rows added, deleted and moved, the simulator, and no file outside the
project's rules/ and locks/."""
from __future__ import annotations

import difflib
import json
import threading
import urllib.request
from pathlib import Path

import pytest

from groundrules.analyst.lint import lint
from groundrules.analyst.studio import yamltext
from groundrules.analyst.studio.server import LOOPBACK, make_server
from groundrules.analyst.studio.workspace import StudioRefusal, Workspace
from groundrules.core.rulebook import load
from project import copy_project

TABLE = "rules/support_reason.yaml"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_project(tmp_path / "project")


@pytest.fixture
def ws(project: Path) -> Workspace:
    return Workspace(project)


@pytest.fixture(scope="module")
def untouched(tmp_path_factory) -> Path:
    """One copy for the tests whose every write is refused (a copy each took a second under load)."""
    return copy_project(tmp_path_factory.mktemp("untouched") / "project")


def _rows(view: dict, name: str = "rows") -> dict:
    return next(g for g in view["grids"] if g["name"] == name)


def _changed_lines(old: str, new: str) -> list[str]:
    return [line for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def _row_index(data: dict, row_id: str) -> int:
    return next(i for i, r in enumerate(data["rows"]) if r["id"] == row_id)


def test_the_grid_holds_every_row_and_its_cells(ws, project):
    data = yamltext.read((project / TABLE).read_text(encoding="utf-8"))
    view = ws.open(TABLE)
    grid = _rows(view)
    assert [r["label"] for r in grid["rows"]] == [r["id"] for r in data["rows"]]
    first = grid["rows"][0]["cells"]
    assert first["output"]["yaml"] and yamltext.read(first["output"]["text"]) == data["rows"][0]["output"]
    priority = next(g for g in view["grids"] if g["name"] == "priority")
    assert [r["cells"]["value"]["text"] for r in priority["rows"]] == data["priority"]
    assert view["problems"] == [] and view["examples"]["failed"] == 0 and view["examples"]["passed"] > 0


def test_a_misspelt_field_is_marked_at_its_cell_and_nothing_is_written(ws, project):
    before = (project / TABLE).read_bytes()
    data = yamltext.read(before.decode("utf-8"))
    i = _row_index(data, "no_candidates")
    view = ws.edit(TABLE, ["rows", i, "when"], "{field: metrics.candidate_cuont, eq: 0}", True)
    marked = [p for p in view["problems"] if p["cell"] == ["rows", i, "when"]]
    assert [p["code"] for p in marked] == ["unknown-field"] and "candidate_count" in marked[0]["hint"]
    saved = ws.save(TABLE)
    assert saved["saved"] is False and "lint" in saved["refusal"]
    assert [p["cell"] for p in saved["problems"] if p["severity"] == "error"] == [["rows", i, "when"]]
    assert (project / TABLE).read_bytes() == before


def test_a_one_cell_edit_saves_as_a_one_line_diff_and_lint_passes_after(ws, project):
    before = (project / TABLE).read_text(encoding="utf-8")
    i = _row_index(yamltext.read(before), "no_usable_evidence.unreadable")
    view = ws.edit(TABLE, ["rows", i, "description"], "candidates came back, and none of them could be read", False)
    assert view["edited"] and view["problems"] == [] and view["examples"]["failed"] == 0
    assert (project / TABLE).read_text(encoding="utf-8") == before       # not until Save
    saved = ws.save(TABLE)
    after = (project / TABLE).read_text(encoding="utf-8")
    assert saved["saved"] and _changed_lines(before, after) == saved["diff"]
    assert saved["diff"] == [
        "-    description: candidates came back, but no page could be read",
        "+    description: candidates came back, and none of them could be read"]
    assert not lint(project).failed


def test_an_edit_runs_the_examples_and_the_corpus_on_the_unsaved_copy(ws, project):
    data = yamltext.read((project / TABLE).read_text(encoding="utf-8"))
    i = _row_index(data, "no_candidates")
    view = ws.edit(TABLE, ["rows", i, "when"], "{field: metrics.candidate_count, eq: 1}", True)
    assert view["examples"]["failed"] >= 1
    assert {tuple(f["cell"]) for f in view["examples"]["failures"] if f["cell"]} >= {("rows", i, "when")}
    assert view["corpus"]["changed"] >= 1 and any("no_candidates" in line for line in view["corpus"]["lines"])
    back = ws.edit(TABLE, ["rows", i, "when"], "{field: metrics.candidate_count, eq: 0}", True)
    assert not back["edited"] and back["corpus"]["changed"] == 0


def test_rows_are_added_moved_and_deleted_as_whole_lines(ws, project):
    before = (project / TABLE).read_text(encoding="utf-8")
    count = len(yamltext.read(before)["rows"])
    added = ws.rows(TABLE, "add", ["rows"], 0)
    grid = _rows(added)
    assert len(grid["rows"]) == count + 1 and grid["rows"][1]["label"] == "new_row_1"
    assert any(p["row"] == ["rows", 1] for p in added["problems"])       # a row without `when`, at its row
    assert ws.save(TABLE)["saved"] is False
    ws.rows(TABLE, "delete", ["rows"], 1)
    assert ws.text(TABLE) == before
    moved = ws.rows(TABLE, "move", ["rows"], 1, 0)
    ids = [r["label"] for r in _rows(moved)["rows"]]
    original = [r["id"] for r in yamltext.read(before)["rows"]]
    assert ids == [original[1], original[0]] + original[2:]
    ws.rows(TABLE, "move", ["rows"], 0, 1)
    assert ws.text(TABLE) == before
    prio = ws.rows(TABLE, "move", ["priority"], 2, 1)
    order = [r["cells"]["value"]["text"] for r in next(g for g in prio["grids"] if g["name"] == "priority")["rows"]]
    assert order[1:3] == yamltext.read(before)["priority"][2:0:-1]
    assert len(_changed_lines(before, ws.text(TABLE))) == 2


@pytest.mark.parametrize("file", ["../pyproject.toml", "/etc/passwd", "rules/../rules/support_reason.yaml",
                                  "schemas/knowledge-gateway.v1.schema.json", "rules/roles.yaml",
                                  "tests/cases/support_reason", None, ["rules/support_reason.yaml"]])
def test_only_tables_under_rules_and_locks_are_editable(untouched, file):
    project = untouched
    ws = Workspace(project)
    with pytest.raises(StudioRefusal) as refused:
        ws.open(file)
    assert str(project) not in refused.value.message
    with pytest.raises(StudioRefusal):
        ws.save(file)


def test_the_simulator_fires_on_a_corpus_case_what_the_table_fires(ws, project):
    inputs = ws.inputs(TABLE)
    table = next(t for t in inputs["tables"] if t["table"] == "support_reason")
    case = table["cases"][0]
    out = ws.simulate(TABLE, "support_reason", {"case": case})
    value = json.loads((project / "tests" / "cases" / "support_reason" / f"{case}.json").read_text(encoding="utf-8"))
    expected = [f.row.id for f in load(project).tables["support_reason"].evaluate(value).fired]
    assert [f["row"] for f in out["fired"]] == expected and expected
    assert {n["row"] for n in out["trace"]} == set(table_ids(project))
    assert all(f["at"].startswith(TABLE + ":") for f in out["fired"])


def table_ids(project: Path) -> list[str]:
    return [r["id"] for r in yamltext.read((project / TABLE).read_text(encoding="utf-8"))["rows"]]


def test_the_simulator_runs_a_logged_decision_read_as_a_reviewer(project):
    context = json.loads((project / "tests" / "cases" / "support_reason").glob("*.json").__next__().read_text(encoding="utf-8"))
    asked = []

    def read_decisions(arguments: dict) -> dict:
        asked.append(arguments)
        decision = {"id": "d1", "tool": "explain_support", "at": "2030-01-01T00:00:00Z", "arguments": {"context": context}}
        return {"ok": True, "data": {"decisions": [decision], "next": None}, "warnings": [], "error": None}

    ws = Workspace(project, decisions=read_decisions)
    assert ws.inputs(TABLE)["decisions"] == [{"id": "d1", "tool": "explain_support", "at": "2030-01-01T00:00:00Z"}]
    out = ws.simulate(TABLE, "support_reason", {"decision": "d1"})
    assert out["fired"] == ws.simulate(TABLE, "support_reason", {"input": context})["fired"]
    assert asked[-1] == {"decision_id": "d1"}


def test_the_page_and_the_api_over_loopback(ws, project):
    server = make_server(ws, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        assert host == LOOPBACK
        base = f"http://{host}:{port}"
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        page = opener.open(base + "/", timeout=30).read().decode("utf-8")
        assert "studio.js" in page and "http" not in page.replace("http-equiv", "")
        files = _post(opener, base, "files", {})
        assert files["ok"] and TABLE in [f["file"] for f in files["data"]]
        refused = _post(opener, base, "open", {"file": "../pyproject.toml"})
        assert refused["error"]["code"] == "INVALID_ARGUMENT" and str(project) not in refused["error"]["message"]
        opened = _post(opener, base, "open", {"file": TABLE})
        assert opened["ok"] and opened["data"]["problems"] == []
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _post(opener, base: str, action: str, body: dict) -> dict:
    request = urllib.request.Request(f"{base}/api/{action}", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with opener.open(request, timeout=60) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return json.loads(exc.read())


@pytest.mark.extended          # a real process
def test_the_command_picks_a_port_prints_it_and_serves_on_loopback(project):
    import signal
    import subprocess
    import sys
    command = [sys.executable, "-m", "groundrules.cli.main"]
    child = subprocess.Popen([*command, "--rules", str(project), "studio", "--port", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        line = child.stdout.readline().decode("utf-8")
        assert line.startswith(f"studio: http://{LOOPBACK}:"), line
        address = line.split()[1]
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        assert b"studio.js" in opener.open(address, timeout=30).read()
    finally:
        child.send_signal(signal.SIGINT)
        assert child.wait(timeout=30) == 0
        child.stdout.close()
        child.stderr.close()


def test_a_transition_table_edits_and_every_kind_simulates(ws, project):
    """A guard's message (a transition table) saved as one line; the simulator runs a lock table on a
    message, a move through a transition table, and the merge policy on a fold case."""
    file = "rules/finding_states.yaml"
    before = (project / file).read_text(encoding="utf-8")
    guard = next(iter(yamltext.read(before)["guards"]))
    view = ws.edit(file, ["guards", guard, "description"], "only the current record's belief may change", False)
    assert view["problems"] == [] and view["examples"]["failed"] == 0
    assert ws.save(file)["saved"]
    assert len(_changed_lines(before, (project / file).read_text(encoding="utf-8"))) == 2
    locked = ws.simulate("locks/cn_mobile.yaml", "cn_mobile",
                         {"input": {"id": "m1", "role": "user", "content": "我的手机号是 138 0000 1234"}})
    traced = locked["messages"][0]["tables"][0]
    assert [lock["normalized_value"] for lock in traced["locks"]] == ["13800001234"]
    assert all(p["at"].startswith("locks/cn_mobile.yaml:") for p in traced["patterns"])
    machine = yamltext.read(before)["machines"]["epistemic"]
    move = ws.simulate(file, "finding_states", {"input": {"machine": "epistemic", "from": machine["initial"],
                                                         "to": "provisional", "finding": {"lifecycle_state": "active"}}})
    assert move["trace"]["steps"][0]["step"] == "move" and move["trace"]["result"] == "ok"
    fold_case = next(t for t in ws.inputs("rules/merge.yaml")["tables"] if t["table"] == "merge")["cases"][0]
    folded = ws.simulate("rules/merge.yaml", "merge", {"case": fold_case})
    assert folded["events"] and all("outcome" in e for e in folded["events"])


@pytest.mark.extended          # real processes: a logged call, then the studio on its database
def test_the_command_reads_a_logged_decision_as_a_reviewer_and_simulates_it(project, tmp_path):
    import signal
    import subprocess
    import sys
    from cli_inproc import run_cli
    (tmp_path / "key").write_bytes(bytes(range(32)))
    case = sorted((project / "tests" / "cases" / "support_reason").glob("*.json"))[0]
    log = ["--db", str(tmp_path / "ledger.db"), "--decision-key", str(tmp_path / "key"),
           "--key-store", str(tmp_path / "keys"), "--project", "p1"]
    assert run_cli("--rules", str(project), "explain", str(case), *log, "--log-decisions").returncode == 0
    child = subprocess.Popen([sys.executable, "-m", "groundrules.cli.main", "--rules", str(project), "studio",
                              "--port", "0", *log, "--operator", "ana"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        address = child.stdout.readline().decode("utf-8").split()[1].rstrip("/")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        logged = _post(opener, address, "inputs", {"file": TABLE})["data"]["decisions"]
        assert [d["tool"] for d in logged] == ["explain_support"]
        out = _post(opener, address, "simulate", {"file": TABLE, "table": "support_reason", "decision": logged[0]["id"]})
        value = json.loads(case.read_text(encoding="utf-8"))
        assert [f["row"] for f in out["data"]["fired"]] == \
            [f.row.id for f in load(project).tables["support_reason"].evaluate(value).fired]
    finally:
        child.send_signal(signal.SIGINT)
        child.wait(timeout=30)
        child.stdout.close()
        child.stderr.close()
