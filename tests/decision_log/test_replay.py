"""Replay on both backends: the whole case corpus logged as traffic, then replayed. Under the
rulebook that logged it every answer comes back byte for byte; under an edited rulebook replay
reports exactly the calls a direct re-run says changed; a logged answer that does not reproduce
is reported as such; promote writes a case whose placeholders keep the lock behaviour."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from groundrules import Caller, Service, load_rulebook
from groundrules.cli.main import main
from groundrules.decision_log import replay
from groundrules.decision_log.replay import STATELESS
from groundrules.locks import lock
from groundrules.core.rulebook import data_root
from groundrules.core.schema_check import contract

from decision_support import KEY_MATERIAL
from corpus_traffic import traffic
from said import said, words

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases"
AGENT = Caller("agent-a", "agent", ("p1",))
OTHER = Caller("agent-b", "agent", ("p2",))
# the command line and promote read the log through the library, whose stores the other tests run
# on both backends: these run on SQLite only
ONCE = pytest.mark.parametrize("db", ["sqlite"], indirect=True)


@pytest.fixture
def logged(service):
    """The corpus logged as traffic in two projects, plus a call of a ledger tool (never replayed)."""
    for n, (tool, arguments) in enumerate(traffic()):
        service.call(tool, arguments, AGENT if n % 3 else OTHER)
    service.call("get_evidence", {}, AGENT)
    service.decisions.flush()
    return service


def edited(tmp_path: Path) -> Path:
    """The bundled tables with two edits an analyst might make: a mobile's second digit may no
    longer be 3, and recorded_unresolved yields to required_slots_missing."""
    root = tmp_path / "candidate"
    for part in ("rules", "locks", "schemas"):
        shutil.copytree(Path(data_root()) / part, root / part)
    phone = root / "locks" / "cn_mobile.yaml"
    text = phone.read_text(encoding="utf-8")
    check = 'in: "{second_digit}", reason: bad_second_digit}\n    examples:\n      - name: spaced'   # the mobile pattern's
    assert text.count(check) == 1
    phone.write_text(text.replace(check, check.replace('"{second_digit}"', '"456789"')), encoding="utf-8")
    table = root / "rules" / "support_reason.yaml"
    text = table.read_text(encoding="utf-8")
    old = "  - recorded_unresolved\n  - required_slots_missing\n"
    assert old in text
    table.write_text(text.replace(old, "  - required_slots_missing\n  - recorded_unresolved\n"), encoding="utf-8")
    return root


def changed_ids(result: dict) -> set:
    return {ex["decision"] for kind in replay.KINDS if kind != "not_reproduced" for ex in result["examples"][kind]}


def test_under_the_logged_rulebook_every_answer_reproduces(logged, rulebook):
    result = replay.replay(logged.decisions, rulebook, examples=5)
    stateless = [r for r in logged.decisions.rows() if r["tool"] in STATELESS]
    assert result["replayed"] == len(stateless) == len(traffic())
    assert (result["unchanged"], result["changed"], result["not_reproduced"]) == (len(stateless), 0, 0)
    assert set(result["by_tool"]) == set(STATELESS)


def test_under_an_edited_rulebook_replay_reports_exactly_what_a_direct_rerun_changes(logged, rulebook, tmp_path):
    candidate = load_rulebook(edited(tmp_path))
    result = replay.replay(logged.decisions, candidate, [rulebook], examples=10**6)
    direct, primary = set(), set()
    rerun = Service(candidate)
    for row in logged.decisions.rows(tools=list(STATELESS)):
        doc = logged.decisions.opened(row)
        again = rerun.call(row["tool"], doc["arguments"], Caller(row["principal"], row["role"], (row["project"],)))
        if {k: v for k, v in again.items() if k != "rulebook"} != {k: v for k, v in doc["answer"].items() if k != "rulebook"}:
            direct.add(row["id"])
            if row["tool"] == "explain_support" and again["data"]["primary"] != doc["answer"]["data"]["primary"]:
                primary.add(row["id"])
    assert direct and primary                                     # the edits change something of both kinds
    assert result["changed"] == len(direct) and changed_ids(result) == direct
    assert {ex["decision"] for ex in result["examples"]["primary"]} == primary
    assert result["primary"]["changed"] == len(primary)
    assert {"before": "recorded_unresolved", "after": "required_slots_missing"} in \
        [{k: m[k] for k in ("before", "after")} for m in result["primary"]["moves"]]
    assert result["locks"]["changed"] > 0 and [p["pattern"] for p in result["locks"]["by_pattern"]] == ["cn_mobile.mobile"]
    assert result["not_reproduced"] == 0                          # the logged tables were given: all reproduce
    assert result["rows"] == []                                   # a new priority order fires the same rows
    assert contract(rulebook.schemas, "replay.v1.schema.json").located(result) is None


def test_replay_over_workers_is_the_same_report(logged, rulebook, tmp_path):
    """Forked workers re-run the calls a chunk at a time; the report is the one a single process makes."""
    candidate = load_rulebook(edited(tmp_path))
    one = replay.replay(logged.decisions, candidate, [rulebook], examples=50)
    assert one["changed"] > 0
    for workers, chunk_rows in ((2, 7), (3, 1)):
        many = replay.replay(logged.decisions, candidate, [rulebook], examples=50, workers=workers, chunk_rows=chunk_rows,
                             in_flight=2)
        assert json.dumps(many, ensure_ascii=False) == json.dumps(one, ensure_ascii=False)


def test_filters_by_tool_project_and_time(logged, rulebook):
    only = replay.replay(logged.decisions, rulebook, tools=["lock_message"], projects=["p2"])
    n = sum(1 for i, (tool, _) in enumerate(traffic()) if tool == "lock_message" and i % 3 == 0)
    assert only["replayed"] == n and set(only["by_tool"]) == {"lock_message"}
    assert replay.replay(logged.decisions, rulebook, since="2999-01-01T00:00:00.000000Z")["replayed"] == 0


def test_an_answer_that_does_not_reproduce_is_reported_never_hidden(service, rulebook):
    arguments = {"message": {"id": "m1", "role": "user", "content": "手机 13812345678"}}
    answered = service.call("lock_message", arguments, AGENT)
    forged = json.loads(json.dumps({k: v for k, v in answered.items() if k != "decision"}))
    forged["data"]["locks"] = []                                  # what this rulebook never answered
    text = json.dumps(forged, ensure_ascii=False)
    service.decisions.record("lock_message", arguments, json.dumps(arguments, ensure_ascii=False), AGENT, forged, text,
                             service.decisions.timer())
    result = replay.replay(service.decisions, rulebook)
    assert (result["replayed"], result["not_reproduced"], result["changed"]) == (2, 1, 1)
    assert len(result["examples"]["not_reproduced"]) == 1
    assert replay.fails(result, "primary")                        # whatever --fail-on says
    assert contract(rulebook.schemas, "replay.v1.schema.json").located(result) is None   # what report --replay reads


@ONCE
def test_the_cli_masks_examples_and_fails_ci_on_request(logged, db, tmp_path, capsys, rulebook):
    key = tmp_path / "key"
    key.write_bytes(KEY_MATERIAL)
    base = ["replay", "--db", str(db), "--decision-key", str(key), "--rules", str(edited(tmp_path))]
    assert main([*base, "--fail-on", "locks", "--format", "json"]) == 1
    masked = capsys.readouterr().out
    result = json.loads(masked)
    messages = [m["content"] for _, a in traffic() if "messages" in a for m in a["messages"]]
    shown = {ex["decision"] for ex in result["examples"]["locks"]}
    assert shown and not any(text in masked for text in messages if len(text) > 8)
    assert main([*base, "--format", "json", "--reveal"]) == 0     # no --fail-on: a report, not a verdict
    revealed = capsys.readouterr().out
    assert any(text in revealed for text in messages if len(text) > 8)
    roles = rulebook.of_kind("role_table")[0]
    readers = [r for r in roles.roles if roles.may_call(r, "read_decisions")]
    for role in (r for r in roles.roles if r not in readers):          # the role table says who may reveal
        assert main([*base, "--reveal", "--role", role]) == 1
        assert said("usage.decisions_reveal", roles=readers, role=role) in capsys.readouterr().err
    assert readers and len(readers) < len(roles.roles)
    assert main([*base, "--tool", "get_evidence"]) == 1
    assert main([*base, "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert '<section class="group" id="replay">' in page and "cn_mobile.mobile" in page
    assert main(["replay", "--db", str(db), "--decision-key", str(key), "--fail-on", "any"]) == 0   # bundled = logged


@ONCE
def test_the_rulebook_report_shows_the_replay_of_its_own_tables(logged, db, tmp_path, capsys, rulebook):
    key = tmp_path / "key"
    key.write_bytes(KEY_MATERIAL)
    candidate = edited(tmp_path)
    assert main(["replay", "--db", str(db), "--decision-key", str(key), "--rules", str(candidate),
                 "--format", "json"]) == 0
    replayed = tmp_path / "replay.json"
    replayed.write_text(capsys.readouterr().out, encoding="utf-8")
    result = json.loads(replayed.read_text(encoding="utf-8"))
    assert result["changed"] > 0 and result["examples"]["locks"]

    assert main(["--rules", str(candidate), "report", "--out", str(tmp_path / "report"), "--replay", str(replayed)]) == 0
    capsys.readouterr()
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    section = page[page.index('<section class="group" id="replay">'):]
    assert f"{result['replayed']} replayed · {result['changed']} changed · {result['not_reproduced']} not reproduced" \
        in section
    assert f"on logged traffic: {result['replayed']} call(s) replayed, {result['changed']} changed" in page
    for kind, shown in result["examples"].items():               # every example, by its decision id
        assert all(f"<code>{ex['decision']}</code>" in section for ex in shown), kind
    assert 'href="#replay"' in page
    assert set(re.findall(r'href="#([^"]+)"', page)) <= set(re.findall(r' id="([^"]+)"', page))
    messages = [m["content"] for _, a in traffic() if "messages" in a for m in a["messages"]]
    assert not any(text in section for text in messages if len(text) > 8)   # masked, as replay wrote them

    # a replay under other tables, or a file that is no replay, is refused in one line
    assert main(["report", "--out", str(tmp_path / "other"), "--replay", str(replayed)]) == 1
    assert said("usage.replay_other_tables", path=str(replayed), replayed=result["candidate"], version=rulebook.version) \
        in capsys.readouterr().err
    (tmp_path / "bad.json").write_text(json.dumps(dict(result, replayed=-1)), encoding="utf-8")
    assert main(["--rules", str(candidate), "report", "--out", str(tmp_path / "other"),
                 "--replay", str(tmp_path / "bad.json")]) == 1
    err = capsys.readouterr().err
    assert all(w in err for w in words("usage.replay_not_replay")) and "replayed: " in err
    assert not (tmp_path / "other").exists()


@ONCE
def test_purge_is_for_the_roles_the_role_table_lets_read_decisions(logged, db, tmp_path, capsys, rulebook):
    key = tmp_path / "key"
    key.write_bytes(KEY_MATERIAL)
    base = ["decisions", "purge", "--db", str(db), "--decision-key", str(key)]
    roles = rulebook.of_kind("role_table")[0]
    readers = [r for r in roles.roles if roles.may_call(r, "read_decisions")]
    for role in roles.roles:
        code = main([*base, "--role", role])
        err = capsys.readouterr().err
        assert code == (0 if role in readers else 1), (role, err)
        assert (said("usage.decisions_purge", roles=readers, role=role) in err) == (role not in readers)
    assert main([*base, "--role", "no_such_role"]) == 1
    assert said("usage.role_unknown", role="no_such_role", roles=list(roles.roles)) in capsys.readouterr().err


@ONCE
def test_promote_writes_a_case_whose_placeholders_keep_the_lock_behaviour(service, rulebook, tmp_path, capsys, db):
    text = ("不方便接电话，微信 wx_wang01，手机 +86 139 1234 5678，或 12345678901，身份证 11010519491231002X，"
            "邮箱 wang@163.com")
    decision = service.call("lock_message", {"message": {"id": "m1", "role": "user", "content": text}}, AGENT)["decision"]
    service.decisions.flush()
    key = tmp_path / "key"
    key.write_bytes(KEY_MATERIAL)
    to = tmp_path / "cases" / "locks" / "promoted"
    args = ["replay", "--db", str(db), "--decision-key", str(key), "--promote", decision, "--to", str(to)]
    assert main(args) == 0
    assert "answers as the logged call did: yes" in capsys.readouterr().out
    [case] = to.glob("*.json")
    promoted = json.loads(case.read_text(encoding="utf-8"))["messages"][0]["content"]
    original = lock({"id": "m1", "role": "user", "content": text}, rulebook)
    again = lock({"id": "m1", "role": "user", "content": promoted}, rulebook)
    signature = [(c["pattern"], c["locator"]["start"], c["locator"]["end"], c["valid"], c["invalid_reason"])
                 for c in original]
    assert signature == [(c["pattern"], c["locator"]["start"], c["locator"]["end"], c["valid"], c["invalid_reason"])
                         for c in again]
    assert any(not c["valid"] for c in original)                  # an invalid candidate stays invalid, same reason
    for c in original:                                            # no value the locks found is left
        assert c["quote"] not in promoted and c["normalized_value"] not in promoted
    assert main(args) == 1                                        # written once
    assert all(w in capsys.readouterr().err for w in words("usage.promote_exists"))
    wrong = ["replay", "--db", str(db), "--decision-key", str(key), "--promote", decision, "--to", str(tmp_path / "fold")]
    assert main(wrong) == 1


@ONCE
def test_promote_an_explanation_into_its_decision_tables_corpus(service, tmp_path, capsys, db):
    context = json.loads((CASES / "support_reason" / "partial-engine-error-shenlun-count.json").read_text(encoding="utf-8"))
    decision = service.call("explain_support", {"context": context}, AGENT)["decision"]
    service.decisions.flush()
    key = tmp_path / "key"
    key.write_bytes(KEY_MATERIAL)
    to = tmp_path / "cases" / "support_reason"
    assert main(["replay", "--db", str(db), "--decision-key", str(key), "--promote", decision, "--to", str(to)]) == 0
    assert "yes" in capsys.readouterr().out
    [case] = to.glob("*.json")
    assert json.loads(case.read_text(encoding="utf-8")) == context   # nothing personal the locks find in it
