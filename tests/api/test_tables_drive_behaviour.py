"""The rules the code acts on live in the tables: rename a state, a relation, an event type or a
role in a copy of the tables, or change a flag or an order, and the behaviour follows with no Python
edit; `groundrules lint` and `groundrules test` pass on the edited copy."""
from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

import pytest

from cli_inproc import run_cli
from groundrules import Caller, FindingLedger, GroundrulesError, Service, fold, load_rulebook
from groundrules.locks import lock_text
from table_edits import TableFile
from said import said

ROOT = Path(__file__).resolve().parents[2]


def copy_of_tables(tmp_path: Path, edits: dict[str, list[tuple[str, str]]]) -> Path:
    """rules/, locks/ and schemas/ copied to tmp_path (the case corpus the acceptance tables run on
    beside them), with regex edits applied per rules file."""
    root = tmp_path / "tables"
    for folder in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / folder, root / folder)
    (root / "tests").mkdir()
    (root / "tests" / "cases").symlink_to(ROOT / "tests" / "cases", target_is_directory=True)
    for name, replacements in edits.items():
        path = root / "rules" / name
        text = path.read_text(encoding="utf-8")
        for pattern, new in replacements:
            text, count = re.subn(pattern, new, text)
            assert count, (name, pattern)
        path.write_text(text, encoding="utf-8")
    return root


FINDING = {"claim_kind": "diagnosis", "statement": "温度漂移导致误差"}
COUNTER = {"source_kind": "log", "source_ref": "log:gpu", "excerpt": "温度升高后误差翻倍", "relation": "contradicts",
           "method": "log_inspection"}


def ledger_service(root: Path, db: Path, rules_root: Path | None = None) -> tuple[Service, Caller]:
    book = load_rulebook(root)
    return (Service(book, findings=FindingLedger(db, rulebook=book, rules_root=rules_root)),
            Caller("analyst", "agent", ("p1",)))


def assert_the_analysts_gate_passes(root: Path) -> None:
    """`groundrules lint` and `groundrules test` on the edited copy: what an analyst runs."""
    lint = run_cli("--rules", root, "lint")
    assert lint.returncode == 0 and "lint: 0 error(s)" in lint.stdout.decode(), lint.stdout.decode()
    test = run_cli("--rules", root, "test")
    assert test.returncode == 0 and " 0 failed" in test.stdout.decode(), test.stdout.decode()[-2000:]


def test_renaming_finding_states_and_relations_in_the_tables_renames_what_the_tools_do(tmp_path):
    rename = [(r"\brefuted\b", "disproved"), (r"\bsuperseded\b", "replaced"), (r"\bsupersedes\b", "takes_over")]
    root = copy_of_tables(tmp_path, {"finding_states.yaml": rename[:2], "findings_vocabulary.yaml": rename,
                                     "findings_warnings.yaml": rename[:1]})
    service, caller = ledger_service(root, tmp_path / "l.db")
    first = service.call("log_finding", FINDING, caller)["data"]["finding_id"]
    refuted = service.call("refute_finding", {"finding_id": first, "reason": "日志反证", "evidence": [COUNTER],
                                              "expected_version": 1}, caller)
    assert refuted["data"]["epistemic_state"] == "disproved"
    second = service.call("log_finding", FINDING, caller)["data"]["finding_id"]
    newer = service.call("supersede_finding", {"finding_id": second, "reason": "更准确", "expected_version": 1,
                                               "new": dict(FINDING, statement="GPU 温度漂移导致误差")}, caller)
    assert newer["ok"], newer["error"]
    old = service.call("get_finding", {"finding_id": second}, caller)["data"]
    assert old["finding"]["lifecycle_state"] == "replaced"
    assert [(r["direction"], r["relation"]) for r in old["relations"]] == [("incoming", "takes_over")]
    listed = service.call("query_findings", {"include_history": True}, caller)["data"]["findings"]
    current = {f["finding_id"]: f["applicability"]["current"] for f in listed}
    assert current[first] is False and current[second] is False and current[newer["data"]["finding_id"]] is True


