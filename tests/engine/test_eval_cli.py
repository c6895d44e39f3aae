"""`groundrules eval`, `test --table/--row` and lint's coverage: for every decision table, the ones
inside the merge policy included."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from cli_inproc import run_cli
from said import said
from groundrules import load_rulebook

ROOT = Path(__file__).resolve().parents[2]
CONTEXT = ROOT / "tests" / "cases" / "support_reason" / "insufficient-many-reasons-in-order.json"


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    done = run_cli(*args, stdin=stdin)
    assert b"Traceback" not in done.stdout + done.stderr
    return done


@pytest.fixture(scope="module")
def book():
    return load_rulebook(ROOT)


def _line_of(file: str, needle: str) -> int:
    text = (ROOT / file).read_text(encoding="utf-8")
    return text[:text.index(needle)].count("\n") + 1


def test_eval_names_each_fired_row_at_its_line(book):
    out = run("eval", "support_reason", str(CONTEXT)).stdout.decode("utf-8")
    fired = book.table("support_reason").evaluate(json.loads(CONTEXT.read_text(encoding="utf-8"))).fired
    for f in fired:
        line = _line_of("rules/support_reason.yaml", f"  - id: {f.row.id}\n")
        assert re.search(rf"^rules/support_reason\.yaml:{line}:\d+: fired {re.escape(f.row.id)} -> {f.code}$",
                         out, re.MULTILINE), out
    assert f"{len(fired)} row(s) fired" in out


def test_trace_names_the_failing_test_its_line_and_what_it_read():
    out = run("eval", "support_reason", "--trace", str(CONTEXT)).stdout.decode("utf-8")
    row_line = _line_of("rules/support_reason.yaml", "  - id: no_candidates\n")
    test_line = _line_of("rules/support_reason.yaml", "    when: {field: metrics.candidate_count, eq: 0}")
    assert f"rules/support_reason.yaml:{row_line}:5: not fired no_candidates" in out
    candidate_count = json.loads(CONTEXT.read_text(encoding="utf-8"))["metrics"]["candidate_count"]
    assert re.search(rf"rules/support_reason\.yaml:{test_line}:\d+: metrics\.candidate_count eq 0: "
                     rf"read {candidate_count}$", out, re.MULTILINE), out
    assert "skipped engine_degraded.none_answered: code 'engine_degraded' already fired" in out


def test_trace_of_a_list_operator_names_the_item_that_decided(tmp_path):
    context = json.loads(CONTEXT.read_text(encoding="utf-8"))
    context["missing"] = [{"slot": "a", "reason": "not_covered"}, {"slot": "b", "reason": "no_evidence"}]
    path = tmp_path / "ctx.json"
    path.write_text(json.dumps(context, ensure_ascii=False), encoding="utf-8")
    out = run("eval", "support_reason", "--trace", str(path)).stdout.decode("utf-8")
    block = out[out.index("not fired recorded_unresolved"):]
    assert "missing any" in block.splitlines()[1]
    assert "item [0] of 2 failed:" in block and "reason eq recorded_unresolved: read not_covered" in block
    assert "item [1] of 2 failed:" in block and "read no_evidence" in block


def test_eval_reaches_a_table_inside_the_merge_policy(book, tmp_path):
    policy = yaml.safe_load((ROOT / "rules" / "merge.yaml").read_text(encoding="utf-8"))
    given = policy["resolve"]["rows"][0]["examples"][0]["given"]
    (tmp_path / "facts.json").write_text(json.dumps(given, ensure_ascii=False), encoding="utf-8")
    done = run("eval", "merge.resolve", "--json", str(tmp_path / "facts.json"))
    envelope = json.loads(done.stdout)
    resolve = next(t for t, _, _ in book.decision_tables() if t.id == "merge.resolve")
    assert [f["row"] for f in envelope["data"]["fired"]] == [f.row.id for f in resolve.evaluate(given).fired]
    assert all(f["at"].startswith("rules/merge.yaml:") for f in envelope["data"]["fired"])


def test_eval_refuses_an_unknown_table_with_a_did_you_mean():
    done = run("eval", "suport_reason", str(CONTEXT))
    assert done.returncode == 1 and said("usage.eval_no_table_close", table="suport_reason",
                                         closest="support_reason") in done.stderr.decode("utf-8")


def test_eval_reports_a_hit_policy_violation(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(ROOT / "schemas", root / "schemas")
    (root / "rules").mkdir()
    (root / "rules" / "u.yaml").write_text(
        "kind: decision_table\nid: u\nhit_policy: unique\noutputs: {a: {}, b: {}}\n"
        "rows:\n  - {id: a, when: {field: n, ge: 1}}\n  - {id: b, when: {field: n, ge: 2}}\n", encoding="utf-8")
    done = run("--rules", str(root), "eval", "u", "-", stdin=b'{"n": 3}')
    assert done.returncode == 1 and b"u: HIT_POLICY_VIOLATION" in done.stdout


def test_test_runs_one_table_or_one_row(book):
    from groundrules.core.examples import run_all
    everything = run_all(book)
    only = run("test", "--table", "merge.resolve", "-v").stdout.decode("utf-8")
    expected = [o for o in everything if o.id.startswith("merge.resolve:")]
    assert f"{len(expected)} passed, 0 failed" in only and len(expected) > 1
    row = expected[0].id.split(":")[1]
    one = run("test", "--table", "merge.resolve", "--row", row, "-v").stdout.decode("utf-8")
    assert f"{sum(o.id.split(':')[1] == row for o in expected)} passed, 0 failed" in one
    assert all(f" merge.resolve:{row}:" in line for line in one.splitlines()[:-1])


def test_test_refuses_an_unknown_table_or_row():
    done = run("--lang", "en", "test", "--table", "merge.resolv")
    assert done.returncode == 1 and said("usage.test_no_table_close", "en", table="merge.resolv",
                                         closest="merge.resolve") in done.stderr.decode("utf-8")
    done = run("test", "--table", "support_reason", "--row", "no_candidate")
    assert done.returncode == 1 and said("usage.test_no_row_close", row="no_candidate", table="support_reason",
                                         closest="no_candidates") in done.stderr.decode("utf-8")


def test_lint_covers_every_decision_table(book):
    from groundrules.analyst.lint import lint
    out = run("lint").stdout.decode("utf-8")
    covered = {t.id: c for t, _, _, c in lint(ROOT, cases=ROOT / "tests" / "cases").coverage}
    for table, _, _ in book.decision_tables():
        assert re.search(rf"^coverage: {re.escape(table.id)}: ", out, re.MULTILINE), table.id
        if covered[table.id] is None:
            assert f"coverage: {table.id}: no case corpus" in out
        else:
            assert f"coverage: {table.id}: no case corpus" not in out


def test_lint_covers_every_table_the_report_covers(book):
    """Lint's coverage runs the corpora the report runs: the merge tables over the fold corpus, and
    every row the report saw fire holds on some case in lint's count too."""
    from groundrules.analyst.lint import lint
    from groundrules.analyst.report.coverage import decision_coverage
    cases = ROOT / "tests" / "cases"
    report = lint(ROOT, cases=cases)
    covered = {t.id: c for t, _, _, c in report.coverage}
    for table_id, seen in decision_coverage(book, cases).items():
        mine = covered[table_id]
        assert mine is not None and mine.cases == seen.cases, table_id
        held = {row.id: n for row, n, *_ in mine.rows}      # (row, held on, fired on)
        assert all(held[row] > 0 for row in seen.fired if row != "default"), table_id
    kinds = {c.table: c for c in report.kind_coverage}
    assert set(kinds) == {t for t, k in book.kinds.items() if k in ("lock_patterns", "transition_table")}
    for c in kinds.values():
        assert c.cases > 0 and c.items
    out = run("lint").stdout.decode("utf-8")
    assert "coverage: merge.resolve: no case corpus" not in out
    assert re.search(r"^coverage: finding_states: rules/finding_states\.yaml:\d+:\d+: transition ", out, re.MULTILINE)


def test_lint_names_a_test_that_never_fails_over_the_corpus(book, tmp_path):
    """A corpus of nothing but the first status row's positive examples: each test of that row held
    on every case, so each is reported at its line as never failed."""
    root = tmp_path / "root"
    for d in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / d, root / d)
    cases = root / "tests" / "cases" / "merge.status"
    cases.mkdir(parents=True)
    status, source, prefix = next(t for t in book.decision_tables() if t[0].id == "merge.status")
    row = min(status.rows, key=lambda r: r.index)
    positives = [ex["given"] for ex in row.examples if ex["fires"]]
    for n, given in enumerate(positives):
        (cases / f"{n}.json").write_text(json.dumps(given, ensure_ascii=False), encoding="utf-8")
    out = run("--rules", str(root), "lint").stdout.decode("utf-8")
    from groundrules.core.decide import tests_of
    for test in tests_of(row.when):
        line, col = source.where(prefix + test.where)
        assert (f"coverage: merge.status: rules/merge.yaml:{line}:{col}: row {row.id}: test {test.field} "
                f"{test.op} never failed over {len(positives)} case(s)") in out, out
