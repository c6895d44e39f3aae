"""`groundrules report`: what the page says about each table, read back from its HTML."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

from cli_inproc import run_cli
from groundrules import load_rulebook, lock_messages
from groundrules.analyst import report
from groundrules.analyst.corpus import decision_tables
from groundrules.analyst.corpus_diff import corpus_diff
from page_reader import Page
from lock_edits import separator_edit
from table_edits import TableFile

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases"
CLI = [sys.executable, "-m", "groundrules.cli.main"]


@pytest.fixture(scope="module")
def page(rulebook) -> Page:
    return Page(report.render(rulebook, CASES))


def fired_by_corpus(table, folder: Path) -> dict:
    """row id -> number of cases in `folder` on which the table fires it (read with the engine)."""
    counts: dict = {}
    for path in sorted(folder.glob("*.json")):
        for f in table.evaluate(json.loads(path.read_text(encoding="utf-8"))).fired:
            counts[f.row.id] = counts.get(f.row.id, 0) + 1
    return counts


def copied(tmp_path: Path) -> Path:
    """A copy of the tables in `tmp_path`, to edit by what they hold (tests/table_edits.py)."""
    if not (tmp_path / "rules").exists():
        for d in ("rules", "locks", "schemas"):
            shutil.copytree(ROOT / d, tmp_path / d)
    return tmp_path


def support_reason(tmp_path: Path) -> TableFile:
    """The support_reason table of a copy of the tables, to edit by what it holds."""
    return TableFile(copied(tmp_path) / "rules" / "support_reason.yaml")


def adjacent_diagnostics(table) -> tuple[str, str]:
    """The first two diagnostic codes next to each other in the priority."""
    diagnostic = [c for c in table.priority if table.codes[c].get("role") == "diagnostic"]
    return next((a, b) for a, b in zip(table.priority, table.priority[1:]) if a in diagnostic and b in diagnostic)


def test_every_decision_table_is_a_grid_of_all_its_rows(rulebook, page):
    for ref in decision_tables(rulebook):
        section = page.sections[ref.id]
        assert "decision" in section["class"]
        expected = [r.id for r in ref.table.rows] + (["default"] if ref.table.default is not None else [])
        assert [r["id"] for r in section["rows"]] == expected, ref.id


def test_coverage_and_example_figures_match_the_corpus_and_the_examples(rulebook, page):
    table = rulebook.table("support_reason")
    folder = CASES / "support_reason"
    total = len(list(folder.glob("*.json")))
    counts = fired_by_corpus(table, folder)
    rows = {r["id"]: r for r in page.sections["support_reason"]["rows"]}
    for row in table.rows:
        assert rows[row.id]["cells"]["cov"] == f"{counts.get(row.id, 0)} / {total}", row.id
        assert ("uncovered" in rows[row.id]["class"]) == (row.id not in counts)
        assert rows[row.id]["cells"]["ex"] == f"✓ {len(row.examples)}/{len(row.examples)}"


def test_tables_without_a_corpus_say_so(rulebook, page):
    """A table no corpus runs (no case folder; not asked by the fold or the finding ledger's call
    sequences) says 'no corpus' on every row, as lint reports it; every other table is counted."""
    from groundrules.analyst.lint import lint
    counted = {table.id for table, _, _, cov in lint(ROOT, None, CASES).coverage if cov is not None}
    for ref in decision_tables(rulebook):
        rows = page.sections[ref.id]["rows"]
        assert bool((CASES / ref.id).is_dir() or ref.run_by) <= (ref.id in counted), ref.id
        assert all((r["cells"]["cov"] == "no corpus") == (ref.id not in counted) for r in rows), ref.id


def test_merge_tables_are_covered_by_the_fold_corpus(rulebook, page):
    policy = rulebook.of_kind("merge_policy")[0]
    payloads = sum(len(json.loads(p.read_text(encoding="utf-8"))) for p in sorted((CASES / "fold").glob("*.json")))
    rows = {r["id"]: r["attrs"]["cov"] for r in page.sections[policy.resolve.id]["rows"]}
    assert rows and all(cov["data-cases"] == str(payloads) for cov in rows.values())
    assert any(cov["data-fired"] != "0" for cov in rows.values())


def test_each_rows_coverage_is_lints_fired_and_held_counts(rulebook, page):
    """Issue 36, item 3: the page's 'N / M' is the cases a row fired on under the hit policy, as
    lint's 'fired by none' counts them, and its '+K held, taken before' makes up lint's 'held on'
    count: the cases the row's condition held on that a row before it won."""
    from groundrules.analyst.lint import lint
    compared = taken = 0
    for table, _, _, cov in lint(ROOT, None, CASES).coverage:
        if cov is None or table.id not in page.sections:
            continue
        rows = {r["id"]: r for r in page.sections[table.id]["rows"]}
        for row, held, fired in cov.rows:
            cell = rows[row.id]["attrs"]["cov"]
            assert (int(cell["data-fired"]), int(cell["data-taken"])) == (fired, held - fired), (table.id, row.id)
            assert rows[row.id]["cells"]["cov"].startswith(f"{fired} / {cov.cases}")
            compared += 1
            taken += held > fired
    assert compared > 50 and taken > 0        # the bundled fold corpus has rows taken by earlier ones