def test_renaming_a_proposal_state_renames_what_approve_and_reject_do(tmp_path):
    """approve_rule moves a proposal to the state its transition names (finding_states.yaml `via`),
    whatever that state is called."""
    root = copy_of_tables(tmp_path, {"finding_states.yaml": [(r"\bapplied\b", "accepted"),
                                                             (r"\brejected\b", "declined")]})
    assert_the_analysts_gate_passes(root)
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("# 规则\n", encoding="utf-8")
    service, agent = ledger_service(root, tmp_path / "l.db", rules_root=project)
    reviewer = Caller("user:alice", "reviewer", ("p1",))
    fid = service.call("log_finding", FINDING, agent)["data"]["finding_id"]

    def propose() -> str:
        return service.call("propose_rule", {"finding_id": fid, "rule_text": "- 先记录温度", "target_path": "AGENTS.md",
                                             "rationale": "两次误判"}, agent)["data"]["proposal_id"]
    first, second = propose(), propose()
    approved = service.call("approve_rule", {"proposal_id": first}, reviewer)
    assert approved["ok"], approved["error"]
    assert approved["data"]["status"] == "accepted"
    again = service.call("approve_rule", {"proposal_id": first}, reviewer)      # a re-run writes nothing twice
    assert again["ok"] and again["data"]["version"] == approved["data"]["version"]
    assert (project / "AGENTS.md").read_text(encoding="utf-8").count("- 先记录温度") == 1
    assert service.call("reject_rule", {"proposal_id": second}, reviewer)["data"]["status"] == "declined"
    refused = service.call("approve_rule", {"proposal_id": second}, reviewer)["error"]
    assert refused["code"] == "INVALID_STATE_TRANSITION" and "declined" in refused["message"]
    shown = service.call("get_finding", {"finding_id": fid}, agent)["data"]
    assert [(p["proposal_id"], p["status"]) for p in shown["rule_proposals"]] == [(first, "accepted"),
                                                                               (second, "declined")]


def test_a_decision_no_transition_leads_to_fails_the_ledger_at_the_machine(tmp_path):
    root = copy_of_tables(tmp_path, {"finding_states.yaml": [(r"via: \[reject_rule\]", "via: [set_finding_state]")]})
    with pytest.raises(GroundrulesError) as info:
        ledger_service(root, tmp_path / "l.db")
    [problem] = info.value.problems
    assert (problem.file, problem.code, problem.key) == ("rules/finding_states.yaml", "decision-target",
                                                        "machines.proposal.transitions")
    assert "reject_rule" in problem.message


def test_renaming_an_event_kind_renames_what_the_history_records(tmp_path, rulebook):
    vocabulary = (ROOT / "rules" / "findings_vocabulary.yaml").read_text(encoding="utf-8")
    kinds = rulebook.table("findings_vocabulary").event_kinds
    old = kinds["set_finding_state"]
    assert re.search(rf"set_finding_state: {old}\n", vocabulary)
    root = copy_of_tables(tmp_path, {"findings_vocabulary.yaml": [(rf"set_finding_state: {old}\n",
                                                                   "set_finding_state: belief_moved\n")]})
    assert_the_analysts_gate_passes(root)
    service, caller = ledger_service(root, tmp_path / "l.db")
    fid = service.call("log_finding", FINDING, caller)["data"]["finding_id"]
    moved = service.call("set_finding_state", {"finding_id": fid, "epistemic_state": "provisional", "reason": "初判",
                                               "expected_version": 1}, caller)
    assert moved["ok"], moved["error"]
    events = service.call("get_finding", {"finding_id": fid}, caller)["data"]["events"]
    assert sorted(e["kind"] for e in events) == sorted([kinds["new_finding"], "belief_moved"])


def test_two_writes_recording_one_event_kind_fail_the_load_at_the_second(tmp_path, rulebook):
    kinds = rulebook.table("findings_vocabulary").event_kinds
    root = copy_of_tables(tmp_path, {"findings_vocabulary.yaml": [
        (rf"link_finding: {kinds['link_finding']}\n", f"link_finding: {kinds['add_evidence']}\n")]})
    lint = run_cli("--rules", root, "lint")
    assert lint.returncode != 0
    assert re.search(r"rules/findings_vocabulary\.yaml:\d+:\d+: duplicate-event-kind", lint.stdout.decode()
                     + lint.stderr.decode())


def test_a_role_added_to_the_role_table_can_be_chosen_on_the_command_line(tmp_path):
    root = copy_of_tables(tmp_path, {"roles.yaml": [
        (r"\ntools:\n", "\n  auditor:\n    label: 审计\n    description: 只读\n\ntools:\n"),
        (r"query_findings: +\{roles: \[", "query_findings: {roles: [auditor, ")]})
    assert_the_analysts_gate_passes(root)
    db = str(tmp_path / "l.db")
    listed = run_cli("--rules", root, "call", "query_findings", "-", "--db", db, "--role", "auditor", stdin="{}")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["data"]["findings"] == []
    denied = json.loads(run_cli("--rules", root, "call", "log_finding", "-", "--db", db, "--role", "auditor",
                                stdin=json.dumps(FINDING)).stdout)
    assert denied["error"]["code"] == "PERMISSION_DENIED"
    unknown = run_cli("--rules", root, "call", "query_findings", "-", "--db", str(tmp_path / "other.db"),
                      "--role", "auditr", stdin="{}")
    assert unknown.returncode == 1 and unknown.stdout == b""
    roles = list(load_rulebook(root).table("roles").roles)
    assert roles[-1] == "auditor" and not (tmp_path / "other.db").exists()
    assert said("usage.role_unknown", role="auditr", roles=roles) in unknown.stderr.decode()


