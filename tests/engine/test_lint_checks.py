"""The silent mistakes: each edit below loads (and used to lint clean), and lint must now name it
with its code at the line of the mistake. Every edit is made in a copy of the bundled tables, as
an analyst would make it."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from cli_inproc import run_cli
from groundrules import load_rulebook
from groundrules.analyst.lint import lint
from groundrules.analyst.lintchecks import operation_names
from groundrules.core.yamlparse import parse
from groundrules.core.yamlsrc import YamlProblem
from table_edits import TableFile

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def root(tables_copy) -> Path:
    return tables_copy


def edit(root: Path, file: str, old: str, new: str, count: int = 1) -> int:
    """Replace `old` by `new` in one table (exactly `count` times); the 1-based line of the first."""
    path = root / file
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == count, f"{old!r} occurs {text.count(old)} times in {file}"
    line = text[:text.index(old)].count("\n") + 1
    path.write_text(text.replace(old, new), encoding="utf-8")
    return line


def found(root: Path, code: str) -> list[tuple[str, int, str]]:
    report = lint(root)
    return [(p.file, p.line, p.severity) for p in report.problems if p.code == code]


def test_the_bundled_tables_lint_clean():
    assert [str(p) for p in lint(ROOT).problems] == []


def test_a_regex_that_backtracks_without_bound(root):
    line = edit(root, "locks/qq.yaml", "[0-9０-９]{4,}(?![0-9０-９])'", "(1|11)+$'")
    assert found(root, "regex-backtracking") == [("locks/qq.yaml", line, "error")]


def test_a_regex_in_a_condition_is_probed_too(root):
    line = edit(root, "rules/support_reason.yaml", "    when: {field: metrics.candidate_count, eq: 0}",
                "    when: {field: query, matches: '(a+)+$'}")
    assert found(root, "regex-backtracking") == [("rules/support_reason.yaml", line, "error")]


def test_a_typo_in_a_transitions_via(root):
    line = edit(root, "rules/finding_states.yaml", "via: [supersede_finding, revalidate_finding]",
                "via: [supersede_finding, revalidate_findng]")
    assert found(root, "unknown-operation") == [("rules/finding_states.yaml", line, "error")]
    [problem] = [p for p in lint(root).problems if p.code == "unknown-operation"]
    assert problem.hint == "did you mean 'revalidate_finding'?"


def test_operation_names_are_the_tool_registrys_tools():
    tools = {p.name[:-len(".schema.json")] for p in (ROOT / "schemas" / "tools").glob("*.schema.json")}
    assert operation_names(load_rulebook(ROOT)) == tools and "set_finding_state" in tools


def test_a_lock_kind_no_slot_consumes(root):
    line = edit(root, "locks/qq.yaml", "    kind: qq\n", "    kind: qq_number\n")
    assert found(root, "unconsumed-lock-kind") == [("locks/qq.yaml", line, "error")]


def test_a_row_that_repeats_an_earlier_one_under_first(root):
    text = (root / "rules" / "applicability.yaml").read_text(encoding="utf-8")
    first_row = text[text.index("  - id: incompatible"):text.index("  - id: needs_revalidation")]
    copy = first_row.replace("id: incompatible", "id: incompatible_again\n    code: incompatible", 1)
    edited = text.replace(first_row, first_row + copy)
    (root / "rules" / "applicability.yaml").write_text(edited, encoding="utf-8")
    when = edited.index("    when:", edited.index("id: incompatible_again"))
    assert found(root, "shadowed-row") == [("rules/applicability.yaml", edited[:when].count("\n") + 1, "error")]


def test_a_narrower_row_after_a_broader_one_under_first(root):
    line = edit(root, "rules/applicability.yaml", "    when: {field: match.differ, gt: 0}\n",
                "    when: {field: match.differ, gt: 0}\n", 1)
    # the row after it requires match.differ > 0 too, so `incompatible` always wins
    text = (root / "rules" / "applicability.yaml").read_text(encoding="utf-8")
    start = text.index("  - id: needs_revalidation")
    when = text.index("    when:", start)
    end = text.index("\n", when)
    (root / "rules" / "applicability.yaml").write_text(
        text[:when] + "    when: {all: [{field: match.differ, gt: 0}, {field: match.missing, eq: 0}]}" + text[end:],
        encoding="utf-8")
    assert found(root, "shadowed-row") == [("rules/applicability.yaml", text[:when].count("\n") + 1, "error")]
    assert line < text[:when].count("\n") + 1


def test_a_row_with_only_positive_examples_is_a_warning(root):
    text = (root / "rules" / "applicability.yaml").read_text(encoding="utf-8")
    negative = ("      - given: {match: {declared: 1, compared: 1, equal: 1, differ: 0, missing: 0}}\n"
                "        fires: false\n")
    assert negative in text
    (root / "rules" / "applicability.yaml").write_text(text.replace(negative, "", 1), encoding="utf-8")
    row_line = text[:text.index("  - id: incompatible")].count("\n") + 1
    assert found(root, "missing-negative-example") == [("rules/applicability.yaml", row_line, "warning")]


def test_a_failing_lock_example_fails_lint_too(root):
    old = 'start: 1, end: 12, normalized_value: "12345678"'
    text = (root / "locks" / "qq.yaml").read_text(encoding="utf-8")
    example = text.rfind("locks:", 0, text.index(old))              # the locks the example expects
    edit(root, "locks/qq.yaml", old, old.replace("12345678", "12345679"))
    assert found(root, "failing-example") == [("locks/qq.yaml", text[:example].count("\n") + 1, "error")]


def test_a_number_written_as_a_string_with_an_ordering_operator(root):
    line = edit(root, "rules/applicability.yaml", "{field: match.differ, gt: 0}", "{field: match.differ, gt: '0'}")
    report = lint(root)
    # the contract types match.differ as an integer, so this no longer even loads
    assert [(p.code, p.line) for p in report.problems] == [("literal-type-mismatch", line)]


def test_a_number_written_as_a_string_on_an_untyped_field(root):
    line = edit(root, "rules/support_reason.yaml", "    when: {field: metrics.candidate_count, eq: 0}",
                "    when: {field: stage, ge: '10'}")
    assert found(root, "number-as-string") == [("rules/support_reason.yaml", line, "error")]


def test_yaml_1_1_booleans_as_values(root):
    line = edit(root, "locks/qq.yaml", "    kind: qq\n", "    kind: qq\n    prefilter: [QQ, qq, 扣扣, on]\n")
    assert found(root, "yaml-boolean") == []          # a prefilter of true does not load
    edit(root, "locks/qq.yaml", "    prefilter: [QQ, qq, 扣扣, on]\n", "")
    line = edit(root, "rules/support_reason.yaml", "- {field: conflicts, empty: false}",
                "- {field: conflicts, empty: no}")
    assert found(root, "yaml-boolean") == [("rules/support_reason.yaml", line, "error")]


@pytest.mark.parametrize("text, line, column, words", [
    ("a:\n\tb: 1\n", 2, 1, "tab"),
    ("a: b: c\n", 1, 5, "second ': '"),
    ("rows:\n  - {id: a, when: {field: x, eq: 1}\n  - id: b\n", 2, 5, "'{' opened here is not closed"),
    ("x: 1\nrows: [a, b\n\n", 2, 7, "'[' opened here is not closed"),
    ("a: 'abc\nb: 2\n", 1, 4, "quote opened here"),
    ('a: "\\d+"\n', 1, 6, "single quotes"),
    ("a: 1\nb\nc: 2\n", 2, 1, "not 'key: value'"),
    ("a: *x\n", 1, 4, "names no anchor"),
])
def test_yaml_syntax_errors_in_plain_words_at_the_line_at_fault(text, line, column, words):
    with pytest.raises(YamlProblem) as exc:
        parse(text, "t.yaml")
    assert (exc.value.code, exc.value.line, exc.value.column) == ("yaml-syntax", line, column)
    assert words in exc.value.message


def test_the_lint_command_prints_each_silent_mistake_at_its_line(root):
    line = edit(root, "rules/finding_states.yaml", "via: [supersede_finding, revalidate_finding]",
                "via: [supersede_finding, revalidate_findng]")
    run = run_cli("--rules", root, "lint")
    out = run.stdout.decode("utf-8")
    assert run.returncode == 1 and "Traceback" not in out + run.stderr.decode("utf-8")
    assert re.search(rf"^rules/finding_states\.yaml:{line}:\d+: unknown-operation: ", out, re.MULTILINE), out


def _line(root: Path, file: str, needle: str, after: str = "") -> int:
    text = (root / file).read_text(encoding="utf-8")
    return text[:text.index(needle, text.index(after) if after else 0)].count("\n") + 1


def test_a_row_within_an_earlier_rows_in_list_is_shadowed(root):
    # `first_value` now also takes declined slots: `volunteered_after_decline` (eq: declined) is dead
    edit(root, "rules/merge.yaml", "      when: {field: current.status, eq: empty}\n",
         "      when: {field: current.status, in: [empty, declined]}\n")
    line = _line(root, "rules/merge.yaml", "      when: {field: current.status, eq: declined}")
    [problem] = [p for p in lint(root).problems if p.code == "shadowed-row"]
    assert (problem.file, problem.line) == ("rules/merge.yaml", line)
    assert "current.status eq \"declined\" lies within current.status in [\"empty\", \"declined\"]" in problem.message


@pytest.mark.parametrize("earlier, later, dead", [
    ("{field: current.rank, gt: 0}", "{field: current.rank, ge: 1}", True),
    ("{field: current.rank, ge: 2}", "{field: current.rank, gt: 2}", True),
    ("{field: current.rank, gt: 2}", "{field: current.rank, ge: 2}", False),
    ("{field: current.rank, exists: true}", "{field: current.rank, eq: 3}", True),
    ("{field: event.slot, ne: phone}", "{field: event.slot, in: [email, qq]}", True),
    ("{field: event.slot, ne: phone}", "{field: event.slot, in: [email, phone]}", False),
    ("{field: event.slot, not_in: [phone, qq]}", "{field: event.slot, eq: email}", True),
    ("{field: event.slot, in: [phone, qq]}", "{field: event.slot, ne: email}", False),
])
def test_shadowing_reads_ranges_and_membership(root, earlier, later, dead):
    edit(root, "rules/merge.yaml", "      when: {field: current.status, eq: empty}\n", f"      when: {earlier}\n")
    edit(root, "rules/merge.yaml", "      when: {field: current.status, eq: declined}\n", f"      when: {later}\n")
    line = _line(root, "rules/merge.yaml", f"      when: {later}")
    assert found(root, "shadowed-row") == ([("rules/merge.yaml", line, "error")] if dead else [])


def test_a_backtracking_regex_behind_a_literal_or_class_prefix(root):
    line = edit(root, "rules/support_reason.yaml", "    when: {field: metrics.candidate_count, eq: 0}",
                "    when: {field: query, matches: '转(\\d|\\d\\d)+$'}")
    assert found(root, "regex-backtracking") == [("rules/support_reason.yaml", line, "error")]
    edit(root, "rules/support_reason.yaml", "'转(\\d|\\d\\d)+$'", "'[A-Z](\\d|\\d\\d)+$'")
    assert found(root, "regex-backtracking") == [("rules/support_reason.yaml", line, "error")]


def _kinds(root: Path) -> dict:
    """lock table file -> the kinds of its patterns, read from the tables."""
    out = {}
    for path in sorted((root / "locks").glob("*.yaml")):
        out[f"locks/{path.name}"] = {p["kind"] for p in yaml.safe_load(path.read_text(encoding="utf-8"))["patterns"]}
    return out


def _lines_naming(root: Path, file: str, pattern: str) -> list[int]:
    text = (root / file).read_text(encoding="utf-8")
    return [n for n, line in enumerate(text.splitlines(), 1) if re.search(pattern, line)]


def test_a_renamed_lock_kind_leaves_dangling_references_at_their_lines(root):
    """Rename a kind that other lock tables' rules read and a slot lists: the slot is updated,
    the rules and their examples are not."""
    kinds = _kinds(root)
    readers = {f: _lines_naming(root, f, r"field: kind, (eq|in)") for f in kinds}
    old = next(k for f, ks in kinds.items() for k in ks
               if any(k in (root / g).read_text(encoding="utf-8") for g in readers if readers[g] and g != f))
    owner = next(f for f, ks in kinds.items() if old in ks)
    edit(root, owner, f"    kind: {old}\n", f"    kind: {old}_renamed\n",
         (root / owner).read_text(encoding="utf-8").count(f"    kind: {old}\n"))
    edit(root, "rules/merge.yaml", f"kinds: [{old}]", f"kinds: [{old}_renamed]")
    problems = [p for p in lint(root).problems if p.code == "dangling-reference"]
    expected = {(f, n) for f in kinds if f != owner
                for n in _lines_naming(root, f, rf"\b{old}\b") if not (root / f).read_text(
                    encoding="utf-8").splitlines()[n - 1].lstrip().startswith("#")}
    assert expected and {(p.file, p.line) for p in problems} == expected
    assert all(f"'{old}' names a lock kind" in p.message for p in problems)
    assert all(f"{old}_renamed" in p.hint for p in problems)


def test_a_slot_listing_a_kind_nothing_produces(root):
    line = edit(root, "rules/merge.yaml", "locks: {kinds: [phone]", "locks: {kinds: [phone, landline]")
    [problem] = [p for p in lint(root).problems if p.code == "dangling-reference"]
    assert (problem.file, problem.line, problem.key) == ("rules/merge.yaml", line, "slots.phone.locks.kinds[1]")


def test_a_renamed_state_leaves_the_vocabulary_and_the_warnings_table_dangling(root):
    book = load_rulebook(ROOT)
    machine, old = "epistemic", book.table("findings_vocabulary").acts_on["refute_state"]
    assert old in book.table("finding_states").machines[machine].states
    for f in ("rules/finding_states.yaml", "rules/finding_ledger_acceptance.yaml"):
        text = (root / f).read_text(encoding="utf-8")
        (root / f).write_text(re.sub(rf"\b{old}\b", "disproved", text), encoding="utf-8")
    got = {(p.file, p.line) for p in lint(root).problems if p.code == "dangling-reference"}
    kinds = TableFile(root / "rules" / "findings_vocabulary.yaml").source.positions
    event_kinds = {pos[0] for path, pos in kinds.items() if path[:1] == ("event_kinds",)}   # names, not states
    for f in ("rules/findings_vocabulary.yaml", "rules/findings_warnings.yaml"):
        lines = [n for n in _lines_naming(root, f, rf":\s*{old}\b")     # rules, examples' given, the vocabulary
                 if not (f.endswith("vocabulary.yaml") and n in event_kinds)]
        assert any("given:" in (root / f).read_text(encoding="utf-8").splitlines()[n - 1] for n in lines + [0]) \
            or f.endswith("vocabulary.yaml")
        assert lines and {(f, n) for n in lines} <= got, (f, lines, got)


def test_references_are_checked_only_on_a_whole_rulebook(root):
    edit(root, "rules/merge.yaml", "locks: {kinds: [phone]", "locks: {kinds: [phone, landline]")
    assert [p for p in lint(root, [root / "rules" / "merge.yaml"]).problems if p.code == "dangling-reference"] == []


def test_a_mistyped_guard_literal_is_reported_at_its_line_in_words(root):
    """(d') A typo in a guard's literal makes its positive example fail: the failure is at the
    literal's line, names the test and the value read, and dumps no Python dict."""
    book = load_rulebook(ROOT)
    text = (ROOT / "rules" / "finding_states.yaml").read_text(encoding="utf-8")

    def spelled(test) -> str | None:
        """How the test's first string literal is written in the table, when that text is unique."""
        literal = test.arg[0] if test.op == "in" else test.arg
        if not isinstance(literal, str) or len(literal) < 3:
            return None
        written = f"in: [{literal}," if test.op == "in" else f"{test.op}: {literal}}}"
        return written if text.count(written) == 1 else None
    guard_id, test, written = next((g_id, t, spelled(t)) for g_id, g in sorted(book.table("finding_states").guards.items())
                                   for t in _tests(g.when) if t.op in ("in", "eq") and spelled(t))
    literal = test.arg[0] if test.op == "in" else test.arg
    line = edit(root, "rules/finding_states.yaml", written, written.replace(literal, f"{literal[:2]}x{literal[2:]}", 1))
    failing = [p for p in lint(root).problems if p.code == "failing-example"]
    own = [p for p in failing if p.message.startswith(f"finding_states:{guard_id}:")]
    assert own and {p.line for p in own} == {line}                 # the guard's examples: at the literal
    assert all("{'" not in p.message and f'read "{literal}"' in p.message for p in own), own
    moves = [p for p in failing if p not in own]                   # whole-move examples: at the example,
    assert all(f"guard '{guard_id}' refused" in p.message for p in moves), moves   # naming the guard


def _tests(cond):
    if cond.kind == "test":
        yield cond
        inner = cond.inner()
        if inner is not None:
            yield from _tests(inner)
    for child in cond.children:
        yield from _tests(child)


@pytest.mark.parametrize("old, new, code", [
    ("    when: {field: metrics.candidate_count, eq: 0}", "    when: {field：metrics.candidate_count, eq: 0}",
     "full-width-punctuation"),
    ("    when: {field: metrics.candidate_count, eq: 0}", "    when:\n      field： metrics.candidate_count\n      eq: 0",
     "yaml-syntax"),
    ("hit_policy: output_order", "hit_policy： output_order", "yaml-syntax"),
])
def test_full_width_punctuation_is_named_at_its_line(root, old, new, code):
    line = edit(root, "rules/support_reason.yaml", old, new)
    at = line + new[:new.index("：")].count("\n")
    [problem] = lint(root).problems
    assert (problem.code, problem.file, problem.line) == (code, "rules/support_reason.yaml", at)
    assert "U+FF1A FULLWIDTH COLON" in problem.message and "'eq' is not a combinator" not in problem.message


def _before_attempt_rows(root: Path) -> list[tuple[TableFile, int, str]]:
    """(table, attempt row index, regex) of every attempt row whose `when` is one `before` match."""
    out = []
    for path in sorted((root / "locks").glob("*.yaml")):
        table = TableFile(path)
        for i, row in enumerate(table.data.get("attempt", ())):
            if row["when"].get("field") == "before" and "matches" in row["when"]:
                out.append((table, i, row["when"]["matches"]))
    return out


def test_an_attempt_rows_context_widened_to_anything_is_caught_at_its_line(root):
    """The analyst widens a label's `before` regex to `.*`: every digit run after any such word, a
    membership card number included, would be recorded as an invalid phone."""
    table, i, rx = _before_attempt_rows(root)[0]
    table.write_scalar(("attempt", i, "when", "matches"), rx[:rx.rindex("[^0-9]")] + ".*$")
    line = table.source.where(("attempt", i, "when", "matches"))[0]
    name = f"locks/{table.path.name}"
    assert found(root, "context-admits-digits") == [(name, line, "error")]
    table.write_scalar(("attempt", i, "when", "matches"), rx[:rx.rindex("[^0-9]")])     # no $: anywhere before
    assert found(root, "unanchored-context") == [(name, line, "error")]
    assert found(root, "context-admits-digits") == []



def test_a_placeholder_in_a_label_is_caught_at_its_line(root):
    """Labels are plain text: a template-looking label (with a filter that does not even exist) is
    shipped with its braces; lint says so where it is written."""
    table = TableFile(root / "rules" / "support_reason.yaml")
    code = next(iter(table.at("outputs")))
    table.write_scalar(("outputs", code, "label"), "缺失 {gaps|cnt} 个槽位")
    line = table.source.where(("outputs", code, "label"))[0]
    assert found(root, "label-placeholder") == [("rules/support_reason.yaml", line, "error")]


SHADOW_TABLE = """kind: decision_table
id: quote_topics
input: knowledge-gateway.v1.schema.json
hit_policy: first
outputs: {count_quoted: {label: 引用了题量}, shenlun_count: {label: 引用了申论题量}}
rows:
  - id: count_quoted
    when: {field: evidence, any: {field: quote, matches: 题量}}
  - id: shenlun_count
    when: {field: evidence, any: {all: [{field: quote, matches: 申论题量}, {field: id, exists: true}]}}
"""


def test_shadowing_through_a_list_quantifier_with_matches_is_caught_at_the_row(root):
    """A row whose `any` item test finds a longer literal than an earlier row's can never fire
    under `first`: lint says so at the later row, without waiting for an example to show it."""
    (root / "rules" / "quote_topics.yaml").write_text(SHADOW_TABLE, encoding="utf-8")
    line = SHADOW_TABLE.splitlines().index("  - id: shenlun_count") + 2
    assert found(root, "shadowed-row") == [("rules/quote_topics.yaml", line, "error")]
    (root / "rules" / "quote_topics.yaml").write_text(SHADOW_TABLE.replace("matches: 申论题量", "matches: 申论"),
                                                      encoding="utf-8")
    assert found(root, "shadowed-row") == []              # 申论 alone need not hold 题量