def test_transition_tables_are_drawn_and_lock_tables_list_their_patterns(rulebook, page):
    for table in rulebook.of_kind("transition_table"):
        section = page.sections[table.id]
        moves = [(t.id, src) for m in table.machines.values() for t in m.transitions for src in t.sources]
        assert len(section["transitions"]) == len(moves)
        assert sorted(s for s, _ in section["states"]) == sorted(s for m in table.machines.values() for s in m.states)
    for table in rulebook.of_kind("lock_patterns"):
        assert [p for p, _ in page.sections[table.id]["patterns"]] == [p.id for p in table.patterns]


def test_the_page_needs_no_network_and_no_other_file(rulebook):
    html = report.render(rulebook, CASES)
    assert all(ref.startswith("#") for ref in Page(html).refs)
    assert not re.search(r"<link\b|<img\b|@import|url\((?!#)|https?://", html)


@pytest.mark.extended
def test_same_tables_give_the_same_bytes_across_processes(tmp_path):
    outs = []
    for seed in ("1", "2"):
        out = tmp_path / seed
        run = subprocess.run(CLI + ["report", "--out", str(out)], capture_output=True, text=True, cwd=ROOT,
                             env=dict(os.environ, PYTHONHASHSEED=seed))
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith(f"wrote {out / 'index.html'}")
        outs.append((out / "index.html").read_bytes())
    assert outs[0] == outs[1]


def test_with_a_base_the_rows_and_cases_the_edit_changes_are_highlighted(tmp_path, rulebook):
    """Two diagnostic codes swapped, and the label of a third that fires on the corpus reworded."""
    old = rulebook.table("support_reason")
    a, b = adjacent_diagnostics(old)
    counts = fired_by_corpus(old, CASES / "support_reason")
    relabelled = next(r.code for r in old.rows if r.code not in (a, b) and counts.get(r.id))
    label = old.codes[relabelled]["label"]
    file = support_reason(tmp_path)
    file.swap_items(("priority",), old.priority.index(a), old.priority.index(b))
    file.prefix_value(("outputs", relabelled, "label"), "改写：")
    after = load_rulebook(tmp_path)
    section = Page(report.render(after, CASES, rulebook)).sections["support_reason"]
    table = after.table("support_reason")
    touched = {a, b, relabelled}
    assert {r["id"] for r in section["rows"] if "changed" in r["class"]} == \
        {r.id for r in table.rows if r.code in touched}
    diff = corpus_diff(rulebook, after, CASES)
    changed = next(t for t in diff["decision_tables"] if t["table"] == "support_reason")["changes"]
    assert changed and all(f"\n  {c['case']}\n" in "\n" + section["changes"] for c in changed)
    assert f"- {label}" in section["changes"] and f"+ 改写：{label}" in section["changes"]


def test_with_a_base_edited_moves_and_patterns_are_highlighted(tmp_path, rulebook):
    """One more operation allowed to make one move; a separator dropped from a lock table."""
    root = copied(tmp_path)
    states = TableFile(root / rulebook.table("finding_states").file)
    machine, index, move = next((m, i, t) for m, raw in states.at("machines").items()
                                for i, t in enumerate(raw["transitions"]) if t.get("via"))
    states.add_item(("machines", machine, "transitions", index, "via"), "withdraw_finding")
    edit = separator_edit(rulebook, root)         # a separator a corpus lock's quote holds, dropped
    html = report.render(load_rulebook(root), CASES, rulebook)
    page = Page(html)
    machines = page.sections["finding_states"]["transitions"]
    assert {t for t, cls in machines if "changed" in cls} == {move["id"]}
    assert edit.lock["pattern"] in edit.patterns
    assert {p for p, cls in page.sections[edit.table]["patterns"] if "changed" in cls} == edit.patterns
    at = edit.lock["locator"]
    shown = unescape(html)
    quote = json.dumps(edit.lock["quote"], ensure_ascii=False)
    assert edit.case in shown and f'- {edit.lock["pattern"]} [{at["start"]}:{at["end"]}] {quote}' in shown


