"""`groundrules diff`: an analyst sees exactly what an edit changes, case by case, as a person reads it.

Each test makes a realistic edit in a copy of the tables and reads the diff's text (and its JSON)."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from cli_inproc import run_cli
from groundrules import explain, load_rulebook, lock_messages
from groundrules.analyst import corpus, corpus_runs
from groundrules.core import canonical
from groundrules.analyst.corpus import decision_tables
from groundrules.analyst.corpus_diff import corpus_diff
from groundrules.analyst.corpus_diff.text import lines
from lock_edits import changed_cases, check_edit, separator_edit
from table_edits import TableFile

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases"


def copied(tmp_path: Path) -> Path:
    """A copy of the tables (and the case corpus) in `tmp_path`."""
    if not (tmp_path / "rules").exists():
        for d in ("rules", "locks", "schemas"):
            shutil.copytree(ROOT / d, tmp_path / d)
        shutil.copytree(CASES, tmp_path / "tests" / "cases")
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
    return TableFile(copied(tmp_path) / "rules" / "support_reason.yaml")


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


def lock_line(sign: str, lock: dict) -> str:
    """A lock as the diff's text shows it."""
    verdict = "valid" if lock["valid"] else f"invalid ({lock['invalid_reason']})"
    return (f"      {sign} {lock['pattern']} [{lock['start']}:{lock['end']}] "
            f"{json.dumps(lock['quote'], ensure_ascii=False)} -> {lock['normalized_value']} {verdict}")


def test_a_lock_pattern_edit_shows_the_locks_a_conversation_loses(tmp_path, rulebook):
    # the analyst drops a separator (one a corpus lock's quote holds) from the set its pattern reads
    edit = separator_edit(rulebook, copied(tmp_path))
    root = tmp_path
    after = load_rulebook(root)
    diff = corpus_diff(rulebook, after, CASES)
    assert [c["case"] for c in diff["locks"]["changes"]] == changed_cases(rulebook, after)
    lost, at = edit.lock, edit.lock["locator"]
    shown = block(lines(diff), edit.case)
    assert shown[0] == f"  {edit.case}" and f"    message {at['message_id']}" in shown
    assert lock_line("-", dict(lost, start=at["start"], end=at["end"])) in shown
    assert [t["table"] for t in diff["edited"]] == [edit.table]


def test_a_lock_check_edit_shows_locks_that_change_verdict(tmp_path, rulebook):
    # the analyst forgets a character a char_at check allows (say a second digit), one a corpus lock has
    edit, index, reason = check_edit(rulebook, copied(tmp_path))
    root = tmp_path
    diff = diff_of(rulebook, root)
    at = edit.lock["locator"]
    change = next(c for c in diff["locks"]["changes"] if c["case"] == edit.case)
    message = next(m for m in change["messages"] if m["message"] == at["message_id"])
    assert message["added"] == [] and message["removed"] == []
    lock = next(c for c in message["changed"] if (c["before"]["start"], c["before"]["end"]) == (at["start"], at["end"]))
    assert lock["before"]["valid"] is True and lock["after"]["invalid_reason"] == reason
    shown = block(lines(diff), edit.case)
    assert lock_line("-", lock["before"]) in shown and lock_line("+", lock["after"]) in shown
    assert shown.index(lock_line("+", lock["after"])) == shown.index(lock_line("-", lock["before"])) + 1
    # every changed lock had the character at the check's index, and turned invalid for the check's reason
    for c in diff["locks"]["changes"]:
        for m in c["messages"]:
            assert all(ch["before"]["normalized_value"][index] == edit.char and
                       ch["after"]["invalid_reason"] == reason for ch in m["changed"])


def paths(value, path: tuple = ()):
    """(path, value) of every node of a loaded YAML table, the root first."""
    yield path, value
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield from paths(child, path + (key,))


def test_a_merge_rule_edit_shows_slot_states_and_event_outcomes(tmp_path, rulebook):
    # a resolve row's `ge` between two facts made `gt` (say, a correction must now rank strictly
    # higher than the current value's source)
    merge = TableFile(copied(tmp_path) / "rules" / "merge.yaml")
    where = next(p for p, v in paths(merge.at("resolve", "rows"), ("resolve", "rows"))
                 if isinstance(v, dict) and isinstance(v.get("ge"), dict) and "field" in v and "field" in v["ge"])
    row = merge.at(*where[:3])["id"]
    merge.rename_key(where + ("ge",), "gt")
    diff = diff_of(rulebook, tmp_path)
    assert diff["fold"]["changes"] and all(
        any(e["before"]["rule"] == row and e["after"]["rule"] != row for e in c["events"])
        for c in diff["fold"]["changes"])
    text = lines(diff)
    for c in diff["fold"]["changes"]:
        shown = block(text, c["case"])
        assert all(f"    slot {s['scope']}.{s['slot']}" in shown for s in c["slots"])
        for e in c["events"]:
            at = shown.index(f"    event {e['event']}")
            assert shown[at + 1:at + 3] == [f"      {sign} {e[side]['outcome']} by {e[side]['rule']} in {e[side]['scope']}"
                                            for sign, side in (("-", "before"), ("+", "after"))]
    resolve = next(t for t in diff["decision_tables"] if t["table"] == rulebook.of_kind("merge_policy")[0].resolve.id)
    assert resolve["change"] == "edited" and resolve["corpus"] is None and resolve["exercised_by"] == "fold"
    assert (f"{resolve['table']} (rules/merge.yaml#resolve, edited): no corpus (tests/cases/{resolve['table']}/ does "
            "not exist; the fold corpus below runs it)") in text


