"""One answer per tool, whatever the transport: every tool of the registry is driven with the same
good and bad arguments through the library (`Service.call`), the CLI (`groundrules call`, and the
part's own command where it has one, fed the very same JSON) and MCP over real stdio (`groundrules
serve`), and the envelopes must be equal, byte for byte once serialised (over MCP an unknown tool is
the protocol error -32602, whose data is that envelope).

Every transport starts from the same prepared ledger with the same injected clock and ids, so that
ids and timestamps agree too. The CLI runs each case on its own copy, one process call each; the
library runs the same cases the same way, and also as one session per role, which MCP runs too.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from groundrules import Caller, EvidenceLedger, FindingLedger, Service, default_rulebook
from groundrules.core import canonical
from groundrules.api import TOOLS
from groundrules.cli.main import main
from groundrules.findings import SequentialIds, StepClock
from groundrules.transports.mcp_tools import LANG_META

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "schemas" / "examples"
PROJECT, OPERATOR = "p1", "operator-1"
CLOCK, IDS = "2030-01-01T00:00:00Z", 1000
# every language of the message catalogue: each transport answers in each the same bytes
LANGUAGES = default_rulebook().table("messages").languages


def example(part: str, name: str):
    return json.loads((EXAMPLES / part / f"{name}.json").read_text(encoding="utf-8"))


def verify_case(group: str, name: str) -> dict:
    """A case of the verify corpus as tool arguments (without what it expects)."""
    doc = json.loads((ROOT / "tests" / "cases" / "verify" / group / f"{name}.json").read_text(encoding="utf-8"))
    return {k: v for k, v in doc.items() if k != "expect"}


EXPERIMENT = {"source_kind": "experiment_run", "source_ref": "run:4472", "excerpt": "shift -1/0/+1 的均值指标近似",
              "relation": "supports", "method": "experiment"}
COUNTER = {"source_kind": "log", "source_ref": "log:gpu", "excerpt": "温度升高后误差翻倍", "relation": "contradicts",
           "method": "log_inspection"}
SEED_LABELS = ["用户消息", "customer_email", "gpt4_reasoning", "assistant_summary", "llm_self_check"]
RUN = {"source_kind": "ci_run", "source_ref": "ci:918", "excerpt": "3/3 次复现", "relation": "supports",
       "method": "reproduction"}
FINDING = {"claim_kind": "diagnosis", "statement": "温度漂移导致误差", "tags": ["gpu"],
           "scope": {"match": {"runtime.backend": "vLLM"}, "context": {"commit": "0862527"}}}

MESSAGE = {"id": "M-1", "type": "message", "role": "user", "state": "sent", "subject": "demand_1",
           "content": "不方便接电话"}
DECLINE = [{"id": "I1", "events": [{"id": "e1", "type": "decline", "slot": "phone", "evidence": ["M-1"]}],
            "dispositions": []}]

# seed 003: a lock is the engine's (E14 with a forged value is LOCK_MISMATCH on every path), the seed's
# own E07 / E14 / derived shapes fold as written, and a fold may be asked for a scope_context
PHONE = {"id": "E44", "type": "message", "role": "user", "state": "sent", "message_id": "m_44",
         "content": "我的手机是 138 0013-8000"}
E14 = {"id": "E14", "quote": "138 0013-8000", "locator": {"message_id": "m_44", "start": 6, "end": 19},
       "normalized_value": "13800138000"}
E07 = {"id": "E07", "source": "user", "timestamp": "2024-05-01T10:03:00+08:00", "turn": 3, "scope": "demand_1",
       "quote": "我们公司登记地在 A 地", "locator": {"message_id": "m_31", "start": 0, "end": 7}}
SEED_SHAPES = {"now": "2024-05-01T12:00:00+08:00",
               "records": [E07, PHONE, E14, {"type": "derived", "claim": "用户留了手机号", "derived_from": ["E14"]}],
               "interpretations": [{"id": "I1", "dispositions": [{"lock": "E14", "slot": "phone"}], "events": [
                   {"id": "e1", "type": "set", "slot": "phone", "value": "13800138000", "evidence": ["E14"]},
                   {"id": "e2", "type": "set", "slot": "company_region", "value": "A 地", "evidence": ["E07"]}]}]}
FORGED = {"now": "2024-05-01T12:00:00+08:00", "records": [PHONE, dict(E14, normalized_value="13900000000")],
          "interpretations": [{"id": "I1", "dispositions": [{"lock": "E14", "slot": "phone"}], "events": [
              {"id": "e1", "type": "set", "slot": "phone", "value": "13900000000", "evidence": ["E14"]}]}]}
SCOPED = {"now": "2024-05-01T12:00:00+08:00", "scope_context": {"region": "华南", "version": "2024"},
          "records": [{"id": "P1", "type": "tool_receipt", "tool": "policy", "request_id": "q1", "body": "{}",
                       "applicability": {"region": "华东"}},
                      {"id": "P2", "type": "tool_receipt", "tool": "policy", "request_id": "q2", "body": "{}",
                       "version": "2024"}],
          "interpretations": [{"id": "I1", "dispositions": [], "events": [
              {"id": "e1", "type": "set", "slot": "region", "value": "华东", "evidence": ["P1"]},
              {"id": "e2", "type": "set", "slot": "region", "value": "华南", "evidence": ["P2"]}]}]}

# (tool, arguments, role, writes): good and bad arguments for every tool; F-000001, RP-000001 and the
# evidence record M-1 exist
CASES = [
    ("explain_support", {"context": example("support_reason", "cq-shenlun-partial")}, "agent", False),
    ("explain_support", {"context": [1, 2]}, "agent", False),
    ("explain_support", {"ctx": {}}, "agent", False),
    ("lock_message", {"message": {"id": "m1", "role": "user", "content": "不方便接电话，微信 wx_wang01"}}, "agent", False),
    ("lock_message", {"messages": [{"id": "m1", "role": "user", "content": "手机 13812345678"},
                                   {"id": "m1", "role": "user", "content": "x"}]}, "agent", False),
    ("lock_message", {"message": {"id": "m1", "role": "user", "content": "电话 23800138000，手机 03800138000"}}, "agent",
     False),                                           # issue 22: invalid candidates beside labels
    ("lock_message", {"messages": [{"id": "m1", "role": "user", "content": "1380013800"},
                                   {"id": "m2", "role": "user", "content": "(138)0013 8000，电话 139\n0000 1234"},
                                   {"id": "m3", "role": "user", "content": "188.0000.1234 或 一三八零零零零一二三四"}]},
     "agent", False),                                  # issue 22: the chat forms
    ("lock_message", {"message": {"id": "m1", "role": "robot", "content": "x"}}, "agent", False),
    ("lock_message", {"message": {}, "messages": []}, "agent", False),
    ("fold_evidence", example("fold", "seed_region-read_as_correct"), "agent", False),
    ("fold_evidence", {"now": "2024-05-01T12:00:00+08:00", "records": "nope", "interpretations": []}, "agent", False),
    ("fold_evidence", SEED_SHAPES, "agent", False),
    ("fold_evidence", FORGED, "agent", False),
    ("fold_evidence", dict(FORGED, records=[PHONE], interpretations=[{"id": "I1", "events": [], "dispositions": []}]),
     "agent", False),                                                  # LOCK_DROPPED: the locks are recomputed
    ("fold_evidence", SCOPED, "agent", False),
    ("verify_extraction", example("verify", "end_time_only"), "agent", False),
    ("verify_extraction", example("verify", "start_time_missing"), "agent", False),
    ("verify_extraction", {"request": {}, "candidate": {}}, "agent", False),
    ("verify_extraction", verify_case("prohibitions", "dropped"), "agent", False),
    ("verify_extraction", verify_case("withdrawals", "zh_suanle_bie_xiu_le_fix_refused"), "agent", False),
    ("verify_extraction", verify_case("derivations", "phone_not_derived"), "agent", False),
    ("verify_extraction", verify_case("derivations", "date_unread"), "agent", False),
    ("verify_extraction", verify_case("withdrawals", "ctx_earlier_turn_fix_refused"), "agent", False),
    ("verify_extraction", verify_case("prohibitions", "zh_bu_yao_qu_xiao_ding_dan"), "agent", False),
    ("verify_extraction", verify_case("joins", "colloquial_three_actions_merged"), "agent", False),
    ("verify_extraction", verify_case("reservations", "zh_kept_for_self_done"), "agent", False),
    ("verify_extraction", verify_case("withdrawals", "unlisted_verb_beyond_asked_refused"), "agent", False),
    ("verify_extraction", verify_case("withdrawals", "correction_old_target_refused"), "agent", False),
    ("query_findings", {"keyword": "漂移"}, "agent", False),
    ("query_findings", {"limit": "many"}, "agent", False),
    ("get_finding", {"finding_id": "F-000001"}, "agent", False),
    ("get_finding", {"finding_id": "F-999999"}, "agent", False),
    ("get_finding", {"finding_id": "F-000001", "project": "p2"}, "agent", False),
    ("log_finding", dict(FINDING, evidence=[EXPERIMENT]), "agent", True),
    ("log_finding", dict(FINDING, epistemic_state="supported"), "agent", True),
    ("log_finding", dict(FINDING, epistemic_state="supported", evidence=[dict(   # seed 001: a thought is no experiment
        EXPERIMENT, source_kind="model_thought", source_ref="thought:1", excerpt="我觉得就是这个原因")]), "agent", True),
    ("log_finding", dict(FINDING, epistemic_state="supported", manual_exception={"reason": "r"}), "agent", True),
    ("log_finding", dict(FINDING, epistemic_state="supported", manual_exception={"reason": "复盘确认"}), "reviewer", True),
    *[("log_finding", dict(FINDING, epistemic_state="supported", evidence=[{      # issue 30: seed 001's labels
        "source_kind": label, "source_ref": f"note:{label}", "excerpt": "它成立", "relation": "supports",
        "method": "reproduction"}]), "agent", True) for label in SEED_LABELS],
    ("log_finding", dict(FINDING, epistemic_state="supported", evidence=[RUN]), "runner", True),
    ("log_finding", dict(FINDING, writer={"principal": "alice", "role": "reviewer"}), "agent", True),
    ("add_evidence", {"finding_id": "F-000001", "evidence": COUNTER}, "agent", True),
    ("set_finding_state", {"finding_id": "F-000001", "epistemic_state": "supported", "reason": "实验支持",
                           "expected_version": 1}, "agent", True),
    ("set_finding_state", {"finding_id": "F-000001", "epistemic_state": "supported", "reason": "r",
                           "expected_version": 7}, "agent", True),
    ("refute_finding", {"finding_id": "F-000001", "reason": "日志反证", "evidence": [COUNTER],
                        "expected_version": 1}, "agent", True),
    ("supersede_finding", {"finding_id": "F-000001", "reason": "更准确", "expected_version": 1,
                           "new": dict(FINDING, statement="GPU 温度漂移导致误差")}, "agent", True),
    ("revalidate_finding", {"finding_id": "F-000001", "result": "insufficient", "reason": "复查",
                            "expected_version": 1}, "agent", True),
    ("link_finding", {"finding_id": "F-000001", "relation": "documented_in",
                      "target": {"document": "docs/gpu.md"}}, "agent", True),
    ("propose_rule", {"finding_id": "F-000001", "rule_text": "- 先记录温度", "target_path": "AGENTS.md",
                      "rationale": "两次误判"}, "agent", True),
    ("propose_rule", {"finding_id": "F-000001", "rule_text": "x", "target_path": "/etc/passwd",
                      "rationale": "r"}, "agent", True),
    ("approve_rule", {"proposal_id": "RP-000001"}, "agent", True),
    ("approve_rule", {"proposal_id": "RP-000001", "note": "同意"}, "reviewer", True),
    ("reject_rule", {"proposal_id": "RP-000001", "note": "太具体"}, "reviewer", True),
    ("append_evidence", {"record": {"type": "tool_receipt", "tool": "crm", "request_id": "q1", "body": "{}"}},
     "agent", True),
    ("append_evidence", {"record": {"type": "message", "role": "user", "state": "sent",
                                    "content": "手机 13812345678"}}, "agent", True),
    ("append_evidence", {"record": dict(MESSAGE, content="重复的 id")}, "agent", True),
    ("append_evidence", {"record": {"type": "lock"}}, "agent", True),
    ("append_evidence", {"record": {"id": "L-9", "type": "lock", "lock": {
        "quote": "不方便", "locator": {"message_id": "M-1", "start": 0, "end": 3}}}}, "agent", True),   # LOCK_MISMATCH
    ("append_evidence", {"record": {"type": "tool_receipt", "tool": "crm", "request_id": "q2",
                                    "body": "{\"phone\": \"13800000000\"}"}}, "agent", True),      # locked on append
    ("append_evidence", {"record": {"type": "derived", "claim": "用户不方便接电话", "derived_from": ["M-1"]}},
     "agent", True),
    # issue 30: provenance. A role the table refuses, a writer named in the arguments, a signature no
    # signer of the (empty) trust store made, and the host relaying a user's words
    ("append_evidence", {"record": {"type": "injected_field", "field": "phone", "value": "13900000000",
                                    "origin": "human.review"}}, "agent", True),
    ("append_evidence", {"record": {"type": "message", "role": "user", "state": "sent", "content": "hi",
                                    "writer": {"principal": "app", "role": "host", "auth": {"method": "token"}}}},
     "agent", True),
    ("append_evidence", {"record": {"type": "tool_receipt", "tool": "crm", "request_id": "q3", "body": "{}",
                                    "signature": "e30.e30.c2ln"}}, "agent", True),
    ("append_evidence", {"record": {"type": "message", "role": "user", "state": "sent",
                                    "content": "手机 13812345678"}}, "host", True),
    ("get_evidence", {"record_id": "M-1"}, "agent", False),
    ("get_evidence", {}, "agent", False),
    ("get_evidence", {"record_id": "M-404"}, "agent", False),
    ("redact_evidence", {"record_id": "M-1", "reason": "用户要求删除"}, "agent", True),
    ("redact_evidence", {"record_id": "M-1", "reason": "用户要求删除"}, "reviewer", True),
    ("fold_ledger", {"now": "2030-01-02T00:00:00Z", "interpretations": DECLINE, "subject": "demand_1"}, "agent", False),
    ("fold_ledger", {"now": "yesterday", "interpretations": DECLINE}, "agent", False),
    ("fold_ledger", {"now": "2030-01-02T00:00:00Z"}, "agent", False),
    ("fold_ledger", {"now": "2030-01-02T00:00:00Z", "interpretations": DECLINE,
                     "scope_context": {"region": "华南"}}, "agent", False),
    ("append_interpretation", {"interpretation": DECLINE[0]}, "agent", True),
    ("append_interpretation", {"interpretation": dict(DECLINE[0], events=[dict(DECLINE[0]["events"][0],
                                                                            evidence=["M-404"])])}, "agent", True),
    ("draft_interpretation", {"message_id": "M-1"}, "agent", False),
    ("draft_interpretation", {}, "agent", False),
    ("draft_candidate", {"request": {"input": "查询会议时间：开始时间09:00，结束时间10:00。", "fields": ["endTime"]},
                         "instance": "meeting_time"}, "agent", False),
    ("read_decisions", {"limit": 5}, "agent", False),
    ("read_decisions", {"limit": 5}, "reviewer", False),
    ("list_toolsets", {}, "agent", False),
    ("enable_toolset", {"toolset": "support"}, "agent", False),
    ("enable_toolset", {"toolset": "suport"}, "agent", False),
    ("no_such_tool", {}, "agent", False),
    ("revalidate_findng", {}, "reviewer", False),       # a typo: refused before any call, with a hint
]


def test_every_tool_of_the_registry_is_driven():
    assert {tool for tool, *_ in CASES} - {"no_such_tool", "revalidate_findng"} == set(TOOLS)


def test_the_registry_has_every_finding_tool_and_marks_its_reads_quick():
    from groundrules.findings.ledger import HANDLERS, READS
    finding_tools = {name for name, tool in TOOLS.items() if tool.ledger == "findings"}
    assert finding_tools == set(HANDLERS)
    assert {name for name in finding_tools if TOOLS[name].quick} == set(READS)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """A ledger holding one finding with evidence (F-000001) and one rule proposal (RP-000001)."""
    base = tmp_path_factory.mktemp("parity")
    db = base / "prepared.db"
    ledger = FindingLedger(db, clock=StepClock(), ids=SequentialIds())
    evidence = EvidenceLedger(db, ids=lambda: "unused", clock=StepClock())
    service = Service(default_rulebook(), findings=ledger, evidence=evidence)
    caller = Caller("setup", "agent", (PROJECT,))
    assert service.call("append_evidence", {"record": MESSAGE}, caller)["ok"]
    # a runner's experiment (issue 30: an agent's own would not count as independent support)
    fid = service.call("log_finding", dict(FINDING, evidence=[EXPERIMENT]), Caller("ci", "runner", (PROJECT,)))[
        "data"]["finding_id"]
    service.call("propose_rule", {"finding_id": fid, "rule_text": "- 排查前先记录 GPU 温度", "target_path": "AGENTS.md",
                                  "rationale": "两次误判"}, caller)
    ledger.close()
    evidence.close()
    return base, db


def _fresh(prepared, name: str) -> tuple[Path, Path]:
    """A copy of the prepared ledger, and a project root holding AGENTS.md, for one transport."""
    base, db = prepared
    folder = base / name
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "root").mkdir(parents=True)
    (folder / "root" / "AGENTS.md").write_text("# 规则\n", encoding="utf-8")
    shutil.copy(db, folder / "ledger.db")
    shutil.copy(f"{db}.keys", folder / "ledger.db.keys")        # its key store: the personal values open
    return folder / "ledger.db", folder / "root"


def by_library(prepared, indices: list[int], name: str, role: str, lang: str | None = None) -> list[dict]:
    """The cases, in order, in one session on one copy of the prepared ledger."""
    return calls_by_library(prepared, [CASES[i][:2] for i in indices], name, role, lang)


def calls_by_library(prepared, calls: list[tuple], name: str, role: str, lang: str | None = None, *,
                     ledger_at: tuple[Path, Path] | None = None, clock_from: str = CLOCK,
                     ids_from: int = IDS) -> list[dict]:
    """The calls in one session on a fresh copy of the prepared ledger, or on `ledger_at` (db, root)
    as it is; the clock and the ids start where `serve --step-clock`/`--sequential-ids` would."""
    db, root = ledger_at or _fresh(prepared, name)
    clock, ids = StepClock(clock_from), SequentialIds(start=ids_from)      # shared by both ledgers, as the CLI does
    ledger = FindingLedger(db, clock=clock, ids=ids, rules_root=root)
    evidence = EvidenceLedger(db, clock=clock, ids=lambda: ids.new("R"))
    service = Service(default_rulebook(), findings=ledger, evidence=evidence)
    try:
        return [service.call(tool, arguments, Caller(OPERATOR, role, (PROJECT,)), lang=lang)
                for tool, arguments in calls]
    finally:
        ledger.close()
        evidence.close()


def alone(prepared, index: int, lang: str | None = None) -> dict:
    return by_library(prepared, [index], f"lib-{index}", CASES[index][2], lang)[0]


def _cli_options(db: Path, root: Path, role: str, clock_from: str = CLOCK, ids_from: int = IDS) -> list[str]:
    return ["--db", str(db), "--root", str(root), "--project", PROJECT, "--operator", OPERATOR, "--role", role,
            "--step-clock", clock_from, "--sequential-ids", str(ids_from)]


def by_cli(prepared, index: int, capsys, command: tuple[str, ...] | None = None, arguments=None,
           lang: str | None = None) -> dict:
    """The case through `groundrules call TOOL FILE`, or through `command` (a part's own command)
    with FILE holding `arguments` (default: the case's); `lang` given as the global --lang."""
    tool, given, role, _ = CASES[index]
    db, root = _fresh(prepared, f"cli-{index}")
    path = db.parent / "arguments.json"
    path.write_text(json.dumps(given if arguments is None else arguments, ensure_ascii=False), encoding="utf-8")
    code = main([*(("--lang", lang) if lang else ()), *(command or ("call", tool)), str(path),
                 *_cli_options(db, root, role)])
    out, err = capsys.readouterr()
    envelope = json.loads(out)
    assert err == "" and code == (0 if envelope["ok"] else 1)
    return envelope


def by_mcp(prepared, indices: list[int], name: str, role: str, lang: str | None = None,
           server_lang: str | None = None) -> list[dict]:
    """The cases over real stdio; `lang` asked per call (_meta), `server_lang` as serve --lang."""
    db, root = _fresh(prepared, name)
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "groundrules.cli.main", "serve", *_cli_options(db, root, role),
        *(("--lang", server_lang) if server_lang else ())],
        env=dict(os.environ))   # the SDK passes only a few variables on; the server under test is ours

    async def go():
        with anyio.fail_after(120):
            async with Client(params) as client:
                out = []
                for index in indices:
                    tool, arguments, _, _ = CASES[index]
                    meta = {LANG_META: lang} if lang else None
                    if tool not in TOOLS:          # MCP lists an unknown tool as a protocol error, -32602,
                        if lang:                   # before any call: in the server's language, not the call's
                            continue
                        with pytest.raises(MCPError) as caught:      # carrying the registry's envelope
                            await client.call_tool(tool, arguments)
                        assert caught.value.error.code == -32602
                        out.append(caught.value.error.data)
                        continue
                    result = await client.call_tool(tool, arguments, meta=meta)
                    assert result.is_error is (not result.structured_content["ok"])
                    assert json.loads(result.content[0].text) == result.structured_content
                    out.append(result.structured_content)
                return out
    return anyio.run(go)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_library_and_the_cli_give_the_same_envelope(prepared, capsys, lang):
    for i, case in enumerate(CASES):
        library, cli = alone(prepared, i, lang), by_cli(prepared, i, capsys, lang=lang)
        assert canonical.dumps(cli) == canonical.dumps(library), (case[:3], cli, library)


