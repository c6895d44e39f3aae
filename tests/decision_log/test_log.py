"""The decision log on both backends: what a logged call records, what never reaches the database,
masking, retention, who may read it, and erasure with the evidence it copied."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from groundrules import Caller, Service
from groundrules.core import canonical
from groundrules.decision_log import crypto, masking, times
from groundrules.decision_log.log import DecisionLog
from groundrules.findings import SequentialIds, StepClock

from decision_support import KEY_MATERIAL, START, raw_bytes

AGENT = Caller("agent-a", "agent", ("p1",))
REVIEWER = Caller("user:alice", "reviewer", ("p1",))
OTHER_REVIEWER = Caller("user:bob", "reviewer", ("p2",))


def mobile() -> str:
    """A valid mobile number no other test writes (the PostgreSQL WAL is the whole cluster's)."""
    return "13" + str(random.Random().randrange(3, 10)) + "".join(random.choice("0123456789") for _ in range(8))


def lock_args(text: str, message_id: str = "m1") -> dict:
    return {"message": {"id": message_id, "role": "user", "content": text}}


def read(service: Service, caller: Caller = REVIEWER, **arguments) -> dict:
    envelope = service.call("read_decisions", arguments, caller)
    assert envelope["ok"], envelope["error"]
    return envelope["data"]


def test_a_logged_call_answers_as_an_unlogged_one_and_names_its_decision(make_service):
    logged, plain = make_service(), make_service(logged=False)
    arguments = lock_args(f"手机 {mobile()}")
    a, b = logged.call("lock_message", arguments, AGENT), plain.call("lock_message", arguments, AGENT)
    assert "decision" not in b                                   # no log: the envelope as it always was
    assert canonical.dumps({k: v for k, v in a.items() if k != "decision"}) == canonical.dumps(b)
    [decision] = read(logged, reveal=True, tool="lock_message")["decisions"]
    assert decision["id"] == a["decision"]
    assert (decision["principal"], decision["role"], decision["project"], decision["tool"]) == \
        ("agent-a", "agent", "p1", "lock_message")
    assert decision["auth"] == AGENT.auth.as_json()              # issue 30: how the caller was authenticated
    assert (decision["rulebook"], decision["ok"], decision["error_code"]) == (a["rulebook"], True, None)
    assert decision["arguments"] == arguments
    assert decision["answer"] == {k: v for k, v in a.items() if k != "decision"}
    assert decision["at"] == times.text(START) and decision["duration_us"] >= 0


def test_a_logged_call_names_how_its_caller_was_authenticated(make_service):
    from groundrules.api import Authentication
    logged = make_service()
    caller = Caller("agent-o", "agent", ("p1",), Authentication("oauth", "https://issuer.example", "sub-7"))
    logged.call("lock_message", lock_args("不方便接电话"), caller)
    [decision] = read(logged, tool="lock_message")["decisions"]
    assert (decision["principal"], decision["auth"]) == (
        "agent-o", {"method": "oauth", "issuer": "https://issuer.example", "subject": "sub-7"})


def test_refusals_are_logged_in_the_callers_project_with_their_code(service):
    refused = service.call("get_evidence", {"project": "p9"}, AGENT)
    assert refused["error"]["code"] == "PROJECT_SCOPE_MISMATCH"
    unknown = service.call("no such tool, 13800001234", {}, AGENT)
    decisions = read(service, reveal=True)["decisions"]
    by_id = {d["id"]: d for d in decisions}
    assert by_id[refused["decision"]]["project"] == "p1"          # the caller's partition, not the one it named
    assert by_id[refused["decision"]]["error_code"] == "PROJECT_SCOPE_MISMATCH"
    assert by_id[unknown["decision"]]["tool"] == "(unknown)"      # a caller's text never in a plain column


def test_the_key_and_personal_values_never_reach_the_database_files(service, db, request):
    number = mobile()
    text = f"客服 {number}，别打，微信 wx_secret_{number[-4:]}"
    assert service.call("lock_message", lock_args(text), AGENT)["ok"]
    context = json.loads((Path(__file__).parents[1] / "cases" / "support_reason"
                          / "insufficient-many-reasons-in-order.json").read_text(encoding="utf-8"))
    context["query"] = f"联系 {number} 的题量"
    assert service.call("explain_support", {"context": context}, AGENT)["ok"]
    service.decisions.flush()
    assert len(read(service)["decisions"]) == 2
    cluster = request.getfixturevalue("pg_cluster") if not isinstance(db, Path) else None
    raw = raw_bytes(db, cluster)
    for secret in (KEY_MATERIAL, crypto._hkdf(KEY_MATERIAL, crypto._AES_INFO, 32), number.encode(),
                   f"wx_secret_{number[-4:]}".encode(), "别打".encode()):
        assert secret not in raw
    assert crypto.DecisionKey(KEY_MATERIAL).id.encode() in raw    # the key's id is there: it names, never opens


def test_a_payload_opens_only_with_its_key_and_its_row(service, db):
    decision = service.call("lock_message", lock_args("x"), AGENT)["decision"]
    service.decisions.flush()
    [row] = [r for r in service.decisions.rows() if r["id"] == decision]
    assert service.decisions.opened(row)["arguments"] == lock_args("x")
    with pytest.raises(Exception) as wrong_key:
        crypto.DecisionKey(b"another operator's key, 32+ bytes long").open(row["sealed"], crypto.associated("p1", decision))
    assert wrong_key.value.code == "DECISION_UNREADABLE"
    with pytest.raises(Exception) as moved:
        service.decisions.key.open(row["sealed"], crypto.associated("p2", decision))
    assert moved.value.code == "DECISION_UNREADABLE"


def test_paths_the_masking_table_never_keeps_are_never_sealed(service, rulebook):
    table = masking.of(rulebook)
    never = {tool: p for tool, p in table.tools.items() if p.never_keep}
    assert never, "the bundled table drops something"
    tool, policy = next(iter(never.items()))
    assert tool == "read_decisions"                               # the one the bundled table names
    service.call("lock_message", lock_args("a"), AGENT)
    first = service.call("read_decisions", {}, REVIEWER)
    service.decisions.flush()
    [row] = [r for r in service.decisions.rows() if r["id"] == first["decision"]]
    doc = service.decisions.opened(row)
    assert row["kept"] == "part" and json.loads(row["dropped"]) == [".".join(p) for p in policy.never_keep]
    for path in policy.never_keep:
        assert not masking.drop(json.loads(json.dumps(doc)), path)   # nothing left at the path


def test_every_item_of_a_list_the_table_never_keeps_is_dropped(make_service, rulebook_with):
    """A never_keep path ending in `*` over a list removes each item (the walk goes last first, so
    removing one leaves the earlier ones where they were) and nothing else."""
    book = rulebook_with(lambda t: t["tools"]["lock_message"].update(never_keep=["arguments.messages.*"]))
    service = make_service(book)
    messages = [{"id": f"m{n}", "role": "user", "content": f"第 {n} 条"} for n in range(3)]
    e = service.call("lock_message", {"messages": messages}, AGENT)
    assert e["ok"], e["error"]
    [d] = [d for d in read(service, reveal=True)["decisions"] if d["id"] == e["decision"]]
    assert (d["kept"], d["arguments"], d["answer"]["ok"]) == ("part", {"messages": []}, True)


def test_a_whole_tool_never_kept_leaves_only_its_outcome(make_service, rulebook_with):
    book = rulebook_with(lambda t: t["tools"].setdefault("lock_message", {}).update(never_keep="all"))
    service = make_service(book)
    e = service.call("lock_message", lock_args(f"手机 {mobile()}"), AGENT)
    [d] = [d for d in read(service, reveal=True)["decisions"] if d["id"] == e["decision"]]
    assert (d["kept"], d["arguments"], d["answer"], d["ok"]) == ("none", None, None, True)


def test_personal_paths_are_masked_unless_a_reviewer_reveals_them(service, rulebook):
    number = mobile()
    service.call("lock_message", lock_args(f"手机 {number}"), AGENT)
    masked, shown = read(service, tool="lock_message"), read(service, tool="lock_message", reveal=True)
    assert number not in json.dumps(masked, ensure_ascii=False)
    assert number in json.dumps(shown, ensure_ascii=False)
    for path in masking.of(rulebook).policy("lock_message").personal:
        doc = {k: masked["decisions"][0][k] for k in ("arguments", "answer")}
        seen = []
        masking.replace(doc, path, lambda v: seen.append(v) or v)
        assert all(isinstance(v, str) and v.startswith("‹") for v in seen)


def test_agents_never_read_decisions(service):
    service.call("lock_message", lock_args("x"), AGENT)
    assert service.call("read_decisions", {}, AGENT)["error"]["code"] == "PERMISSION_DENIED"
    assert "read_decisions" not in [t.name for t in service.listings(AGENT)]
    assert "read_decisions" in [t.name for t in service.listings(REVIEWER)]


def test_a_reviewer_reads_only_the_projects_it_is_granted(service):
    mine = service.call("lock_message", lock_args("x"), AGENT)["decision"]
    assert service.call("read_decisions", {"project": "p1"}, OTHER_REVIEWER)["error"]["code"] == "PROJECT_SCOPE_MISMATCH"
    assert mine not in [d["id"] for d in read(service, OTHER_REVIEWER)["decisions"]]
    assert mine in [d["id"] for d in read(service)["decisions"]]


def test_pages_and_filters(service):
    ids = [service.call("lock_message", lock_args(str(n)), AGENT)["decision"] for n in range(5)]
    refused = service.call("lock_message", {"message": {}}, AGENT)["decision"]
    first = read(service, tool="lock_message", limit=2)
    assert [d["id"] for d in first["decisions"]] == [refused, ids[4]]
    second = read(service, tool="lock_message", limit=2, before=first["next"])
    assert [d["id"] for d in second["decisions"]] == [ids[3], ids[2]]
    last = read(service, tool="lock_message", limit=2, before=second["next"])
    assert [d["id"] for d in last["decisions"]] == [ids[1], ids[0]] and last["next"] is None   # a full last page
    assert [d["id"] for d in read(service, tool="lock_message", outcome="error")["decisions"]] == [refused]
    assert read(service, decision_id=ids[0])["decisions"][0]["id"] == ids[0]
    assert service.call("read_decisions", {"decision_id": "D-nope"}, REVIEWER)["error"]["code"] == "DECISION_NOT_FOUND"
    assert service.call("read_decisions", {"since": "last week"}, REVIEWER)["error"]["code"] == "INVALID_ARGUMENT"


def test_retention_deletes_what_the_table_says_is_too_old(service, rulebook):
    table = masking.of(rulebook)
    short = min(table.tools.items(), key=lambda kv: kv[1].retention_days)
    tool, days = short[0], short[1].retention_days
    assert days < table.default_days
    old = service.call(tool, {}, REVIEWER)["decision"]             # refused or not: logged either way
    kept = service.call("lock_message", lock_args("x"), AGENT)["decision"]
    service.decisions.flush()
    day_after = times.days_before(times.text(START), -(days + 1))
    assert service.decisions.purge(day_after) == 1
    left = {r["id"] for r in service.decisions.rows()}
    assert old not in left and kept in left                       # lock_message keeps default_days
    assert service.decisions.purge(times.days_before(times.text(START), -(table.default_days + 1))) >= 1
    assert kept not in {r["id"] for r in service.decisions.rows()}


def test_close_writes_every_decision_of_an_answered_call(make_service, db, key, rulebook):
    service = make_service(batch_ms=500)
    ids = [service.call("lock_message", lock_args(str(n)), AGENT)["decision"] for n in range(200)]
    service.decisions.close()
    again = DecisionLog(db, key=key, rulebook=rulebook, purge_every_s=None)
    try:
        assert [r["id"] for r in again.rows()] == ids
    finally:
        again.close()


def test_redacting_evidence_erases_the_decisions_that_copied_it(service, db, request):
    number = mobile()
    content = f"我的手机是 {number}，请回电"
    stored = service.call("append_evidence", {"record": {"type": "message", "role": "user", "state": "sent",
                                                         "content": content}}, AGENT)
    record = stored["data"]["records"][0]["id"]
    copies = [stored["decision"],
              service.call("lock_message", lock_args(content, "m9"), AGENT)["decision"],          # whole string
              service.call("lock_message", lock_args(f"再说一遍 {number}"), AGENT)["decision"],   # the lock's value
              service.call("get_evidence", {"record_id": record}, AGENT)["decision"]]
    other = service.call("lock_message", lock_args(f"另一个号码 {mobile()}"), AGENT)["decision"]
    service.decisions.flush()
    sealed_before = {r["id"]: r["sealed"] for r in service.decisions.rows()}
    redaction = service.call("redact_evidence", {"record_id": record, "reason": "用户要求删除"}, REVIEWER)
    assert redaction["ok"]
    rows = {r["id"]: r for r in service.decisions.rows()}
    for decision in copies:
        assert (rows[decision]["kept"], rows[decision]["sealed"]) == ("erased", None)
        assert rows[decision]["erased_by"] == redaction["data"]["redactions"][0]["id"]
    assert rows[other]["kept"] == "all"
    shown = {d["id"]: d for d in read(service, reveal=True, limit=100)["decisions"]}
    assert shown[copies[0]]["arguments"] is None and shown[copies[0]]["erased_by"]
    if isinstance(db, Path):                                      # no copy of the erased ciphertext is left
        raw = raw_bytes(db)
        assert not any(sealed_before[d] in raw for d in copies)
        assert sealed_before[other] in raw


def test_rows_are_append_only_but_for_erasure(service, db):
    decision = service.call("lock_message", lock_args("x"), AGENT)["decision"]
    service.decisions.flush()
    store = service.decisions.store
    if isinstance(db, Path):
        import sqlite3
        with pytest.raises(sqlite3.IntegrityError):
            store.conn.execute("UPDATE decision_log SET tool = 'explain_support' WHERE id = ?", (decision,))
        with pytest.raises(sqlite3.IntegrityError):
            store.conn.execute("UPDATE decision_log SET sealed = x'00' WHERE id = ?", (decision,))
    else:
        import psycopg
        with psycopg.connect(db, autocommit=True) as conn:
            with pytest.raises(psycopg.errors.RestrictViolation):
                conn.execute("UPDATE decision_log SET tool = 'explain_support' WHERE id = %s", (decision,))
            with pytest.raises(psycopg.errors.RestrictViolation):
                conn.execute("TRUNCATE decision_log")


def test_only_retention_deletes_and_only_what_is_past_its_cutoff(service, db, rulebook):
    decision = service.call("lock_message", lock_args("x"), AGENT)["decision"]
    service.decisions.flush()
    table = masking.of(rulebook)
    past_all = times.days_before(times.text(START), -(max([table.default_days] + [
        p.retention_days for p in table.tools.values()]) + 1))
    if isinstance(db, Path):
        import sqlite3
        conn = service.decisions.store.conn
        with pytest.raises(sqlite3.IntegrityError, match="only retention deletes"):
            conn.execute("DELETE FROM decision_log WHERE id = ?", (decision,))
        # a cutoff that does not reach the decision lets nothing go, inside retention's own table
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO decision_retention (tool, cutoff) VALUES ('*', ?)",
                     (times.days_before(times.text(START), 1),))
        with pytest.raises(sqlite3.IntegrityError, match="only retention deletes"):
            conn.execute("DELETE FROM decision_log WHERE id = ?", (decision,))
        conn.execute("ROLLBACK")
    else:
        import psycopg
        with psycopg.connect(db, autocommit=True) as conn:
            with pytest.raises(psycopg.errors.RestrictViolation, match="only retention deletes"):
                conn.execute("DELETE FROM decision_log WHERE id = %s", (decision,))
            # a cutoff another transaction wrote (and committed) opens nothing for this one
            conn.execute("INSERT INTO decision_retention (tool, cutoff) VALUES ('*', %s), ('lock_message', %s)",
                         (past_all, past_all))
            with pytest.raises(psycopg.errors.RestrictViolation, match="only retention deletes"):
                conn.execute("DELETE FROM decision_log WHERE id = %s", (decision,))
            conn.execute("DELETE FROM decision_retention")
    assert decision in {r["id"] for r in service.decisions.rows()}
    assert service.decisions.purge(past_all) == 1                  # retention itself still deletes
    assert decision not in {r["id"] for r in service.decisions.rows()}
    if isinstance(db, Path):                                      # and leaves no cutoff behind it
        assert service.decisions.store.conn.execute("SELECT count(*) FROM decision_retention").fetchone()[0] == 0
    else:
        with psycopg.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM decision_retention").fetchone()[0] == 0


def test_the_toolset_tools_and_a_refusal_for_a_toolset_not_enabled_are_logged_as_any_call(service):
    """An MCP session's calls reach the log through Service.call like every other (issue 32)."""
    table = service.toolsets
    starting = table.starting("agent")
    toolset = next(t for t in table.toolsets if t not in starting and any(
        service.roles.may_call("agent", n) for n in table.toolsets[t].tools))
    tool = next(n for n in table.toolsets[toolset].tools if service.roles.may_call("agent", n))
    refused = service.call(tool, {}, AGENT, toolsets=starting)
    enabled = service.call("enable_toolset", {"toolset": toolset}, AGENT, toolsets=starting)
    by_id = {d["id"]: d for d in read(service, reveal=True)["decisions"]}
    assert (by_id[refused["decision"]]["tool"], by_id[refused["decision"]]["error_code"]) == (tool,
                                                                                           "TOOLSET_NOT_ENABLED")
    assert by_id[enabled["decision"]]["answer"] == {k: v for k, v in enabled.items() if k != "decision"}