def test_the_command_refuses_a_file_as_out_and_a_bad_base_in_one_line(tmp_path):
    afile = tmp_path / "x"
    afile.write_text("", encoding="utf-8")
    for args in (["--out", str(afile)], ["--out", str(tmp_path / "o"), "--base", "no-such-rev"]):
        run = run_cli("report", *args, cwd=ROOT)
        err = run.stderr.decode("utf-8")
        assert run.returncode == 1 and "Traceback" not in err and len(err.splitlines()) == 1
    assert not (tmp_path / "o" / "index.html").exists()


STALE_ROW = """- id: CODE
  description: evidence older than its slot allows
  when: {field: metrics.evidence_count, gt: 99}
  output: {detail: 证据已过期}
  examples:
    - {given: {metrics: {evidence_count: 100}}, fires: true, output: {detail: 证据已过期}}
    - {given: {metrics: {evidence_count: 1}}, fires: false}"""


def test_inserting_a_code_into_priority_marks_only_its_row(tmp_path, rulebook):
    """The analyst's edit: a reason code placed between two diagnostic codes. The codes after it
    drop a rank, but no two codes swap, so no row but the new one decides anything differently;
    a description added to the row of the code before it is a note, no change."""
    old = rulebook.table("support_reason")
    a, b = adjacent_diagnostics(old)
    new = f"{a}_inserted"
    assert new not in old.codes
    file = support_reason(tmp_path)
    file.insert_after(("outputs", a), f"{new}: {{label: 证据已过期, role: diagnostic}}")
    file.add_item(("priority",), new, after=old.priority.index(a))
    noted = next(i for i, r in enumerate(old.rows) if r.code == a)
    file.insert_after(("rows", noted), STALE_ROW.replace("CODE", new))
    if "description" not in file.at("rows", noted):
        file.insert_after(("rows", noted, "id"), "description: a note that changes no decision")
    else:
        file.prefix_value(("rows", noted, "description"), "note: ")
    schema = tmp_path / "schemas" / "knowledge-gateway.v1.schema.json"
    contract = json.loads(schema.read_text(encoding="utf-8"))
    enum = contract["$defs"]["reason_code"]["enum"]
    enum.insert(enum.index(a) + 1, new)
    schema.write_text(json.dumps(contract, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    after = load_rulebook(tmp_path)
    table = after.table("support_reason")
    shifted = {r.id for r in table.rows if r.code in old.priority
               and table.priority.index(r.code) != old.priority.index(r.code)}
    assert shifted == {r.id for r in old.rows if old.priority.index(r.code) > old.priority.index(a)} and shifted
    rows = {r["id"]: r for r in Page(report.render(after, CASES, rulebook)).sections["support_reason"]["rows"]}
    assert {i for i, r in rows.items() if "changed" in r["class"]} == {new}
    assert "new row" in rows[new]["cells"]["rid"]
    noted_id = old.rows[noted].id
    assert "description edited" in rows[noted_id]["cells"]["rid"] and "changed" not in rows[noted_id]["class"]


def test_swapping_two_codes_says_which_way_each_moved(tmp_path, rulebook):
    old = rulebook.table("support_reason")
    a, b = adjacent_diagnostics(old)
    support_reason(tmp_path).swap_items(("priority",), old.priority.index(a), old.priority.index(b))
    rows = {r["id"]: r for r in Page(report.render(load_rulebook(tmp_path), CASES, rulebook)).sections["support_reason"]["rows"]}
    row_of = {code: next(r.id for r in old.rows if r.code == code) for code in (a, b)}
    assert f"priority: now below {b}" in rows[row_of[a]]["cells"]["rid"]
    assert f"priority: now above {a}" in rows[row_of[b]]["cells"]["rid"]


def test_lock_tables_show_their_context_rules_in_order_with_their_examples(rulebook, page):
    for table in rulebook.of_kind("lock_patterns"):
        rules = page.sections[table.id]["items"].get("rule", [])
        assert [r["id"] for r in rules] == [f"{row.section}.{row.id}" for row in table.rows], table.id
        for r, row in zip(rules, table.rows):
            assert f"{len(row.examples)}/{len(row.examples)}" in r["text"]


def rule_counts(rulebook, folder: Path, conversations: dict) -> dict:
    """'<table>:<section>.<rule>' -> the page's 'holds in' text, over `conversations` (name -> texts)."""
    (folder / "locks").mkdir(parents=True)
    for name, texts in conversations.items():
        (folder / "locks" / f"{name}.json").write_text(json.dumps({"messages": [
            {"id": f"m{n}", "role": "user", "content": t} for n, t in enumerate(texts, 1)]}, ensure_ascii=False),
            encoding="utf-8")
    page = Page(report.render(rulebook, folder))
    return {f"{t.id}:{r['id']}": r["text"] for t in rulebook.of_kind("lock_patterns")
            for r in page.sections[t.id]["items"].get("rule", [])}


def test_a_rules_coverage_counts_the_conversations_it_held_in(tmp_path, rulebook):
    """A drop rule's own example (one where it drops every candidate) as one conversation, and a
    conversation with nothing to lock: the rule held in one of the two; no rule in more than one;
    over the plain conversation alone, in none."""
    table, row, example = next((t, r, ex) for t in rulebook.of_kind("lock_patterns") for r in t.rows
                               if r.section == "drop" for ex in r.examples[:1] if ex.get("locks") == [])
    plain = "好的，谢谢"
    assert not lock_messages([{"id": "m1", "role": "user", "content": plain}], rulebook)
    counts = rule_counts(rulebook, tmp_path / "two", {"example": [example["text"]], "plain": [plain]})
    assert "holds in 1 of 2 conversation(s)" in counts[f"{table.id}:{row.section}.{row.id}"]
    assert counts and all("holds in 0 of 2" in text or "holds in 1 of 2" in text for text in counts.values())
    alone = rule_counts(rulebook, tmp_path / "one", {"plain": [plain]})
    assert alone.keys() == counts.keys() and all("holds in 0 of 1 conversation(s)" in t for t in alone.values())


def test_merge_policies_show_every_slot_with_the_patterns_that_back_it(rulebook, page):
    producers: dict = {}
    for table in rulebook.of_kind("lock_patterns"):
        for p in table.patterns:
            producers.setdefault(p.kind, []).append(p.id)
    for policy in rulebook.of_kind("merge_policy"):
        items = page.sections[policy.id]["items"]
        assert [s["id"] for s in items["slot"]] == list(policy.slots)
        assert [e["id"] for e in items["event"]] == list(policy.ops)
        for row, slot in zip(items["slot"], policy.slots.values()):
            for kind in slot.lock_kinds:
                assert all(pid in row["text"] for pid in producers[kind]) and producers[kind], slot.id


def test_a_slot_whose_lock_kind_nothing_produces_is_flagged(tmp_path, rulebook):
    """The patterns of one lock table renamed to another kind: a slot that needs their kind is flagged."""
    produced: dict = {}
    for table in rulebook.of_kind("lock_patterns"):
        for p in table.patterns:
            produced.setdefault(p.kind, set()).add(table.id)
    policy = rulebook.of_kind("merge_policy")[0]
    needing = [s for s in policy.slots.values() if s.lock_kinds]
    kind = next(k for s in needing for k in s.lock_kinds if len(produced.get(k, ())) == 1)
    [owner] = produced[kind]
    root = copied(tmp_path)
    file = TableFile(root / rulebook.table(owner).file)
    for i, p in enumerate(file.at("patterns")):
        if p.get("kind") == kind:
            file.write_scalar(("patterns", i, "kind"), f"{kind}_renamed")
    slots = {s["id"]: s for s in Page(report.render(load_rulebook(root), CASES, rulebook)).sections[policy.id]["items"]["slot"]}
    for slot in needing:
        flagged = f"no lock pattern produces kind {kind}" in slots[slot.id]["text"]
        assert flagged == (kind in slot.lock_kinds), slot.id
        assert ("no lock pattern produces" in slots[slot.id]["text"]) == flagged, slot.id
    assert any(kind in slot.lock_kinds for slot in needing)


def test_each_move_names_the_roles_the_role_table_lets_take_it(rulebook):
    """The table column for every move; the diagram's label only where not every role may."""
    html = report.render(rulebook, CASES)
    roles = rulebook.of_kind("role_table")[0]
    narrowed = 0
    for table in rulebook.of_kind("transition_table"):
        for m in table.machines.values():
            for t in m.transitions:
                granted = set(roles.roles) if not t.via else {r for tool in t.via for r in roles.grants[tool]}
                expected = [r for r in roles.roles if r in granted]
                row = re.search(rf'<tr[^>]*data-transition="{re.escape(t.id)}">.*?data-roles="([^"]*)"', html)
                assert row[1].split() == expected, t.id
                labels = re.findall(rf'<g class="[^"]*" data-transition="{re.escape(t.id)}".*?</g>', html)
                assert len(labels) == len(t.sources)
                for g in labels:
                    shown = re.findall(r'<tspan class="roles"[^>]*>([^<]*)</tspan>', g)
                    assert shown == ([] if expected == list(roles.roles) else [", ".join(expected)]), t.id
                    narrowed += bool(shown)
    assert narrowed          # the bundled tables have reviewer-only moves (approve_rule, reject_rule)


def test_a_transitions_own_roles_narrow_what_its_operations_allow(rulebook):
    from groundrules.analyst.report.machine_html import may_take
    roles = rulebook.of_kind("role_table")[0]
    moves = [t for table in rulebook.of_kind("transition_table") for m in table.machines.values() for t in m.transitions]
    free = next(t for t in moves if not t.via)            # any operation may make it
    assert may_take(free, (), roles)[0] == tuple(roles.roles)
    for role in roles.roles:
        assert may_take(free, (role,), roles)[0] == (role,)
    nobody = "nobody"
    assert nobody not in roles.roles
    assert all(may_take(t, (nobody,), roles)[0] == () for t in moves)


def test_every_anchor_the_page_links_to_exists(page):
    targets = [ref[1:] for ref in page.refs if ref.startswith("#") and ref != "#"]
    assert targets and set(targets) <= set(page.ids)
    assert len(page.ids) == len(set(page.ids))


def test_report_writes_report_index_html_by_default_readable_by_others(tmp_path):
    """`groundrules report` with no option writes report/index.html, as the docs say, with mode 0644
    whatever mkstemp made (issue 32, item 6)."""
    for folder in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    run = run_cli("--rules", str(tmp_path), "report", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    page = tmp_path / "report" / "index.html"
    assert page.stat().st_mode & 0o777 == 0o644
def test_a_state_and_a_merge_edit_are_counted_in_the_header_with_the_changed_calls(rulebook, tmp_path):
    """Issue 36, item 3: the header counts what a transition and a merge edit change (not only
    decision rows) and the cases changed over every corpus, as the diff does; the page shows the
    call sequences the edit changes, and the edited rows no case tells apart."""
    root = copied(tmp_path)
    states = TableFile(root / "rules" / "finding_states.yaml")
    states.prefix_value(("messages", "not_via"), "不允许：")
    merge = TableFile(root / "rules" / "merge.yaml")
    ranks = {code: out["rank"] for code, out in merge.at("sources", "outputs").items()}
    merge.write_scalar(("sources", "outputs", "system", "rank"), ranks["system"] - 1)
    after = load_rulebook(root, cache=False)
    diff = corpus_diff(rulebook, after, CASES)
    assert diff["transitions"]["changes"]
    text = unescape(re.sub(r"<[^>]+>", "", report.render(after, CASES, base=rulebook)))
    assert f"{_total(diff)} case(s) changed over the corpora" in text
    assert "1 row(s) changed" in text                       # merge.sources' system row: its rank
    assert "call sequences this edit changes" in text and "不允许：" in text
    # the merge edit alone (on the bundled tables it changes no case): the page says so at the row
    text = (root / "rules" / "finding_states.yaml").read_text("utf-8").replace("不允许：", "", 1)
    (root / "rules" / "finding_states.yaml").write_text(text, encoding="utf-8")
    after = load_rulebook(root, cache=False)
    alone = unescape(re.sub(r"<[^>]+>", "", report.render(after, CASES, base=rulebook)))
    total = _total(corpus_diff(rulebook, after, CASES))
    assert f"{total} case(s) changed over the corpora" in alone
    assert ("row system of merge.sources was edited" in alone) == (total == 0)


def _total(diff: dict) -> int:
    return sum(len(t["changes"]) for t in diff["decision_tables"]) + sum(
        len(diff[p]["changes"]) for p in ("locks", "chat", "fold", "transitions"))


def test_lock_coverage_counts_the_conversations_lint_counts(rulebook):
    """Issue 36, item 3: per pattern, the report's 'locks something in N of M' is lint's 'locked in N'
    over the same M conversations (the lock corpus and the chat corpora)."""
    from groundrules.analyst.lint import lint
    said = {}
    for cov in lint(ROOT, None, CASES).kind_coverage:
        for what, item, _, counts in cov.items:
            if what == "pattern":
                said[item if item.startswith(f"{cov.table}.") else f"{cov.table}.{item}"] = (counts["locked in"], cov.cases)
    text = unescape(re.sub(r"<[^>]+>", " ", report.render(rulebook, CASES)))
    for table in rulebook.of_kind("lock_patterns"):
        for p in table.patterns:
            n, m = said[p.id]
            assert f"locks something in {n} of {m} conversation(s)" in text, p.id
