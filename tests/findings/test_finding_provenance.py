"""Issue 30 on the finding ledger: every link and event names its authenticated writer, independence
is derived from what is known (never from a label), support needs evidence made after the last
demotion, and the forgeries of seed 001 reach no `supported` state. On both backends."""
from __future__ import annotations

import sqlite3
import subprocess

import pytest
import yaml

from findings_support import EXPERIMENT, ROOT, USER_SAYS, database_errors, finding, ok, refused, sql
from groundrules import Caller, FindingLedger
from groundrules.api import Authentication
from groundrules.findings import SequentialIds, StepClock
from groundrules.store.findings_sql import UNKNOWN_WRITER

SUPPORT = yaml.safe_load((ROOT / "rules" / "independent_support.yaml").read_text(encoding="utf-8"))
PROVENANCE = yaml.safe_load((ROOT / "rules" / "finding_provenance.yaml").read_text(encoding="utf-8"))
# seed 001 (issue 30): labels an agent picks, each filed as a reproduction
SEED_LABELS = ["用户消息", "customer_email", "gpt4_reasoning", "assistant_summary", "llm_self_check"]
RUN = {"source_kind": "ci_run", "source_ref": "ci:run/918", "excerpt": "3/3 次复现误差翻倍", "relation": "supports",
       "method": "reproduction"}


def forged(label: str, n: int) -> dict:
    return {"source_kind": label, "source_ref": f"note:{n}", "excerpt": f"{label} 说它成立", "relation": "supports",
            "method": "reproduction"}


@pytest.fixture
def people(make_ledger):
    """An agent, a runner and a reviewer on one ledger, each authenticated by a token."""
    agent = make_ledger(principal="agent-7", role="agent")
    runner = make_ledger(principal="ci", role="runner")
    reviewer = make_ledger(principal="alice", role="reviewer")
    for client in (agent, runner, reviewer):
        client.caller = Caller(client.caller.principal, client.caller.role, client.caller.projects,
                               Authentication("token"))
    return agent, runner, reviewer


def state(client, finding_id: str) -> str:
    return ok(client.call("get_finding", {"finding_id": finding_id}))["finding"]["epistemic_state"]


def version(client, finding_id: str) -> int:
    return ok(client.call("get_finding", {"finding_id": finding_id}))["finding"]["version"]


