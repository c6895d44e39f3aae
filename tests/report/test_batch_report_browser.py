"""`groundrules report --batch OUTPUT` in a real headless Chromium: each chart draws one bar per
count the summary holds, in its order, every bar's length to scale with the largest, a lock kind's
valid and invalid parts side by side; no label runs into a bar or out of its chart; nothing is
fetched; a screenshot is kept. Chromium as in test_report_browser.py (CI=true: never skipped)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from groundrules.analyst.report import batch_html
from groundrules.batch import formats, summary
from cli_inproc import run_cli
from test_report_browser import browser  # noqa: F401 - the module's Chromium, skipped or failed as it says

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts" / "report"     # git-ignored
sys.path.insert(0, str(ROOT / "tests" / "batch"))
from corpora import chats, contexts, lock_rows, write_jsonl  # noqa: E402

BARS_JS = """Array.from(document.querySelectorAll('figure.chart')).map(f => ({
  chart: f.dataset.chart,
  svg: f.querySelector('svg').getBoundingClientRect().toJSON(),
  bars: Array.from(f.querySelectorAll('g.bar')).map(g => ({
    name: g.dataset.name, count: +g.dataset.count,
    label: g.querySelector('text.label').getBoundingClientRect().toJSON(),
    number: g.querySelector('text.count').getBoundingClientRect().toJSON(),
    parts: Array.from(g.querySelectorAll('rect')).map(r => ({cls: r.getAttribute('class'),
                                                           box: r.getBoundingClientRect().toJSON()}))}))}))"""


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    """A batch over chats (locks) and one over contexts (support reasons), with a bad row each."""
    folder = tmp_path_factory.mktemp("batch-report")
    locks = write_jsonl(folder / "chats.jsonl", lock_rows(chats(400)) + ["not an object"])
    explained = write_jsonl(folder / "contexts.jsonl", [{"context": c} for c in contexts(96)] + [{"context": 1}])
    outs = []
    for tool, source in (("lock_message", locks), ("explain_support", explained)):
        out = folder / f"{source.stem}.answers.jsonl"
        assert run_cli("batch", tool, str(source), "--out", str(out), "--workers", "1").returncode == 0
        outs.append(out)
    return outs


def test_the_counts_are_what_the_answers_say(answers):
    locks, explained = answers
    counted = summary.summarize(formats.answers(str(locks)))
    rows = [json.loads(line) for line in locks.read_text(encoding="utf-8").splitlines()]
    every = [lock for r in rows if r["ok"] for lock in r["data"]["locks"]]
    assert counted["rows"] == len(rows) and counted["refused"] == sum(not r["ok"] for r in rows) >= 1
    assert {k["kind"]: k["valid"] + k["invalid"] for k in counted["locks"]["kinds"]} == \
        {kind: sum(lock["kind"] == kind for lock in every) for kind in {lock["kind"] for lock in every}}
    assert sum(r["count"] for r in counted["locks"]["invalid_reasons"]) == sum(not lock["valid"] for lock in every)
    counts = [p["count"] for p in counted["locks"]["patterns"]]
    assert counts == sorted(counts, reverse=True)
    reasons = summary.summarize(formats.answers(str(explained)))
    primaries = [json.loads(line)["data"]["primary"] for line in explained.read_text(encoding="utf-8").splitlines()
                 if json.loads(line)["ok"]]
    assert {p["code"]: p["count"] for p in reasons["primary"]} == {c: primaries.count(c) for c in set(primaries)}


def test_json_prints_the_counts_as_an_envelope(answers):
    done = run_cli("report", "--batch", str(answers[0]), "--json")
    assert done.returncode == 0
    envelope = json.loads(done.stdout)
    assert envelope["ok"] and envelope["data"] == summary.summarize(formats.answers(str(answers[0])))
    assert run_cli("report", "--batch", str(answers[0])).returncode == 1          # neither --out nor --json


@pytest.mark.parametrize("which", [0, 1], ids=["locks", "reasons"])
def test_every_chart_draws_its_counts_to_scale(browser, answers, tmp_path, which):
    out = tmp_path / "page"
    done = run_cli("report", "--batch", str(answers[which]), "--out", str(out))
    assert done.returncode == 0, done.stderr
    counted = summary.summarize(formats.answers(str(answers[which])))
    browser.open(out / "index.html", width=1400, height=1000)
    drawn = browser.evaluate(BARS_JS)
    expected = [(name, bars) for name, _, bars in batch_html.charts(counted) if bars]
    assert [d["chart"] for d in drawn] == [name for name, _ in expected]
    for chart, (name, bars) in zip(drawn, expected):
        assert [(b["name"], b["count"]) for b in chart["bars"]] == [(label, sum(n for _, n in parts))
                                                                    for label, parts in bars], name
        top = max(b["count"] for b in chart["bars"])
        widest = max(sum(p["box"]["width"] for p in b["parts"]) for b in chart["bars"])
        for bar, (_, parts) in zip(chart["bars"], bars):
            widths = [p["box"]["width"] for p in bar["parts"]]
            assert [p["cls"] for p in bar["parts"]] == [cls for cls, _ in parts]
            for width, (_, n) in zip(widths, parts):
                assert width == pytest.approx(widest * n / top, abs=1.0), (name, bar["name"])
            first = bar["parts"][0]["box"]
            assert bar["label"]["bottom"] <= first["top"] + 0.5, (name, bar["name"])     # the label is above its bar
            assert bar["number"]["left"] >= first["left"] + sum(widths) - 0.5
            for box in (bar["label"], bar["number"]):
                assert chart["svg"]["left"] - 0.5 <= box["left"] and box["right"] <= chart["svg"]["right"] + 0.5, \
                    (name, bar["name"])
    if which == 0:
        kinds = next(c for c in drawn if c["chart"] == "lock-kinds")
        assert any(len([p for p in b["parts"] if p["box"]["width"] > 0]) == 2 for b in kinds["bars"])
    assert browser.evaluate("performance.getEntriesByType('resource').length") == 0
    shot = browser.screenshot(ARTIFACTS / f"batch-{['locks', 'reasons'][which]}.png")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