def test_a_fold_refusal_change_is_shown(tmp_path, rulebook):
    # a slot that needs a lock of its kind now needs another kind's: conversations that set it are refused
    merge = TableFile(copied(tmp_path) / "rules" / "merge.yaml")
    slots = merge.at("slots")
    kinds = [k for s in slots.values() for k in s.get("locks", {}).get("kinds", ())]
    original = merge.text
    for slot, spec in slots.items():
        if not spec.get("locks", {}).get("required"):
            continue
        other = next(k for k in kinds if k not in spec["locks"]["kinds"])
        merge.write_scalar(("slots", slot, "locks", "kinds", 0), other)
        diff = diff_of(rulebook, tmp_path)
        refused = [c for c in diff["fold"]["changes"] if c["error"]]
        newly = [c for c in refused if c["error"]["before"] is None]
        if newly:
            break
        merge.path.write_text(original, encoding="utf-8")
    assert refused and newly
    text = lines(diff)
    for c in refused:
        assert c["error"]["after"] == "INSUFFICIENT_EVIDENCE" and c["events"] == [] and c["evidence"] == []
        shown = "(none)" if c["error"]["before"] is None else c["error"]["before"]
        assert block(text, c["case"])[1] == f"    refusal: {shown} -> INSUFFICIENT_EVIDENCE"
    filled = 0
    for c in newly:   # the state a refused fold no longer gives: its slots, as '-' lines
        assert c["slots"] and all(s["after"] is None for s in c["slots"])
        filled += sum(s["before"]["status"] != "empty" for s in c["slots"])
        edited_slot = next(s for s in c["slots"] if s["slot"] == slot)
        assert f"    slot {edited_slot['scope']}.{slot}" in block(text, c["case"])
    assert filled


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
    """Allow one separator fewer between a mobile's digits (the pattern of the chat corpus's first
    lock, every {0,N} of its regex made {0,N-1}): the chat corpus's spaced numbers lose their lock,
    message by message."""
    chats = corpus.chat_cases(CASES)
    bounded = re.compile(r"\{0,([2-9])\}")

    def entry(lock: dict) -> tuple:
        table_id, pattern = lock["pattern"].split(".", 1)
        file = TableFile(ROOT / rulebook.table(table_id).file)
        index = next(i for i, p in enumerate(file.at("patterns")) if p["id"] == pattern)
        return rulebook.table(table_id).file, index, file.at("patterns", index, "regex")
    name, index, regex = next(e for _, ms in chats for k in lock_messages(ms, rulebook)
                              for e in [entry(k)] if bounded.search(e[2]))
    file = TableFile(copied(tmp_path) / name)
    file.write_scalar(("patterns", index, "regex"), bounded.sub(lambda m: "{0,%d}" % (int(m[1]) - 1), regex))
    diff = diff_of(rulebook, tmp_path)
    assert diff["chat"]["cases"] == len(chats) and diff["chat"]["corpus"]
    after = load_rulebook(tmp_path)
    messages = {m["id"]: m for _, ms in chats for m in ms}
    changed = {m["message"] for c in diff["chat"]["changes"] for m in c["messages"]}
    expected = {mid for mid, m in messages.items() if lock_messages([m], rulebook) != lock_messages([m], after)}
    assert changed == expected and expected
    out = lines(diff)
    assert any(line.startswith("chat (tests/cases/lock_chat*): ") for line in out)
    assert f"{len(diff['chat']['changes'])} chat conversation(s)" in out[-1]