def test_no_forgery_of_seed_001_reaches_supported_and_the_runners_and_reviewers_writes_are_accepted(people):
    agent, runner, reviewer = people
    attempts = 0
    # 1. each label, filed as a reproduction, as the evidence of a new `supported` finding
    for n, label in enumerate(SEED_LABELS):
        refused(agent.call("log_finding", finding(epistemic_state="supported", evidence=[forged(label, n)])),
                "EVIDENCE_REQUIRED")
        attempts += 1
    # 2. the same evidence on a provisional finding, then a state change citing it
    fid = ok(agent.call("log_finding", finding(epistemic_state="provisional",
                                               evidence=[forged(label, n) for n, label in enumerate(SEED_LABELS)])))
    assert [s["code"] for s in fid["support"]] == ["declared_only"] * len(SEED_LABELS)
    fid = fid["finding_id"]
    refused(agent.call("set_finding_state", {"finding_id": fid, "epistemic_state": "supported", "reason": "五条证据都支持",
                                             "expected_version": 1}), "EVIDENCE_REQUIRED")
    attempts += 1
    assert state(agent, fid) == "provisional"
    # the runner's run is accepted and counts: the agent may now move the finding
    added = ok(runner.call("add_evidence", {"finding_id": fid, "evidence": RUN}))
    assert added["support"][0] | {"independent": True, "code": "runner_run"} == added["support"][0]
    ok(agent.call("set_finding_state", {"finding_id": fid, "epistemic_state": "supported", "reason": "CI 复现",
                                        "expected_version": 2}))
    # 3. a revalidation finds it not reproducible: the run it had no longer supports it
    ok(runner.call("revalidate_finding", {"finding_id": fid, "result": "insufficient", "reason": "复现失败",
                                          "expected_version": 3}))
    assert state(agent, fid) == "provisional"
    error = refused(agent.call("set_finding_state", {"finding_id": fid, "epistemic_state": "supported",
                                                     "reason": "我确定它成立", "expected_version": 4}), "EVIDENCE_REQUIRED")
    attempts += 1
    # the refusal says why: the run counts as independent, but it came before the demotion
    assert [(s["code"], s["after_demotion"]) for s in error["support"] if s["independent"]] == [("runner_run", False)]
    # 4. still_supports with only a colleague's remark, then with no evidence at all
    remark = dict(USER_SAYS, source_kind="colleague_remark", source_ref="chat:42", excerpt="同事说没问题")
    refused(agent.call("revalidate_finding", {"finding_id": fid, "result": "still_supports", "reason": "同事确认",
                                              "evidence": [remark], "expected_version": 4}), "EVIDENCE_REQUIRED")
    refused(agent.call("revalidate_finding", {"finding_id": fid, "result": "still_supports", "reason": "应该还成立",
                                              "expected_version": 4}), "EVIDENCE_REQUIRED")
    attempts += 2
    # 5. the agent's own self-check added after the demotion, then cited
    self_check = forged("llm_self_check", 99)
    ok(agent.call("add_evidence", {"finding_id": fid, "evidence": self_check}))
    refused(agent.call("set_finding_state", {"finding_id": fid, "epistemic_state": "supported", "reason": "自检通过",
                                             "expected_version": 5}), "EVIDENCE_REQUIRED")
    attempts += 1
    assert state(agent, fid) == "provisional"
    # a reviewer's check after the demotion is accepted and counts
    ok(reviewer.call("add_evidence", {"finding_id": fid, "evidence": dict(EXPERIMENT, source_ref="run:5000")}))
    moved = ok(agent.call("set_finding_state", {"finding_id": fid, "epistemic_state": "supported",
                                                "reason": "审核人复核", "expected_version": 6}))
    assert moved["to"] == "supported"
    assert sorted((s["code"], s["after_demotion"]) for s in moved["support"] if s["independent"]) == [
        ("reviewer_check", True), ("runner_run", False)]
    assert attempts == 10                       # the count the note reports
    # every link and event shows who wrote it, as authenticated, never a name from the arguments
    shown = ok(agent.call("get_finding", {"finding_id": fid, "events_limit": 50, "evidence_limit": 50}))
    writers = [(e["writer"]["principal"], e["writer"]["role"], e["writer"]["auth"]["method"]) for e in shown["evidence"]]
    assert sorted(writers) == [("agent-7", "agent", "token")] * 6 + [("alice", "reviewer", "token"),
                                                                      ("ci", "runner", "token")]
    assert [e["writer"]["principal"] for e in shown["events"]] == [
        "agent-7", "ci", "agent-7", "ci", "agent-7", "alice", "agent-7"]
    assert shown["events_total"] == len(shown["events"])


def test_a_still_supported_finding_needing_revalidation_stays_so_without_new_independent_evidence(people):
    agent, runner, _ = people
    fid = ok(runner.call("log_finding", finding(epistemic_state="supported", evidence=[RUN])))["finding_id"]
    moved_on = {"scope_context": {"commit": "a1b2c3d", "runtime.backend": "vLLM"}}
    verdict = ok(agent.call("query_findings", {"keyword": "off-by-one", **moved_on}))["findings"][0]["applicability"]
    assert verdict["verdict"] == "needs_revalidation"
    error = refused(agent.call("revalidate_finding", {"finding_id": fid, "result": "still_supports", "reason": "应该还对",
                                                      "expected_version": 1, **moved_on}), "EVIDENCE_REQUIRED")
    assert error["guard"] == "revalidation-brings-support"
    again = ok(agent.call("query_findings", {"keyword": "off-by-one", **moved_on}))["findings"][0]["applicability"]
    assert again["verdict"] == "needs_revalidation"
    done = ok(runner.call("revalidate_finding", {"finding_id": fid, "result": "still_supports", "reason": "CI 重跑",
                                                 "expected_version": 1, "evidence": [dict(RUN, source_ref="ci:run/919")],
                                                 **moved_on}))
    assert done["support"][0]["code"] == "runner_run"
    after = ok(agent.call("query_findings", {"keyword": "off-by-one", **moved_on}))["findings"][0]["applicability"]
    assert after["verdict"] != "needs_revalidation"


@pytest.mark.parametrize("where", ["top", "evidence"])
def test_a_writer_cannot_be_given_in_the_arguments(ledger, where):
    forged_writer = {"principal": "alice", "role": "reviewer", "auth": {"method": "oauth"}}
    args = finding(evidence=[dict(EXPERIMENT, writer=forged_writer) if where == "evidence" else EXPERIMENT])
    if where == "top":
        args["writer"] = forged_writer
    refused(ledger.call("log_finding", args), "INVALID_ARGUMENT")


