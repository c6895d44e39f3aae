"""The report in a real headless Chromium: the support_reason grid renders every row with its
coverage, the state diagrams draw, the filter works, nothing is fetched; a screenshot is kept.

Chromium is Debian's `chromium`, which `.ci/run` installs where missing. In CI (CI=true) a missing
browser fails this test; elsewhere it is skipped with the reason."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from groundrules import report
from cdp import Browser, chromium

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases"
ARTIFACTS = ROOT / "tests" / "artifacts" / "report"     # git-ignored

ROWS_JS = """Array.from(document.querySelectorAll('#dt-support_reason table.grid tr.row')).map(tr => {
  const box = tr.getBoundingClientRect();
  const cov = tr.querySelector('td.cov');
  return {id: tr.dataset.row, height: box.height, width: box.width,
          shown: getComputedStyle(tr).display !== 'none' && getComputedStyle(tr).visibility !== 'hidden',
          coverage: cov.querySelector('.num') ? cov.querySelector('.num').innerText : cov.innerText,
          bar: cov.querySelector('.bar i') ? cov.querySelector('.bar i').getBoundingClientRect().width : null};
})"""

DIAGRAMS_JS = """Array.from(document.querySelectorAll('svg.machine')).map(svg => ({
  states: Array.from(svg.querySelectorAll('g.state')).filter(g => g.getBBox().width > 0).length,
  moves: Array.from(svg.querySelectorAll('g.move path')).filter(p => p.getTotalLength() > 0).length}))"""


@pytest.fixture(scope="module")
def browser():
    binary = chromium()
    if binary is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed; .ci/run installs it (apt-get install -y chromium)")
        pytest.skip("chromium is not installed (apt-get install -y chromium); CI runs this test")
    with Browser(binary) as b:
        yield b


@pytest.fixture(scope="module")
def opened(browser, rulebook, tmp_path_factory):
    out = report.write(tmp_path_factory.mktemp("report"), report.render(rulebook, CASES))
    browser.open(out)
    return browser


def test_the_support_reason_grid_renders_every_row_with_its_coverage(opened, rulebook):
    table = rulebook.table("support_reason")
    cases = sorted((CASES / "support_reason").glob("*.json"))
    fired: dict = {}
    for path in cases:
        for f in table.evaluate(json.loads(path.read_text(encoding="utf-8"))).fired:
            fired[f.row.id] = fired.get(f.row.id, 0) + 1
    rows = opened.evaluate(ROWS_JS)
    assert [r["id"] for r in rows] == [r.id for r in table.rows] + ["default"]
    for r in rows:
        assert r["shown"] and r["height"] > 0 and r["width"] > 0, r["id"]
        assert r["coverage"] == f"{fired.get(r['id'], 0)} / {len(cases)}", r["id"]
        assert (r["bar"] > 0) == (fired.get(r["id"], 0) > 0), r["id"]


def test_state_diagrams_draw_every_state_and_move(opened, rulebook):
    machines = [m for t in rulebook.of_kind("transition_table") for m in t.machines.values()]
    drawn = opened.evaluate(DIAGRAMS_JS)
    assert drawn == [{"states": len(m.states), "moves": sum(len(t.sources) for t in m.transitions)}
                     for m in machines]


def test_the_uncovered_filter_leaves_only_rows_no_case_fires(opened):
    before = opened.evaluate("document.querySelectorAll('table.grid tr.row.uncovered').length")
    opened.evaluate("document.getElementById('only-uncovered').click()")
    visible = opened.evaluate("Array.from(document.querySelectorAll('table.grid tr.row'))"
                              ".filter(tr => tr.getBoundingClientRect().height > 0)"
                              ".map(tr => tr.classList.contains('uncovered'))")
    opened.evaluate("document.getElementById('only-uncovered').click()")
    assert len(visible) == before and all(visible)


def test_nothing_is_fetched_and_a_screenshot_is_kept(opened):
    assert opened.evaluate("performance.getEntriesByType('resource').length") == 0
    box = opened.evaluate("""(() => { const s = document.getElementById('dt-support_reason');
        const r = s.getBoundingClientRect();
        return {x: r.left + scrollX, y: Math.max(0, r.top + scrollY - 40), width: r.width, height: r.height + 40}; })()""")
    shot = opened.screenshot(ARTIFACTS / "support_reason.png", box)
    whole = opened.screenshot(ARTIFACTS / "report.png")
    print(f"\nscreenshots: {shot} {whole}")
    for path in (shot, whole):
        data = path.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
