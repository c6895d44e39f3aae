"""Date tests in a decision table: against the now the caller passes, never the clock."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_inproc import run_cli
from groundrules import GroundrulesError, load_rulebook
from groundrules.core.dates import parse_instant
from groundrules.core.examples import run_all

ROOT = Path(__file__).resolve().parents[2]
NOW = "2024-05-01T08:00:00+08:00"
TABLE = {
    "kind": "decision_table", "id": "evidence_age", "hit_policy": "first",
    "outputs": {"stale": {}, "fresh": {}},
    "bind": {"stale_ids": {"from": "evidence", "where": {"field": "observed_at", "before": {"now": "-P1Y"}},
                           "pluck": "id"},
             "dates": {"from": "evidence", "pluck": "observed_at"}},
    "rows": [{"id": "stale", "when": {"field": "evidence", "any": {"field": "observed_at", "before": {"now": "-P1Y"}}},
              "output": {"detail": "older than a year: {stale_ids|join:,}; latest {dates|max}"},
              "examples": [{"given": {"evidence": [{"id": "e1", "observed_at": "2023-04-01"}]}, "now": NOW,
                            "fires": True, "output": {"detail": "older than a year: e1; latest 2023-04-01"}},
                           {"given": {"evidence": [{"id": "e1", "observed_at": "2024-04-01"}]}, "now": NOW,
                            "fires": False}]}],
    "default": {"code": "fresh"},
    "examples": [{"given": {"evidence": [{"id": "e1", "observed_at": "2020-01-01"}]}, "now": NOW, "fired": ["stale"]}],
}


@pytest.fixture
def table_file(tmp_path) -> Path:
    path = tmp_path / "evidence_age.yaml"
    path.write_text(json.dumps(TABLE, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture
def table(table_file):
    return load_rulebook(ROOT, files=[table_file]).table("evidence_age")


def test_the_callers_now_decides(table):
    value = {"evidence": [{"id": "e1", "observed_at": "2023-06-01"}, {"id": "e2", "observed_at": "2022-01-01"}]}
    stale = table.evaluate(value, now=NOW)
    assert stale.codes == ["stale"] and stale.fired[0].outputs["detail"] == "older than a year: e2; latest 2023-06-01"
    assert table.evaluate(value, now="2023-01-01T00:00:00Z").codes == ["fresh"]
    assert table.evaluate(value, now=NOW, trace=True).codes == ["stale"]


def test_without_now_the_table_refuses_rather_than_read_the_clock(table):
    with pytest.raises(GroundrulesError) as exc:
        table.evaluate({"evidence": [{"id": "e1", "observed_at": "2023-06-01"}]})
    assert exc.value.code == "NOW_REQUIRED" and "evidence_age" in exc.value.message


@pytest.mark.parametrize("now", ["2024-05-01", "2024-05-01T08:00:00", "tomorrow", 1714521600])
def test_a_now_without_an_offset_is_refused(table, now):
    with pytest.raises(GroundrulesError) as exc:
        table.evaluate({"evidence": []}, now=now)
    assert exc.value.code == "BAD_NOW"


def test_examples_carry_their_now(table_file):
    outcomes = run_all(load_rulebook(ROOT, files=[table_file]))
    assert outcomes and all(o.ok for o in outcomes), [o for o in outcomes if not o.ok]


def test_an_example_without_the_now_it_needs_fails_by_name(tmp_path):
    broken = json.loads(json.dumps(TABLE))
    del broken["rows"][0]["examples"][0]["now"]
    path = tmp_path / "t.yaml"
    path.write_text(json.dumps(broken, ensure_ascii=False), encoding="utf-8")
    [bad] = [o for o in run_all(load_rulebook(ROOT, files=[path])) if not o.ok]
    assert bad.id == "evidence_age:stale:1" and "NOW_REQUIRED" in bad.message


def test_eval_takes_now(table_file, tmp_path):
    root = tmp_path / "root"
    (root / "rules").mkdir(parents=True)
    (root / "schemas").symlink_to(ROOT / "schemas")
    (root / "rules" / "evidence_age.yaml").write_bytes(table_file.read_bytes())
    value = json.dumps({"evidence": [{"id": "e1", "observed_at": "2023-04-01"}]}).encode()
    run = ["--rules", str(root), "eval", "evidence_age", "-", "--trace"]
    done = run_cli(*run, "--now", NOW, stdin=value)
    assert done.returncode == 0 and "fired stale -> stale" in done.stdout.decode("utf-8")
    done = run_cli(*run, stdin=value)
    assert done.returncode == 1 and b"NOW_REQUIRED" in done.stdout and b"Traceback" not in done.stderr


# ------------------------------------------------------------------ one time parser (issue 23, item 8)

def timestamp_pattern():
    schema = json.loads((ROOT / "schemas" / "evidence.v1.schema.json").read_text("utf-8"))
    return re.compile(schema["$defs"]["timestamp"]["pattern"])


@pytest.mark.parametrize("text", ["2024-05-01T08:00:00+08:00", "2024-05-01T08:00Z", "2024-05-01T08:00:00.5Z",
                                  "2024-05-01T08:00:00.123456-03:30", "2024-02-29T23:59:59Z",
                                  "2024-02-30T08:00:00Z", "2024-13-01T08:00Z", "2024-05-01T24:00:00Z",
                                  "2024-05-01T08:00:00", "2024-05-01", "2024-05-01 08:00:00Z", "20240501T080000Z"])
def test_every_reader_of_times_reads_the_evidence_contracts_grammar(text):
    """The evidence contract's pattern, a real calendar date, and nothing else: what the fold, the
    decision log's `since` and the test clock accept alike."""
    from groundrules.decision_log import times
    from groundrules.findings import StepClock
    accepted = timestamp_pattern().fullmatch(text) is not None and _real(text)
    assert (parse_instant(text) is not None) == accepted
    assert (times.parse(text) is not None) == accepted
    try:
        StepClock(text)
        clock = True
    except ValueError:
        clock = False
    assert clock == accepted


def _real(text: str) -> bool:
    from datetime import datetime
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def test_the_step_clock_starts_at_the_instant_in_utc():
    from groundrules.findings import StepClock
    clock = StepClock("2025-01-01T08:00:00+08:00")
    assert [clock(), clock()] == ["2025-01-01T00:00:00Z", "2025-01-01T00:00:01Z"]