def test_a_role_the_provenance_table_does_not_allow_a_method_is_refused_and_nothing_is_written(make_ledger):
    runner = make_ledger(principal="ci", role="runner")
    allowed = next(w["methods"] for w in PROVENANCE["writers"] if w["role"] == "runner")
    denied = next(m for m in ("user_statement", "model_inference") if m not in allowed)
    error = refused(runner.call("log_finding", finding(evidence=[EXPERIMENT, dict(USER_SAYS, method=denied)])),
                    "PERMISSION_DENIED")
    assert "runner" in error["message"] and denied in error["message"]
    assert sql(runner.store, "SELECT COUNT(*) FROM findings")[0][0] == 0
    assert sql(runner.store, "SELECT COUNT(*) FROM evidence")[0][0] == 0
    data = ok(runner.call("log_finding", finding(evidence=[dict(EXPERIMENT, method=allowed[0])])))
    assert data["support"][0]["independent"] is True


def test_a_label_never_makes_evidence_independent(people):
    """Whatever the source_kind, the same writer and method get the same verdict: the table has no
    fact to read it by."""
    agent, runner, _ = people
    for client, expected in ((agent, "declared_only"), (runner, "runner_run")):
        codes = {ok(client.call("log_finding", finding(evidence=[forged(label, n)])))["support"][0]["code"]
                 for n, label in enumerate(SEED_LABELS + ["experiment_run", "ci_run"])}
        assert codes == {expected}
    assert not any("source_kind" in str(row["when"]) for row in SUPPORT["rows"])


# -------------------------------------------------------------------------- what groundrules checked itself


def _git(root, *args):
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@e", "PATH": "/usr/bin:/bin", "HOME": str(root)})


def code_reading(path: str, excerpt: str, revision: str = "", locator: str = "") -> dict:
    return {"source_kind": "file", "source_ref": path, "locator": locator, "revision": revision, "excerpt": excerpt,
            "relation": "supports", "method": "code_reading"}


def test_an_agents_code_reading_counts_only_when_groundrules_finds_the_excerpt(make_ledger, tmp_path):
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "shift.py").write_text("def shift(x):\n    return x - 1  # off-by-one\n", encoding="utf-8")
    agent = make_ledger(principal="agent-7", role="agent", root=root)
    cases = [(code_reading("src/shift.py", "return x - 1"), "excerpt_found", True),
             (code_reading("src/shift.py", "return x - 1", locator="L2"), "excerpt_found", True),
             (code_reading("src/shift.py", "return x - 1", locator="L1"), "excerpt_not_found", False),
             (code_reading("src/shift.py", "return x + 1"), "excerpt_not_found", False),
             (code_reading("src/missing.py", "return x - 1"), "excerpt_not_found", False),
             (code_reading("../outside.py", "return x - 1"), "excerpt_not_found", False)]
    for item, code, counts in cases:
        data = ok(agent.call("log_finding", finding(epistemic_state="supported" if counts else "provisional",
                                                    evidence=[item])))
        assert (data["support"][0]["code"], data["support"][0]["independent"]) == (code, counts), item
    without_root = make_ledger(principal="agent-7", role="agent")
    data = ok(without_root.call("log_finding", finding(evidence=[cases[0][0]])))
    assert data["support"][0]["code"] == "declared_only"


def test_an_excerpt_is_looked_up_at_its_revision_in_a_git_checkout(make_ledger, tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    (root / "a.py").write_text("x = 1  # old\n", encoding="utf-8")
    _git(root, "add", "a.py")
    _git(root, "commit", "-q", "-m", "old")
    old = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                         check=True).stdout.strip()
    (root / "a.py").write_text("x = 2  # new\n", encoding="utf-8")      # the working file moved on
    agent = make_ledger(principal="agent-7", role="agent", root=root)
    codes = [ok(agent.call("log_finding", finding(evidence=[item])))["support"][0]["code"] for item in (
        code_reading("a.py", "x = 1", revision=old), code_reading("a.py", "x = 2", revision=old),
        code_reading("a.py", "x = 2"), code_reading("a.py", "x = 1", revision="-h"),
        code_reading("a.py", "x = 1", revision="0" * 40))]
    assert codes == ["excerpt_found", "excerpt_not_found", "excerpt_found", "excerpt_not_found", "excerpt_not_found"]