def test_the_diff_runs_the_findings_corpus_over_an_edited_transition_table(tmp_path, rulebook):
    """Flip the yes/no test of a guard that lets the corpus's moves by: each call sequence whose
    call it let through now shows that call refused by the guard, at the call, with the move it checked."""
    table = rulebook.table("finding_states")
    runs = corpus_runs.findings_runs(rulebook, CASES)
    passed = {g for run in runs.values() for step in run["steps"] for m in step["moves"] if m[-1] is None
              for g in getattr(table.machines[m[1]].find(m[2], m[3]), "guards", ())}     # guards that let moves by
    states = TableFile(copied(tmp_path) / table.file)
    guard, where, flag = next((g, p, v["eq"]) for g in table.guards if g in passed
                              for p, v in paths(states.at("guards", g, "when"), ("guards", g, "when"))
                              if isinstance(v, dict) and isinstance(v.get("eq"), bool) and "field" in v)
    states.write_scalar(where + ("eq",), not flag)
    diff = diff_of(rulebook, tmp_path)
    part = diff["transitions"]
    assert part["corpus"] == "findings" and part["cases"] == len(runs)
    calls = [call for c in part["changes"] for call in c["calls"]]
    assert any(call["after"] and call["after"]["guard"] == guard for call in calls)
    out = "\n".join(lines(diff))
    assert "transitions (tests/cases/findings): " in out and f"(guard {guard})" in out


def test_the_edited_list_names_a_schema_file_too(tmp_path, rulebook):
    path = "schemas/finding-ledger.transition-facts.v1.schema.json"
    schema = copied(tmp_path) / path
    data = json.loads(schema.read_text(encoding="utf-8"))
    data["title"] = "(edited) " + data["title"]
    schema.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    diff = diff_of(rulebook, tmp_path)
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


def test_an_edit_no_case_tells_apart_is_a_warning_not_a_silent_zero(rulebook, tmp_path):
    """Issue 36, item 3: an injected field's rank lowered by one (on the bundled tables no fold payload
    changes): the edited row is counted against the values the fold asked, and when no case changed
    the diff says so at the row's line instead of a silent zero."""
    root = copied(tmp_path)
    merge = TableFile(root / "rules" / "merge.yaml")
    ranks = {code: out["rank"] for code, out in merge.at("sources", "outputs").items()}
    merge.write_scalar(("sources", "outputs", "system", "rank"), ranks["system"] - 1)
    diff = diff_of(rulebook, root)
    [row] = [r for r in diff["edited_rows"] if r["table"] == "merge.sources"]
    assert row["row"] == "system" and row["exercised"] > 0
    line = merge.source.where(("sources", "rows", [r["id"] for r in merge.at("sources", "rows")].index("system")))[0]
    warning = [t for t in lines(diff) if t.startswith("warning:")]
    expected = [f"warning: rules/merge.yaml:{line}: row system of merge.sources was edited; it holds on "
                f"{row['exercised']} of {row['values']} value(s) of tests/cases/fold, and no outcome "
                "changed: no case tells the edit from the base; add one where it matters"]
    assert warning == (expected if lines(diff)[-1].startswith("0 case(s) changed") else [])


def test_an_added_row_no_case_reaches_is_named_at_its_line(rulebook, tmp_path):
    root = copied(tmp_path)
    table = TableFile(root / "rules" / "support_reason.yaml")
    rows = table.at("rows")
    table.insert_after(("rows", len(rows) - 1), f"- id: {rows[0]['id']}.unreached\n  code: "
                       f"{rows[0].get('code', rows[0]['id'])}\n  when: {{field: metrics.candidate_count, gt: 999}}")
    line = table.source.where(("rows", len(rows)))[0]
    diff = diff_of(rulebook, root)
    reach = {r["row"]: r["exercised"] for r in diff["edited_rows"] if r["table"] == "support_reason"}
    assert reach == {f"{rows[0]['id']}.unreached": 0}
    assert any(t.startswith(f"warning: rules/support_reason.yaml:{line}: row {rows[0]['id']}.unreached of "
                            "support_reason was edited and no value of tests/cases/support_reason") for t in lines(diff))


def test_a_refusal_message_reworded_shows_in_the_fold_and_the_ledger_corpora(rulebook, tmp_path):
    """Issue 36, item 3: only the sentence of a refusal changes (the fold's DUPLICATE_ID, the
    finding ledger's not-allowed move): each refused case shows it, before and after."""
    root = copied(tmp_path)
    refusals = TableFile(root / "rules" / "evidence_refusals.yaml")
    refusals.prefix_value(("codes", "DUPLICATE_ID", "message", "zh"), "重复：")
    states = TableFile(root / "rules" / "finding_states.yaml")
    states.prefix_value(("messages", "not_via", "zh"), "不允许：")
    diff = diff_of(rulebook, root)
    refused = [c for c in diff["fold"]["changes"] if c["message"]]
    assert refused and all(c["message"]["after"].startswith("重复：") and c["error"] is None for c in refused)
    text = lines(diff)
    assert "    refusal message" in text
    calls = [call for c in diff["transitions"]["changes"] for call in c["calls"]]
    assert calls and all(call["after"]["message"].startswith("不允许：") for call in calls)
    assert not text[-1].startswith("0 case(s)")