@pytest.mark.parametrize("role", sorted({case[2] for case in CASES}))
def test_the_library_and_mcp_stdio_give_the_same_envelope(prepared, role):
    indices = [i for i, case in enumerate(CASES) if case[2] == role]
    library = by_library(prepared, indices, f"lib-{role}", role)
    mcp = by_mcp(prepared, indices, f"mcp-{role}", role)
    for i, from_library, from_mcp in zip(indices, library, mcp):
        assert canonical.dumps(from_mcp) == canonical.dumps(from_library), (CASES[i][:3], from_mcp, from_library)


@pytest.mark.parametrize("lang", LANGUAGES[1:])
@pytest.mark.parametrize("how", ["per call", "server setting"])
def test_mcp_stdio_answers_in_the_language_asked_as_the_library_does(prepared, lang, how):
    """A call's _meta "groundrules/lang", or serve --lang for every call: the library's answer in
    that language, byte for byte (an unknown tool too, which the server refuses before any call)."""
    role = "reviewer"
    indices = [i for i, case in enumerate(CASES) if case[2] == role]
    assert any(CASES[i][0] not in TOOLS for i in indices)        # the unknown tool is in the language asked too
    library = by_library(prepared, indices, f"lib-{role}-{lang}", role, lang)
    mcp = by_mcp(prepared, indices, f"mcp-{role}-{lang}-{how[0]}", role,
                 lang=lang if how == "per call" else None, server_lang=lang if how == "server setting" else None)
    for i, from_library, from_mcp in zip(indices, library, mcp):
        assert canonical.dumps(from_mcp) == canonical.dumps(from_library), (CASES[i][:3], from_mcp, from_library)