# -------------------------------------------------------------------------- old rows, append only


def _old_database(db, tmp_path) -> str:
    """A ledger at the schema before writers were stamped, holding one finding, one evidence link
    and one event as that schema held them."""
    finding_row = ("F-old", "p1", "diagnosis", "旧的结论", "", "supported", "active", '{"match":{},"context":{},'
                   '"revalidate_on":[]}', "relevant", 1, "t0", "t0", "t0")
    if not isinstance(db, str):
        from groundrules.store import findings_sqlite
        conn = sqlite3.connect(str(db), isolation_level=None)
        findings_sqlite.sqlite_base.migrate(conn, findings_sqlite.MIGRATIONS[:4], findings_sqlite.MIGRATIONS_TABLE)
        run = conn.execute
        marks, search = "?", ""
    else:
        import psycopg
        from groundrules.store.findings_postgres import MIGRATIONS, PostgresFindingStore
        conn = psycopg.connect(db, autocommit=True)
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")
        old = type("Old", (PostgresFindingStore,), {"MIGRATIONS": MIGRATIONS[:5]})
        old.migrate(old, conn)
        run = conn.execute
        marks, search = "%s", ", search"
    values = ", ".join([marks] * (len(finding_row) + bool(search)))
    run(f"INSERT INTO findings (id, project, claim_kind, statement, details, epistemic_state, lifecycle_state, "
        f"scope_json, retrieval_policy, version, created_at, updated_at, last_validated_at{search}) VALUES ({values})",
        finding_row + (("",) if search else ()))
    run("INSERT INTO evidence (id, project, source_kind, source_ref, locator, revision, content_hash, excerpt, "
        "created_at) VALUES ('E-old', 'p1', 'experiment_run', 'run:1', '', '', 'sha256:x', '旧证据', 't0')")
    run("INSERT INTO finding_evidence (finding_seq, evidence_seq, relation, method, rationale, created_at) "
        "SELECT f.seq, e.seq, 'supports', 'experiment', '', 't0' FROM findings f, evidence e")
    run("INSERT INTO finding_events (id, finding_seq, kind, tool, from_state, to_state, reason, payload_json, version, "
        "at) SELECT 'EV-old', seq, 'created', 'log_finding', NULL, 'supported', '', '{}', 1, 't0' FROM findings")
    conn.close()
    return str(db)


def test_rows_written_before_writers_were_stamped_say_the_writer_is_unknown_and_never_count(book, db, tmp_path):
    path = _old_database(db, tmp_path)
    ledger = FindingLedger(path, rulebook=book, clock=StepClock(), ids=SequentialIds())
    try:
        caller = Caller("alice", "reviewer", ("p1",))
        from groundrules import Service
        service = Service(book, findings=ledger)
        shown = ok(service.call("get_finding", {"finding_id": "F-old"}, caller))
        assert shown["evidence"][0]["writer"] == UNKNOWN_WRITER
        assert shown["evidence"][0]["support"]["code"] == "writer_unknown"
        assert shown["events"][0]["writer"] == UNKNOWN_WRITER
        # the migrated state stays; moving back to supported needs a link nobody can doubt
        ok(service.call("set_finding_state", {"finding_id": "F-old", "epistemic_state": "provisional",
                                              "reason": "复查", "expected_version": 1}, caller))
        refused(service.call("set_finding_state", {"finding_id": "F-old", "epistemic_state": "supported",
                                                   "reason": "旧证据", "expected_version": 2}, caller),
                "EVIDENCE_REQUIRED")
        # links stay as written: no UPDATE, no DELETE, whoever connects
        for statement in ("UPDATE finding_evidence SET writer_json = '{}'", "DELETE FROM finding_evidence",
                          "UPDATE finding_events SET writer_json = '{}'"):
            with pytest.raises(database_errors()):
                sql(ledger.store, statement)
    finally:
        ledger.close()


# -------------------------------------------------------------------------- material change