def test_the_old_state_name_no_longer_exists_once_renamed(tmp_path):
    root = copy_of_tables(tmp_path, {"finding_states.yaml": [(r"\brefuted\b", "disproved")],
                                     "findings_vocabulary.yaml": [(r"\brefuted\b", "disproved")],
                                     "findings_warnings.yaml": [(r"\brefuted\b", "disproved")]})
    service, caller = ledger_service(root, tmp_path / "l.db")
    fid = service.call("log_finding", FINDING, caller)["data"]["finding_id"]
    answer = service.call("set_finding_state", {"finding_id": fid, "epistemic_state": "refuted", "reason": "r",
                                                "expected_version": 1}, caller)
    assert (answer["error"]["code"], answer["error"]["field"]) == ("INVALID_ARGUMENT", "epistemic_state")


def test_a_vocabulary_naming_a_state_its_machine_lacks_fails_at_its_line(tmp_path):
    root = copy_of_tables(tmp_path, {"findings_vocabulary.yaml": [(r"refute_state: refuted", "refute_state: refutd")]})
    with pytest.raises(GroundrulesError) as info:
        ledger_service(root, tmp_path / "l.db")
    problem = info.value.problems[0]
    assert (problem.file, problem.code, problem.key) == ("rules/findings_vocabulary.yaml", "unknown-state",
                                                        "acts_on.refute_state")
    assert (ROOT / "rules" / "findings_vocabulary.yaml").read_text(encoding="utf-8").splitlines()[
        problem.line - 1].strip().startswith("refute_state:")


SEED_CORRECT = {  # seed 003 §七: E19 corrects E07
    "now": "2024-05-01T12:00:00+08:00",
    "records": [{"id": "E07", "type": "message", "role": "user", "state": "sent", "content": "我们公司登记地在 A 地"},
                {"id": "E19", "type": "message", "role": "user", "state": "sent", "content": "这批产品是要交付到 B 地分部的"}],
    "interpretations": [{"id": "I1", "dispositions": [], "events": [
        {"id": "e1", "type": "set", "slot": "region", "value": "A 地", "evidence": ["E07"]},
        {"id": "e2", "type": "TYPE", "slot": "region", "value": "B 地", "evidence": ["E07", "E19"]}]}]}


def with_type(event_type: str) -> dict:
    payload = {**SEED_CORRECT, "interpretations": [dict(SEED_CORRECT["interpretations"][0])]}
    events = [dict(e) for e in SEED_CORRECT["interpretations"][0]["events"]]
    events[1]["type"] = event_type
    payload["interpretations"][0]["events"] = events
    return payload


def test_renaming_an_event_type_in_the_tables_renames_it_in_the_fold(tmp_path):
    root = copy_of_tables(tmp_path, {"events.yaml": [(r"\bcorrect:", "amend:"), (r"type: correct\b", "type: amend")],
                                     "merge.yaml": [(r"\bcorrect:", "amend:"), (r"\beq: correct\b", "eq: amend"),
                                                    (r"type: correct\b", "type: amend")]})
    renamed, bundled = load_rulebook(root), load_rulebook(ROOT)
    want = fold(with_type("correct"), bundled)["state"]["scopes"]["demand_1"]["slots"]["region"]
    got = fold(with_type("amend"), renamed)["state"]["scopes"]["demand_1"]["slots"]["region"]
    assert (got["value"], got["status"]) == (want["value"], want["status"]) == ("B 地", "filled")
    with pytest.raises(GroundrulesError) as info:
        fold(with_type("correct"), renamed)
    assert info.value.code == "UNKNOWN_EVENT"


INJECTED_PHONE = {
    "now": "2024-05-01T12:00:00+08:00",
    "records": [{"id": "F1", "type": "injected_field", "field": "crm.phone", "value": "13812345678", "origin": "crm"}],
    "interpretations": [{"id": "I1", "dispositions": [], "events": [
        {"id": "e1", "type": "set", "slot": "phone", "value": "13812345678", "evidence": ["F1"]}]}]}