def _sentences_out(value):
    """An answer without its sentences (a refusal's message and hint, a set-aside record's detail):
    what must be the same in every language."""
    if isinstance(value, dict):
        return {k: "…" if k in ("message", "hint", "detail") else _sentences_out(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_sentences_out(v) for v in value]
    return value


def _written_alike() -> set:
    """The messages a table writes the same in every language (the seed's own English sentence of
    DATA_EXTRACTION_FAILED): a refusal worded by one of them is the same in each."""
    from dataclasses import fields, is_dataclass
    from groundrules.core.messages import Messages
    book, alike = default_rulebook(), set()
    for table_id in book.tables:
        table = book.tables[table_id]
        for f in fields(table) if is_dataclass(table) else ():
            value = getattr(table, f.name)
            if isinstance(value, Messages):
                alike |= {next(iter(texts.values())).source for texts in value.by_name.values()
                          if len({t.source for t in texts.values()}) == 1}
    return alike


def test_the_languages_differ_in_sentences_only_and_every_refusal_is_translated(prepared):
    """Codes, fields and data are the same in every language; every refusal's sentence differs but
    one a table writes alike in every language."""
    default, *others = LANGUAGES
    alike = _written_alike()
    for i, case in enumerate(CASES):
        first = alone(prepared, i)
        for lang in others:
            other = alone(prepared, i, lang)
            assert _sentences_out(other) == _sentences_out(first), case[:3]
            if not first["ok"] and first["error"]["message"] not in alike:
                assert other["error"]["message"] != first["error"]["message"], (case[:3], first["error"])


def test_a_language_the_catalogue_does_not_offer_is_refused(prepared, capsys):
    """By a call (INVALID_ARGUMENT at (lang)), and by the command line before it opens anything."""
    library = alone(prepared, 0, "xx")
    assert library["error"]["code"] == "INVALID_ARGUMENT" and library["error"]["field"] == "(lang)"
    assert all(lang in library["error"]["message"] for lang in LANGUAGES)
    db, root = _fresh(prepared, "cli-xx")
    (db.parent / "arguments.json").write_text("{}", encoding="utf-8")
    assert main(["--lang", "xx", "call", "get_evidence", str(db.parent / "arguments.json"),
                 *_cli_options(db, root, "agent")]) == 1
    out, err = capsys.readouterr()
    assert out == "" and all(lang in err for lang in LANGUAGES) and "xx" in err


def test_the_cases_are_what_they_claim(prepared):
    """Good arguments answer and bad ones are refused, so that parity is not parity of refusals."""
    library = [alone(prepared, i) for i in range(len(CASES))]
    outcomes = [(case[0], library[i]["ok"], (library[i]["error"] or {}).get("code")) for i, case in enumerate(CASES)]
    assert ("log_finding", False, "PERMISSION_DENIED") in outcomes
    refused = [library[i]["error"] for i, case in enumerate(CASES) if case[1] in (
        verify_case("prohibitions", "dropped"), verify_case("withdrawals", "zh_suanle_bie_xiu_le_fix_refused"),
        verify_case("derivations", "phone_not_derived"), verify_case("withdrawals", "ctx_earlier_turn_fix_refused"),
        verify_case("prohibitions", "zh_bu_yao_qu_xiao_ding_dan"), verify_case("joins", "colloquial_three_actions_merged"),
        verify_case("reservations", "zh_kept_for_self_done"),
        verify_case("withdrawals", "unlisted_verb_beyond_asked_refused"),
        verify_case("withdrawals", "correction_old_target_refused"))]
    assert [[issue["code"] for issue in error["issues"]] for error in refused] == [
        ["PROHIBITION_DROPPED"], ["INTENT_WITHDRAWN_CONTINUED", "PROHIBITION_DROPPED"], ["VALUE_NOT_DERIVED"],
        ["INTENT_WITHDRAWN_CONTINUED", "PROHIBITION_DROPPED"], ["INTENT_ACTION_PROHIBITED"], ["INTENT_ACTIONS_MERGED"],
        ["INTENT_ACTION_RESERVED"], ["INTENT_BEYOND_ASKED"], ["INTENT_CORRECTED_KEPT"]]
    unread = library[next(i for i, case in enumerate(CASES) if case[1] == verify_case("derivations", "date_unread"))]
    assert unread["ok"] and [w["code"] for w in unread["warnings"]] == ["VALUE_QUOTE_UNREAD"]
    assert ("approve_rule", False, "UNKNOWN_TOOL") not in outcomes
    # issue 30: no label an agent picks makes a finding supported, on any transport; a runner's run does
    forgeries = [library[i] for i, case in enumerate(CASES) if case[2] == "agent" and case[0] == "log_finding"
                 and case[1].get("evidence", [{}])[0].get("source_kind") in SEED_LABELS]
    assert [envelope["error"]["code"] for envelope in forgeries] == ["EVIDENCE_REQUIRED"] * len(SEED_LABELS)
    assert ("log_finding", True, None) in [o for o, case in zip(outcomes, CASES) if case[2] == "runner"]
    assert [o for o, case in zip(outcomes, CASES) if "writer" in case[1]] == [("log_finding", False, "INVALID_ARGUMENT")]
    for code in ("PROVENANCE_REFUSED", "SIGNATURE_INVALID"):       # issue 30
        assert ("append_evidence", False, code) in outcomes
    # a writer is no key of a record as a caller gives it (the listing leaves it out, issue 32): refused
    # by the registry as log_finding's is; the ledger's own WRITER_GIVEN answers library callers
    assert [o for o, case in zip(outcomes, CASES) if "writer" in case[1].get("record", {})] == [
        ("append_evidence", False, "INVALID_ARGUMENT")]
    assert sum(ok for _, ok, _ in outcomes) >= 12 and sum(not ok for _, ok, _ in outcomes) >= 12


# the commands that front a tool with a FILE, and the convenience shape each also reads
OWN_COMMANDS = {"explain_support": (("explain",), lambda doc: {"context": doc}),
                "lock_message": (("lock",), lambda doc: {"messages": doc} if isinstance(doc, list) else {"message": doc}),
                "fold_evidence": (("fold",), lambda doc: doc),
                "verify_extraction": (("verify",), lambda doc: doc),
                "append_evidence": (("evidence", "append"), lambda doc: {"record": doc}),
                "append_interpretation": (("evidence", "interpret"), lambda doc: {"interpretation": doc})}
OWN_COMMAND_CASES = [i for i, (tool, *_) in enumerate(CASES) if tool in OWN_COMMANDS]


def argument_names(tool: str) -> set:
    schema = json.loads((ROOT / "schemas" / "tools" / f"{tool}.schema.json").read_text(encoding="utf-8"))
    return set(schema["$defs"]["input"]["properties"])


# the commands with a FILE that front no one tool: `call` names its tool on the command line,
# `eval` evaluates one table of the analyst's on a case, `tokens add` appends to the tokens file
NOT_ONE_TOOL = {("call",), ("eval",), ("tokens", "add")}


def file_commands() -> dict:
    """command words -> tool, for every other command that reads a FILE."""
    from groundrules.cli.main import build_parser
    from groundrules.cli.tool_cmds import COMMANDS
    found: dict = {}

    def walk(parser: argparse.ArgumentParser, words: tuple) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, words + (name,))
        if any(a.dest == "file" for a in parser._actions) and words not in NOT_ONE_TOOL:
            found[words] = parser.get_default("tool") or COMMANDS[parser.get_default("command_name")][0]
    walk(build_parser(), ())
    return found


