"""A trace for every table kind that decides: `groundrules eval TABLE FILE` on decision tables,
lock tables, transition tables and the merge policy, each verdict the engine's own (checked
against the untraced answer over the corpora), and input that fits another table refused."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_inproc import run_cli
from groundrules import fold, load_rulebook, lock_messages
from groundrules.analyst import corpus
from groundrules.analyst.trace import INPUTS, traceable
from groundrules.analyst.trace.fold import fold_trace
from groundrules.analyst.trace.locks import lock_trace
from said import said, words

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases"
BOOK = load_rulebook(ROOT)
LOCK_TABLES = [t.id for t in BOOK.of_kind("lock_patterns")]


def test_every_table_of_a_deciding_kind_is_traceable_and_the_rest_are_refused_in_words():
    kinds = traceable(BOOK)
    assert {t.id for t, _, _ in BOOK.decision_tables()} | {
        i for i, k in BOOK.kinds.items() if k in INPUTS} == set(kinds)
    assert set(kinds.values()) == set(INPUTS)
    other = next(i for i, k in sorted(BOOK.kinds.items()) if k not in INPUTS)
    out = run_cli("eval", other, "-", stdin="{}")
    assert out.returncode == 1 and said("usage.eval_untraceable", table=other, kind=BOOK.kinds[other],
                                        kinds=sorted(INPUTS)) in out.stderr.decode("utf-8")


def _messages() -> list[dict]:
    convs = (corpus.lock_cases(CASES) or []) + (corpus.chat_cases(CASES) or [])
    return [m for _, messages in convs for m in messages]


def test_the_lock_trace_reproduces_lock_on_every_corpus_message():
    """lock_trace raises TRACE_DISAGREES when its verdicts differ from lock(); every dropped
    candidate names a drop row that held, every invalid one recorded an attempt row that held."""
    messages = _messages()
    assert len(messages) > 400
    dropped = attempts = 0
    for m in messages:
        for table in lock_trace(BOOK, None, m)["tables"]:
            for p in table["patterns"]:
                for c in p["candidates"]:
                    rules = {r["rule"]: r for r in c["rules"]}
                    if c["verdict"] == "dropped":
                        dropped += 1
                        assert rules[c["by"]]["held"] and rules[c["by"]]["section"] == "drop"
                    elif c["by"]:
                        attempts += 1
                        assert not c["valid"] and rules[c["by"]]["held"]
    assert dropped and attempts


def _pattern(trace: dict, table: str, pattern_suffix: str) -> dict:
    [t] = [t for t in trace["tables"] if t["table"] == table]
    return next(p for p in t["patterns"] if p["pattern"].endswith(pattern_suffix))


def _phone_table() -> tuple[str, str]:
    """The lock table and pattern with the smallest digit-count gate (the phone's, in the bundle)."""
    gated = [(p.gate[2], t.id, p.id) for t in BOOK.of_kind("lock_patterns") for p in t.patterns
             if p.gate and p.gate[2] and "0" in p.gate[0]]
    _, table, pattern = min(gated)
    return table, pattern


def test_a_near_miss_says_where_the_regex_stops():
    table, pattern = _phone_table()
    count = next(p for p in BOOK.table(table).patterns if p.id == pattern).gate[2]
    text = "编号 2" + "1" * count                          # starts with a digit no phone starts with, no label
    trace = lock_trace(BOOK, table, {"id": "m1", "role": "user", "content": text})
    p = _pattern(trace, table, pattern.split(".", 1)[1])
    assert p["ran"] and not p["candidates"]
    [miss] = p["near_misses"]
    assert (miss["start"], miss["reach"]) == (3, 3)
    short = lock_trace(BOOK, table, {"id": "m1", "role": "user", "content": "电话 1" + "3" * (count - 2)})
    p = _pattern(short, table, pattern.split(".", 1)[1])
    assert p["gate"]["ok"] is False and p["gate"]["counted"] == count - 1 and p["near_misses"]


def test_eval_on_a_lock_table_prints_each_step_at_its_line(tmp_path):
    table, pattern = _phone_table()
    m = next(m for m in _messages() if any(c["pattern"] == pattern and c["valid"] for c in lock_messages([m], BOOK)))
    path = tmp_path / "m.json"
    path.write_text(json.dumps(m, ensure_ascii=False), encoding="utf-8")
    out = run_cli("eval", table, str(path)).stdout.decode("utf-8")
    file = BOOK.table(table).file
    text = (ROOT / file).read_text(encoding="utf-8").split("\n")
    steps = re.findall(rf"^      {re.escape(file)}:(\d+):\d+: (\w+) -> ", out, re.MULTILINE)
    assert steps and all(f"step: {name}" in text[int(line) - 1] for line, name in steps), out
    assert "-> locked valid" in out
    traced = json.loads(run_cli("lock", "--trace", str(path)).stdout)["data"]
    assert traced["locks"] == lock_messages([m], BOOK)
    assert [t["table"] for t in traced["trace"][0]["tables"]] == sorted(LOCK_TABLES)


def _moves() -> list[tuple]:
    table = BOOK.table("finding_states")
    out = [(ex["machine"], ex["from"], ex["to"], ex["given"], ex.get("via"), ex.get("role")) for ex in table.examples]
    for name, m in table.machines.items():
        for t in m.transitions:
            for g in list(m.requires) + list(t.guards):
                for ex in table.guards[g].examples:
                    for role in (None, *t.roles):
                        out.append((name, t.sources[0], t.to, ex["given"], (t.via or (None,))[0], role))
    return out


def test_the_transition_trace_agrees_with_check():
    table = BOOK.table("finding_states")
    moves = _moves()
    assert len(moves) > 20
    for machine, source, target, facts, via, role in moves:
        traced = table.trace(machine, source, target, facts, via, role)
        blocked = table.check(machine, source, target, facts, via, role)
        assert traced["result"] == ("ok" if blocked is None else blocked.code)
        if traced["decided_by"] is None:
            assert blocked is None and all(s["ok"] for s in traced["steps"])
        else:
            step = traced["steps"][traced["decided_by"]]
            assert not step["ok"] and all(s["ok"] for s in traced["steps"][:traced["decided_by"]])
            assert step.get("guard", "") == blocked.guard


def test_eval_on_a_transition_table_names_the_guard_its_failing_test_and_the_value_read(tmp_path):
    table = BOOK.table("finding_states")
    ex = next(ex for ex in table.examples if ex["result"] != "ok" and
              table.trace(ex["machine"], ex["from"], ex["to"], ex["given"], ex.get("via"))["steps"][-1]["step"] == "guard"
              and not table.trace(ex["machine"], ex["from"], ex["to"], ex["given"], ex.get("via"))["steps"][-1]["ok"])
    facts = dict(ex["given"], machine=ex["machine"], **{"from": ex["from"], "to": ex["to"]})
    if ex.get("via"):
        facts["via"] = ex["via"]
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")
    out = run_cli("eval", "finding_states", str(path)).stdout.decode("utf-8")
    traced = table.trace(ex["machine"], ex["from"], ex["to"], ex["given"], ex.get("via"))
    guard = traced["steps"][traced["decided_by"]]["guard"]
    text = (ROOT / table.file).read_text(encoding="utf-8").split("\n")
    line = next(n for n, t in enumerate(text, 1) if t == f"  {guard}:")
    assert re.search(rf"^rules/finding_states\.yaml:{line}:\d+: guard {re.escape(guard)} .*failed .*refused here$",
                     out, re.MULTILINE), out
    assert re.search(r"^\s+rules/finding_states\.yaml:\d+:\d+: .*: read \S", out, re.MULTILINE), out
    assert out.rstrip().split("\n")[0].endswith(ex["result"])


def test_the_fold_trace_gives_each_event_the_facts_and_row_the_fold_used():
    payloads = corpus.fold_cases(CASES)
    resolve = BOOK.table("merge").resolve
    decided = 0
    for name, payload in payloads:
        try:
            answer = fold(payload, BOOK)
        except Exception:  # noqa: BLE001 - a payload the fold refuses has no events to trace
            continue
        traced = fold_trace(BOOK, "merge", payload)
        assert traced["answer"] == answer, name
        for e in traced["events"]:
            if e["rule"] is None or e.get("decided_by") == "scope_fit":   # nothing resolved, or set aside first
                assert "facts" not in e and (e["rule"] is None or e["outcome"] == "set_aside")
                continue
            decided += 1
            fired = resolve.evaluate(e["facts"]).fired[0]
            assert (fired.row.id if fired.row.index >= 0 else "default") == e["rule"], (name, e["event"])
    assert decided > 20


def test_eval_on_the_merge_policy_names_each_events_row_at_its_line(tmp_path):
    name, payload = next((n, p) for n, p in corpus.fold_cases(CASES)
                         if any(e["rule"] not in (None, "default") for e in fold_trace(BOOK, "merge", p)["events"]))
    path = tmp_path / "payload.json"
    path.write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
    out = run_cli("eval", "merge", str(path), "--trace").stdout.decode("utf-8")
    traced = fold_trace(BOOK, "merge", payload)
    text = (ROOT / "rules" / "merge.yaml").read_text(encoding="utf-8").split("\n")
    for e in traced["events"]:
        if e["rule"] not in (None, "default"):
            line = next(n for n, t in enumerate(text, 1) if t.strip() == f"- id: {e['rule']}")
            assert f"by {e['rule']} (rules/merge.yaml:{line}:" in out, out
    assert "    facts: {" in out


def test_the_wrong_tables_facts_are_refused_naming_the_table_they_fit():
    context = next(iter(corpus.table_cases(CASES, "support_reason")))[1]
    out = run_cli("eval", "merge.resolve", "-", stdin=json.dumps(context, ensure_ascii=False))
    text = out.stdout.decode("utf-8")
    assert out.returncode == 1 and "INVALID_ARGUMENT" in text
    assert all(w in text for w in words("usage.eval_misfit")) and "support_reason" in text
    first = next(iter(context))
    assert f"'{first}'" in text