@pytest.mark.parametrize("statement, created_new", [
    ("当前探针结果不支持 off-by-one 是该差异的 主因", False),           # a space between two CJK characters
    ("当前探针结果不支持  off-by-one 是该差异的主因", False),          # a longer run of whitespace
    ("当前探针结果不支持 off-by-one是该差异的主因", True),             # a space removed beside Latin text
    ("当前探针结果支持 off-by-one 是该差异的主因", True),
])
def test_whitespace_between_cjk_characters_is_no_material_change(ledger, statement, created_new):
    fid = ok(ledger.call("log_finding", finding(evidence=[EXPERIMENT])))["finding_id"]
    data = ok(ledger.call("revalidate_finding", {"finding_id": fid, "result": "still_supports", "reason": "复核",
                                                 "statement": statement, "expected_version": 1,
                                                 "evidence": [dict(EXPERIMENT, source_ref="run:9")]}))
    assert data["created_new"] is created_new


# -------------------------------------------------------------------------- the table's names


@pytest.mark.parametrize("edit, key", [
    (("role: runner", "role: runer"), "writers.2.role"),
    (("methods: [experiment, test_run, reproduction, measurement, log_inspection]",
      "methods: [experimnet, test_run, reproduction, measurement, log_inspection]"), "writers.2.methods.0"),
    (("methods: [code_reading, document]", "methods: [code_reading, documents]"), "source_checks.methods.1"),
])
def test_a_provenance_table_naming_what_no_table_defines_fails_the_ledgers_load(tmp_path, edit, key, sqlite_db):
    from findings_support import TABLES
    from groundrules import load_rulebook
    from groundrules.core.errors import RulesError
    text = (ROOT / "rules" / "finding_provenance.yaml").read_text(encoding="utf-8")
    assert text.count(edit[0]) == 1
    (tmp_path / "finding_provenance.yaml").write_text(text.replace(*edit), encoding="utf-8")
    book = load_rulebook(ROOT, [t for t in TABLES if t.name != "finding_provenance.yaml"]
                         + [tmp_path / "finding_provenance.yaml"])
    with pytest.raises(RulesError) as raised:
        FindingLedger(sqlite_db, rulebook=book)
    assert [(p.code, p.key) for p in raised.value.problems] == [("unknown-name", key)]


def test_an_agent_relays_a_runners_signed_run_and_it_keeps_its_weight(people, tmp_path):
    """Issue 30, item 3: the runner signs its result (the trust store lets it vouch for its methods);
    an agent that relays it byte for byte gets a link that counts, one that changes a byte, signs with
    an unknown key or vouches for a method the signer may not is refused and writes nothing."""
    from joserfc.jwk import OKPKey
    from groundrules.provenance.signatures import sign
    from groundrules.provenance.trust import load_trust
    agent, _, _ = people
    key = OKPKey.generate_key("Ed25519", parameters={"kid": "ci-2026"})
    methods = [m for m in PROVENANCE["writers"][[w["role"] for w in PROVENANCE["writers"]].index("runner")]["methods"]
               if m != RUN["method"]]
    flow = ", ".join(f"{k}: {v}" for k, v in key.as_dict(private=False).items())
    (tmp_path / "trust.yaml").write_text(f"signers:\n  ci-runner:\n    keys: [{{{flow}}}]\n"
                                         f"    methods: [{RUN['method']}]\n", encoding="utf-8")
    agent.service = agent.service.with_trust(load_trust(tmp_path / "trust.yaml"))
    fid = ok(agent.call("log_finding", finding(epistemic_state="provisional")))["finding_id"]
    signed = sign(RUN, key.as_dict(private=True))
    stranger = sign(RUN, OKPKey.generate_key("Ed25519", parameters={"kid": "who"}).as_dict(private=True))
    for bad in (dict(signed, excerpt="3/3 次复现误差翻三倍"), stranger,
                sign(dict(RUN, method=methods[0]), key.as_dict(private=True))):
        error = refused(agent.call("add_evidence", {"finding_id": fid, "evidence": bad}), "INVALID_ARGUMENT")
        assert error["field"] == "evidence.signature"
    assert version(agent, fid) == 1
    added = ok(agent.call("add_evidence", {"finding_id": fid, "evidence": signed}))
    assert added["support"][0]["independent"] is True
    moved = ok(agent.call("set_finding_state", {"finding_id": fid, "epistemic_state": "supported",
                                                "reason": "CI 签署的复现", "expected_version": 2}))
    assert moved["to"] == "supported"
    shown = ok(agent.call("get_finding", {"finding_id": fid}))["evidence"]
    assert [e["writer"].get("signer") for e in shown] == ["ci-runner"]
