"""`groundrules diff`: an analyst sees exactly what an edit changes, case by case, as a person reads it.

Each test makes a realistic edit in a copy of the tables and reads the diff's text (and its JSON)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_inproc import run_cli
from groundrules import canonical, corpus, corpus_runs, explain, load_rulebook, lock_messages
from groundrules.corpus import decision_tables
from groundrules.corpus_diff import corpus_diff
from groundrules.corpus_diff.text import lines
from table_edits import TableFile

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases"


def edited(tmp_path: Path, file: str, *edits: tuple[str, str]) -> Path:
    """A copy of the tables (and the case corpus) with `edits` applied to `file`."""
    if not (tmp_path / "rules").exists():
        for d in ("rules", "locks", "schemas"):
            shutil.copytree(ROOT / d, tmp_path / d)
        shutil.copytree(CASES, tmp_path / "tests" / "cases")
    table = tmp_path / file
    text = table.read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    table.write_text(text, encoding="utf-8")
    return tmp_path


def diff_of(rulebook, root: Path) -> dict:
    return corpus_diff(rulebook, load_rulebook(root), CASES)


def block(text: list[str], case: str) -> list[str]:
    """The lines of one changed case: its name line and everything indented under it."""
    start = text.index(f"  {case}")
    end = start + 1
    while end < len(text) and text[end].startswith("    "):
        end += 1
    return text[start:end]


def codes_of(rulebook, table_id: str) -> dict:
    """case name -> fired codes of the bundled table, read from the corpus."""
    table = rulebook.table(table_id)
    return {p.stem: table.evaluate(json.loads(p.read_text(encoding="utf-8"))).codes
            for p in sorted((CASES / table_id).glob("*.json"))}


def test_no_edit_changes_nothing_and_every_decision_table_is_named(rulebook):
    diff = corpus_diff(rulebook, rulebook, CASES)
    refs = decision_tables(rulebook)
    assert [t["table"] for t in diff["decision_tables"]] == [r.id for r in refs]
    assert all(not t["changes"] and not t["change"] for t in diff["decision_tables"])
    assert diff["edited"] == [] and diff["locks"]["changes"] == [] and diff["fold"]["changes"] == []
    text = lines(diff)
    for ref in refs:
        folder = CASES / ref.id
        if folder.is_dir():
            count = len(list(folder.glob("*.json")))
            assert f"{ref.id} ({ref.file}): 0 of {count} case(s) changed" in text
        else:
            assert any(line.startswith(f"{ref.id} (") and f"no corpus (tests/cases/{ref.id}/ does not exist"
                       in line for line in text), ref.id
    assert text[-1].startswith("0 case(s) changed")


def support_reason(tmp_path: Path) -> TableFile:
    """The support_reason table of a copy of the tables (and corpus), to edit by what it holds."""
    return TableFile(edited(tmp_path, "rules/support_reason.yaml") / "rules" / "support_reason.yaml")


def co_firing_neighbours(rulebook, role: str) -> tuple[str, str, list[str]]:
    """The first two codes of `role` next to each other in the priority that fire together on some
    corpus case, and those cases."""
    table = rulebook.table("support_reason")
    fired = codes_of(rulebook, "support_reason")
    for a, b in zip(table.priority, table.priority[1:]):
        if table.codes[a].get("role") == role == table.codes[b].get("role"):
            both = [case for case, codes in fired.items() if {a, b} <= set(codes)]
            if both:
                return a, b, both
    raise AssertionError(f"no two {role} codes next to each other fire together on the corpus")


def primary_of(book, case: str) -> str:
    table = book.table("support_reason")
    return table.primary(table.evaluate(json.loads((CASES / "support_reason" / f"{case}.json")
                                                   .read_text(encoding="utf-8")))).code


def test_swapping_two_diagnostic_priorities_shows_the_reordering(tmp_path, rulebook):
    a, b, both = co_firing_neighbours(rulebook, "diagnostic")
    priority = rulebook.table("support_reason").priority
    support_reason(tmp_path).swap_items(("priority",), priority.index(a), priority.index(b))
    diff = diff_of(rulebook, tmp_path)
    table = next(t for t in diff["decision_tables"] if t["table"] == "support_reason")
    assert [c["case"] for c in table["changes"]] == both
    text = lines(diff)
    assert "edited: rules/support_reason.yaml (support_reason, edited)" in text
    for case in both:
        assert block(text, case) == [
            f"  {case}",
            f"    primary: {primary_of(rulebook, case)} (unchanged)",
            f"    reordered: {a}, {b} -> {b}, {a}"]


def test_swapping_two_status_priorities_moves_the_primary(tmp_path, rulebook):
    a, b, both = co_firing_neighbours(rulebook, "status")
    priority = rulebook.table("support_reason").priority
    support_reason(tmp_path).swap_items(("priority",), priority.index(a), priority.index(b))
    after = load_rulebook(tmp_path)
    text = lines(diff_of(rulebook, tmp_path))
    moved = [case for case in both if (primary_of(rulebook, case), primary_of(after, case)) == (a, b)]
    assert moved
    for case in both:
        was, now = primary_of(rulebook, case), primary_of(after, case)
        assert block(text, case)[:3] == [
            f"  {case}",
            f"    primary: {was} -> {now}" if was != now else f"    primary: {now} (unchanged)",
            f"    reordered: {a}, {b} -> {b}, {a}"]
    diff = diff_of(rulebook, tmp_path)
    changes = {c["case"]: c for c in next(t for t in diff["decision_tables"] if t["table"] == "support_reason")["changes"]}
    change = changes[moved[0]]
    assert change["primary"] == {"before": a, "after": b}
    assert change["reordered"] and change["added"] == [] and change["removed"] == []


def relabelled(rulebook, tmp_path: Path) -> tuple[str, str]:
    """The first diagnostic code that fires on the corpus (never primary), its label reworded."""
    table = rulebook.table("support_reason")
    fired = codes_of(rulebook, "support_reason")
    code = next(c for c in table.priority if table.codes[c].get("role") == "diagnostic"
                and any(c in codes for codes in fired.values()))
    support_reason(tmp_path).prefix_value(("outputs", code, "label"), "改写：")
    return code, table.codes[code]["label"]


def test_a_label_edit_shows_the_sentence_before_and_after(tmp_path, rulebook):
    code, label = relabelled(rulebook, tmp_path)
    diff = diff_of(rulebook, tmp_path)
    firing = [case for case, codes in codes_of(rulebook, "support_reason").items() if code in codes]
    table = next(t for t in diff["decision_tables"] if t["table"] == "support_reason")
    assert [c["case"] for c in table["changes"]] == firing and firing
    case = firing[0]
    assert block(lines(diff), case) == [
        f"  {case}",
        f"    primary: {primary_of(rulebook, case)} (unchanged)",
        f"    {code}.label",
        f"      - {label}",
        f"      + 改写：{label}"]
    assert table["changes"][0]["outputs"] == [
        {"code": code, "key": "label", "before": label, "after": f"改写：{label}"}]


def test_a_detail_edit_shows_each_changed_sentence(tmp_path, rulebook):
    """A status code with one row, firing on the corpus: its detail template gains a prefix."""
    table = rulebook.table("support_reason")
    fired = codes_of(rulebook, "support_reason")
    rows = [r.code for r in table.rows]
    row = next(r for r in table.rows if rows.count(r.code) == 1 and table.codes[r.code].get("role") == "status"
               and "detail" in dict(r.outputs) and any(r.code in codes for codes in fired.values()))
    code, file = row.code, support_reason(tmp_path)
    index = [r["id"] for r in file.at("rows")].index(row.id)
    file.prefix_value(("rows", index, "output", "detail"), "注意：")
    diff = diff_of(rulebook, tmp_path)
    firing = [case for case, codes in fired.items() if code in codes]
    changes = next(t for t in diff["decision_tables"] if t["table"] == "support_reason")["changes"]
    assert [c["case"] for c in changes] == firing and firing
    for change in changes:
        [sentence] = change["outputs"]
        assert sentence["key"] == "detail" and sentence["code"] == code
        assert sentence["after"] == "注意：" + sentence["before"]
        assert block(lines(diff), change["case"])[-3:] == [
            f"    {code}.detail", f"      - {sentence['before']}", f"      + {sentence['after']}"]


def test_a_lock_pattern_edit_shows_the_locks_a_conversation_loses(tmp_path, rulebook):
    # the analyst drops the em dash from the separators (the table's `sep` set, and only there)
    text = (ROOT / "locks" / "cn_mobile.yaml").read_text(encoding="utf-8")
    sep_line = next(line for line in text.splitlines() if line.strip().startswith("sep:"))
    root = edited(tmp_path, "locks/cn_mobile.yaml", (sep_line, sep_line.replace("–—―", "–―")))
    diff = diff_of(rulebook, root)
    assert [c["case"] for c in diff["locks"]["changes"]] == ["contact/em_dash_typed"]
    assert block(lines(diff), "contact/em_dash_typed") == [
        "  contact/em_dash_typed",
        "    message m1",
        '      - cn_mobile.mobile [3:16] "150—1234—5678" -> 15012345678 valid']
    assert [t["table"] for t in diff["edited"]] == ["cn_mobile"]


def test_a_lock_check_edit_shows_locks_that_change_verdict(tmp_path, rulebook):
    # the analyst forgets 8 among the allowed second digits (the set every phone pattern's check reads)
    root = edited(tmp_path, "locks/cn_mobile.yaml", ('second_digit: "3456789"', 'second_digit: "345679"'))
    diff = diff_of(rulebook, root)
    change = next(c for c in diff["locks"]["changes"] if c["case"] == "contact/two_numbers_one_message")
    [message] = change["messages"]
    assert message["added"] == [] and message["removed"] == []
    [lock] = message["changed"]
    assert lock["before"]["valid"] is True and lock["after"]["invalid_reason"] == "bad_second_digit"
    start, end = lock["before"]["start"], lock["before"]["end"]
    quote = json.dumps(lock["before"]["quote"], ensure_ascii=False)
    assert block(lines(diff), "contact/two_numbers_one_message") == [
        "  contact/two_numbers_one_message",
        f"    message {message['message']}",
        f"      - cn_mobile.mobile [{start}:{end}] {quote} -> 18600001111 valid",
        f"      + cn_mobile.mobile [{start}:{end}] {quote} -> 18600001111 invalid (bad_second_digit)"]
    # every changed conversation holds a mobile number whose second digit is 8, and no other does
    for c in diff["locks"]["changes"]:
        for m in c["messages"]:
            assert all(ch["before"]["normalized_value"][1] == "8" for ch in m["changed"])


def test_a_merge_rule_edit_shows_slot_states_and_event_outcomes(tmp_path, rulebook):
    # a correction must now rank strictly higher than the current value's source
    root = edited(tmp_path, "rules/merge.yaml", ("- {field: event.rank, ge: {field: current.rank}}",
                                                  "- {field: event.rank, gt: {field: current.rank}}"))
    diff = diff_of(rulebook, root)
    assert diff["fold"]["changes"] and all(
        any(e["before"]["rule"] == "correct_replaces" for e in c["events"]) for c in diff["fold"]["changes"])
    assert block(lines(diff), "seed_region/read_as_correct") == [
        "  seed_region/read_as_correct",
        "    slot demand_1.region",
        "      - filled: B 地 (user)",
        "      + conflicting: A 地 (user) | B 地 (user)",
        "    event e2",
        "      - replace by correct_replaces in demand_1",
        "      + conflict by default in demand_1"]
    resolve = next(t for t in diff["decision_tables"] if t["table"] == "merge.resolve")
    assert resolve["change"] == "edited" and resolve["corpus"] is None and resolve["exercised_by"] == "fold"
    assert ("merge.resolve (rules/merge.yaml#resolve, edited): no corpus (tests/cases/merge.resolve/ does "
            "not exist; the fold corpus below runs it)") in lines(diff)


def test_a_fold_refusal_change_is_shown(tmp_path, rulebook):
    # the slot a wechat lock may fill no longer accepts wechat locks: conversations that set it are refused
    root = edited(tmp_path, "rules/merge.yaml", ("locks: {kinds: [wechat], required: true",
                                                  "locks: {kinds: [qq], required: true"))
    diff = diff_of(rulebook, root)
    refused = [c for c in diff["fold"]["changes"] if c["error"]]
    assert refused
    newly = [c for c in refused if c["error"]["before"] is None]
    assert newly
    text = lines(diff)
    for c in refused:
        assert c["error"]["after"] == "INSUFFICIENT_EVIDENCE" and c["events"] == [] and c["evidence"] == []
        shown = "(none)" if c["error"]["before"] is None else c["error"]["before"]
        assert block(text, c["case"])[1] == f"    refusal: {shown} -> INSUFFICIENT_EVIDENCE"
    for c in newly:   # the state a refused fold no longer gives: the slots it had filled, as '-' lines
        slots = [s for s in c["slots"] if s["before"] and s["before"]["status"] != "empty"]
        assert slots and all(s["after"] is None for s in slots)
        wechat = next(s for s in c["slots"] if s["slot"] == "wechat")
        assert f"    slot {wechat['scope']}.wechat" in block(text, c["case"])


def test_the_command_text_and_json_carry_the_same_diff(tmp_path, rulebook):
    relabelled(rulebook, tmp_path)
    root = tmp_path
    base = ["--rules", str(root), "diff", "--base", str(ROOT)]
    as_json = run_cli(*base, "--json")
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)["data"]
    expected = diff_of(rulebook, root)
    assert data == json.loads(canonical.dumps(expected))
    as_text = run_cli(*base)
    assert as_text.returncode == 0 and as_text.stdout.decode("utf-8").splitlines() == lines(expected)


def test_the_command_against_a_git_revision_and_a_bad_base():
    head = run_cli("diff", "--base", "HEAD", cwd=ROOT)
    assert head.returncode == 0, head.stderr
    text = head.stdout.decode("utf-8")
    assert text.splitlines()[-1].endswith(")") and "case(s) changed" in text
    for bad in ("no-such-rev", "--output=x"):
        run = run_cli("diff", f"--base={bad}", cwd=ROOT)
        err = run.stderr.decode("utf-8")
        assert run.returncode == 1 and "Traceback" not in err and len(err.splitlines()) == 1


def test_the_diff_runs_the_chat_corpus_and_names_each_message_a_lock_edit_changes(tmp_path, rulebook):
    """Allow at most two separators between the mobile's digits: the chat corpus's spaced-dash
    numbers lose their lock, message by message."""
    text = (ROOT / "locks" / "cn_mobile.yaml").read_text(encoding="utf-8")
    old = next(m for m in ("(?:{sep}{0,3}[0-9]){10}",) if m in text)
    root = edited(tmp_path, "locks/cn_mobile.yaml", (old, old.replace("{0,3}", "{0,2}")))
    diff = diff_of(rulebook, root)
    chats = corpus.chat_cases(CASES)
    assert diff["chat"]["cases"] == len(chats) and diff["chat"]["corpus"]
    after = load_rulebook(root)
    messages = {m["id"]: m for _, ms in chats for m in ms}
    changed = {m["message"] for c in diff["chat"]["changes"] for m in c["messages"]}
    expected = {mid for mid, m in messages.items() if lock_messages([m], rulebook) != lock_messages([m], after)}
    assert changed == expected and expected
    out = lines(diff)
    assert any(line.startswith("chat (tests/cases/lock_chat*): ") for line in out)
    assert f"{len(diff['chat']['changes'])} chat conversation(s)" in out[-1]


def test_the_diff_runs_the_findings_corpus_over_an_edited_transition_table(tmp_path, rulebook):
    """Flip the yes/no test of the independent-support guard: each call sequence whose call it let
    through now shows that call refused by the guard, at the call, with the move it checked."""
    table = rulebook.table("finding_states")
    guard = table.guards["independent-support"]
    flag = next(t for t in _tests(guard.when) if t.op == "eq" and isinstance(t.arg, bool))
    runs = corpus_runs.findings_runs(rulebook, CASES)
    assert any(m[-1] is None and "independent-support" in getattr(table.machines[m[1]].find(m[2], m[3]), "guards", ())
               for run in runs.values() for step in run["steps"] for m in step["moves"])  # the guard let moves by
    written = f"{{field: {flag.field}, eq: {str(flag.arg).lower()}}}"
    root = edited(tmp_path, "rules/finding_states.yaml", (written, written.replace(str(flag.arg).lower(),
                                                                                   str(not flag.arg).lower())))
    diff = diff_of(rulebook, root)
    part = diff["transitions"]
    assert part["corpus"] == "findings" and part["cases"] == len(runs)
    calls = [call for c in part["changes"] for call in c["calls"]]
    assert any(call["after"] and call["after"]["guard"] == "independent-support" for call in calls)
    out = "\n".join(lines(diff))
    assert "transitions (tests/cases/findings): " in out and "(guard independent-support)" in out


def test_the_edited_list_names_a_schema_file_too(tmp_path, rulebook):
    path = "schemas/finding-ledger.transition-facts.v1.schema.json"
    text = (ROOT / path).read_text(encoding="utf-8")
    root = edited(tmp_path, path, ('"title": "', '"title": "(edited) '))
    assert text.count('"title": "') == 1
    diff = diff_of(rulebook, root)
    assert {"table": None, "file": path, "change": "edited"} in diff["edited"]
    assert f"edited: {path} (schema, edited)" in lines(diff)


def _tests(cond):
    if cond.kind == "test":
        yield cond
        inner = cond.inner()
        if inner is not None:
            yield from _tests(inner)
    for child in cond.children:
        yield from _tests(child)