def test_every_command_fronting_a_tool_with_a_file_is_driven():
    assert file_commands() == {command: tool for tool, (command, _) in OWN_COMMANDS.items()}
    assert set(OWN_COMMANDS) <= {case[0] for case in CASES}


@pytest.mark.parametrize("index", OWN_COMMAND_CASES)
def test_the_parts_own_commands_take_the_tools_arguments_and_answer_like_the_tool(prepared, capsys, index):
    """The same JSON the library and MCP get, fed to the part's own command: the same envelope.
    A file that is not the tool's arguments (a key the tool does not have) is the command's
    convenience shape, and answers as the tool does on that shape mapped to its arguments."""
    tool, arguments, role, _ = CASES[index]
    command, convenience = OWN_COMMANDS[tool]
    own = by_cli(prepared, index, capsys, command)
    if arguments and set(arguments) <= argument_names(tool):
        expected = alone(prepared, index)
    else:
        expected = by_library_with(prepared, index, convenience(arguments))
    assert canonical.dumps(own) == canonical.dumps(expected), (command, own, expected)


def by_library_with(prepared, index: int, arguments) -> dict:
    tool, _, role, _ = CASES[index]
    return calls_by_library(prepared, [(tool, arguments)], f"lib-{index}-as-given", role)[0]