def test_which_sources_are_locked_and_as_whose_words_is_the_event_catalogues(tmp_path):
    """An injected field is locked as a tool's output (events.yaml records.injected_field.locks.role);
    read as the system's instead, no lock table counts it, and its value rests on no lock."""
    bundled = load_rulebook(ROOT)
    with pytest.raises(GroundrulesError) as info:
        fold(INJECTED_PHONE, bundled)
    assert info.value.code == "INSUFFICIENT_EVIDENCE"          # the engine's lock exists, but is not assigned
    (found,) = lock_text("F1", "tool", "sent", "13812345678", bundled)
    assigned = copy.deepcopy(INJECTED_PHONE)
    assigned["interpretations"][0]["dispositions"] = [{"lock": found["id"], "slot": "phone"}]
    assert fold(assigned, bundled)["state"]["scopes"]["demand_1"]["slots"]["phone"]["value"] == "13812345678"
    root = copy_of_tables(tmp_path, {"events.yaml": [(r"(locks: \{text: value, role: )tool", r"\1system")]})
    with pytest.raises(GroundrulesError) as info:
        fold(assigned, load_rulebook(root))
    assert info.value.code == "UNKNOWN_EVIDENCE"               # no table reads a system's words: no such lock


MIXED_VALIDITY = {
    "now": "2024-05-01T12:00:00+08:00",
    "records": [{"id": "E1", "type": "message", "role": "user", "state": "sent", "content": "地区是 A 地",
                 "valid_until": "2024-04-01T00:00:00+08:00"},
                {"id": "E2", "type": "message", "role": "user", "state": "sent", "content": "下月起地区是 A 地",
                 "valid_from": "2024-06-01T00:00:00+08:00"}],
    "interpretations": [{"id": "I1", "dispositions": [], "events": [
        {"id": "e1", "type": "set", "slot": "region", "value": "A 地", "evidence": ["E1", "E2"]}]}]}


@pytest.mark.parametrize("order, status", [("[valid, not_yet_valid, expired]", "not_yet_valid"),
                                           ("[valid, expired, not_yet_valid]", "expired")])
def test_which_validity_a_slot_takes_from_mixed_evidence_is_the_merge_policys_order(tmp_path, order, status):
    root = copy_of_tables(tmp_path, {"merge.yaml": [(r"validity_precedence: \[[^\]]*\]", f"validity_precedence: {order}")]})
    slot = fold(MIXED_VALIDITY, load_rulebook(root))["state"]["scopes"]["demand_1"]["slots"]["region"]
    assert slot["status"] == status


def test_seed001_the_applicability_table_reads_the_task_context(tmp_path):
    """task_context is a fact of the applicability table (its contract names task_context_given and
    match.from_task): a host that wants no verdict without a task says so with one row."""
    row = ("  - id: incompatible\n",
           "  - id: no_task\n    code: unknown\n    when: {field: task_context_given, eq: false}\n"
           "    output: {detail: 没有给出当前任务}\n\n  - id: incompatible\n")
    root = copy_of_tables(tmp_path, {"applicability.yaml": [row]})
    service, caller = ledger_service(root, tmp_path / "l.db")
    fid = service.call("log_finding", FINDING, caller)["data"]["finding_id"]

    def verdict(arguments: dict) -> str:
        found = service.call("query_findings", arguments, caller)["data"]["findings"]
        return {f["finding_id"]: f["applicability"]["verdict"] for f in found}[fid]
    assert verdict({}) == "unknown"
    assert verdict({"task_context": {"goal": "排查 OOM"}}) == "applicable"


def test_the_tables_own_patterns_run_within_the_limits_tables_budget(tmp_path, rulebook):
    """limits.yaml patterns.table_budget_ms bounds each search of the tables' own patterns (here a
    verifier phrase scan over a long input): lint checks the value like the other limits, and once
    an analyst tightens it the same call is refused past the new budget, which the refusal names."""
    root = copy_of_tables(tmp_path, {})
    limits_file = TableFile(root / "rules" / "limits.yaml")
    key = ("patterns", "table_budget_ms")
    limits_file.write_scalar(key, 0)
    lint = run_cli("--rules", root, "lint")
    line, col = limits_file.source.positions[key]
    assert lint.returncode == 1 and f"rules/limits.yaml:{line}:{col}: bad-value" in lint.stdout.decode(), lint.stdout
    assert "[at patterns.table_budget_ms]" in lint.stdout.decode()
    limits_file.write_scalar(key, 1)
    assert_the_analysts_gate_passes(root)
    case = json.loads((ROOT / "tests" / "cases" / "verify" / "seed" / "end_time_only.json").read_text(encoding="utf-8"))
    case.pop("expect", None)
    case["request"]["input"] *= 2000                  # its phrase scans now take milliseconds
    caller = Caller("analyst", "agent")
    shipped = Service(rulebook).call("verify_extraction", case, caller)
    assert shipped["error"]["code"] == "MODEL_OUTPUT_INVALID", shipped["error"]   # decided within its budget
    tightened = Service(load_rulebook(root)).call("verify_extraction", case, caller)
    assert tightened["error"]["code"] == "PATTERN_TIMEOUT", tightened["error"]
    assert tightened["error"]["budget_ms"] == limits_file.at(*key) == load_rulebook(root).table("limits").table_budget_ms