CONVENIENCE = [("lock", {"id": "m1", "role": "user", "content": "手机 13812345678"}, "lock_message"),
               ("lock", [{"id": "m1", "role": "user", "content": "手机 13812345678"}], "lock_message"),
               ("explain", example("support_reason", "cq-shenlun-partial"), "explain_support")]


@pytest.mark.parametrize("command, doc, tool", CONVENIENCE)
def test_a_convenience_shape_beside_the_tools_arguments_answers_the_same(tmp_path, capsys, command, doc, tool):
    convenience = OWN_COMMANDS[tool][1]
    bare, wrapped = tmp_path / "bare.json", tmp_path / "wrapped.json"
    bare.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    wrapped.write_text(json.dumps(convenience(doc), ensure_ascii=False), encoding="utf-8")
    outs = []
    for path in (bare, wrapped):
        main([command, str(path)])
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and json.loads(outs[0])["ok"]


@pytest.mark.extended
@pytest.mark.parametrize("role", sorted({case[2] for case in CASES}))
def test_the_typescript_sdk_over_stdio_gets_the_librarys_envelope_for_every_tool(prepared, role, tmp_path):
    """The official TypeScript SDK client (tests/node/ts_stdio_calls.mjs) lists every tool the role
    may call and runs each case of the role over real stdio, every toolset enabled from the start
    (a tool the role may not call is refused as by the library): the same envelopes."""
    import subprocess

    from node_tools import NODE_DIR, require
    node = require(18, "@modelcontextprotocol/sdk")
    indices = [i for i, case in enumerate(CASES) if case[2] == role and case[0] in TOOLS]
    library = by_library(prepared, indices, f"lib-ts-{role}", role)
    db, root = _fresh(prepared, f"ts-{role}")
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"command": sys.executable, "args": [
        "-m", "groundrules.cli.main", "serve", *_cli_options(db, root, role), "--toolsets", "all"],
        "calls": [CASES[i][:2] for i in indices]}, ensure_ascii=False), encoding="utf-8")
    out = subprocess.run([node, str(NODE_DIR / "ts_stdio_calls.mjs"), str(plan)], capture_output=True, text=True,
                         timeout=300, cwd=NODE_DIR)
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.splitlines()[-1])
    roles = Service(default_rulebook()).roles
    assert set(seen["listed"]) == {tool for tool in TOOLS if roles.may_call(role, tool)}
    for i, from_library, from_ts in zip(indices, library, seen["answers"], strict=True):
        assert canonical.dumps(from_ts) == canonical.dumps(from_library), (CASES[i][:3], from_ts, from_library)
