"""The report in a real headless Chromium: the support_reason grid renders every row with its
coverage, the state diagrams draw with no label over a line, a state or another label, nothing
leaves its section at 1,400 px (a wide grid scrolls inside it), an anchor opens its section, the
filter works, nothing is fetched; screenshots are kept. Boxes come from the page itself (the
DevTools protocol's Runtime.evaluate); no golden image is compared.

Chromium is Debian's `chromium`, which `.ci/run` installs where missing. In CI (CI=true) a missing
browser fails this test; elsewhere it is skipped with the reason."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from groundrules import load_rulebook
from groundrules.analyst import report
from cdp import Browser, chromium_or_skip
from png import ink

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
    with Browser(chromium_or_skip()) as b:
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


LAYOUT_JS = r"""(() => {
  const inside = (a, b) => a.left >= b.left - 0.5 && a.right <= b.right + 0.5 && a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5;
  const overlap = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  const out = [];
  let labels_seen = 0;
  for (const svg of document.querySelectorAll('svg.machine')) {
    const name = svg.getAttribute('aria-label'), frame = svg.getBoundingClientRect();
    const moves = Array.from(svg.querySelectorAll('g.move')).map(g => ({g, box: g.querySelector('text').getBoundingClientRect(),
      id: g.dataset.transition + ' from ' + g.dataset.from}));
    const states = Array.from(svg.querySelectorAll('g.state')).map(g => ({id: g.dataset.state,
      box: g.querySelector('rect').getBoundingClientRect(),
      texts: Array.from(g.querySelectorAll('text')).map(t => t.getBoundingClientRect()).filter(r => r.width > 0)}));
    labels_seen += moves.length;
    moves.forEach((a, i) => {
      if (!(a.box.width > 0) || !inside(a.box, frame)) out.push(name + ': label ' + a.id + ' is not inside the diagram');
      moves.slice(i + 1).forEach(b => { if (overlap(a.box, b.box)) out.push(name + ': labels ' + a.id + ' and ' + b.id + ' overlap'); });
      states.forEach(s => { if (overlap(a.box, s.box)) out.push(name + ': label ' + a.id + ' covers state ' + s.id); });
      for (const b of moves) {
        if (b === a) continue;
        const path = b.g.querySelector('path'), m = path.getScreenCTM(), length = path.getTotalLength();
        for (let d = 0; d <= length; d += 2) {
          const p = path.getPointAtLength(d), x = m.a * p.x + m.c * p.y + m.e, y = m.b * p.x + m.d * p.y + m.f;
          if (x > a.box.left + 1 && x < a.box.right - 1 && y > a.box.top + 1 && y < a.box.bottom - 1) {
            out.push(name + ': the line of ' + b.id + ' crosses label ' + a.id); break; }
        }
      }
    });
    states.forEach(s => s.texts.forEach(t => { if (!inside(t, s.box)) out.push(name + ': a text of state ' + s.id + ' leaves its box'); }));
  }
  return {problems: out, labels: labels_seen};
})()"""

# Every element of every section lies within its section, unless a scrolling box inside the
# section clips it (then that box must lie within the section); the page never scrolls sideways.
OVERFLOW_JS = r"""(() => {
  const out = [];
  const clips = el => getComputedStyle(el).overflowX !== 'visible';
  for (const sec of document.querySelectorAll('section.table, section.group > h2, header')) {
    const box = sec.getBoundingClientRect();
    for (const el of sec.querySelectorAll('*')) {
      if (el.closest('svg') && el.tagName.toLowerCase() !== 'svg') continue;
      let a = el.parentElement, clipped = false;
      while (a && a !== sec) { if (clips(a)) { clipped = true; break; } a = a.parentElement; }
      const r = el.getBoundingClientRect();
      if (clipped || (r.width === 0 && r.height === 0)) continue;
      if (r.right > box.right + 0.5 || r.left < box.left - 0.5)
        out.push((sec.id || sec.tagName) + ': ' + el.tagName + '.' + el.className + ' reaches ' + Math.round(r.right) + ' of ' + Math.round(box.right));
    }
  }
  const doc = document.documentElement;
  if (doc.scrollWidth > doc.clientWidth) out.push('the page scrolls sideways: ' + doc.scrollWidth + ' > ' + doc.clientWidth);
  return out;
})()"""

WIDE = """kind: decision_table
id: a_decision_table_with_an_identifier_long_enough_to_cross_the_whole_page_at_fourteen_hundred_pixels_if_nothing_wrapped_it_so_the_heading_and_the_navigation_must_wrap_it
hit_policy: first
outputs: {every_field_given: {label: 每个字段都给出了一个足够长的值}}
rows:
  - id: a_row_reading_many_fields_each_with_a_long_unbreakable_value
    code: every_field_given
    when:
      all:
{tests}
    examples:
      - {given: {}, fires: false}
"""


def wide_rulebook(tmp_path):
    """The bundled tables plus a grid of 16 columns of long unbreakable values."""
    for d in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / d, tmp_path / d)
    tests = "\n".join(f"        - {{field: field_number_{i:02d}_of_the_context, eq: value_{i:02d}_without_a_space_to_break_at}}"
                      for i in range(16))
    (tmp_path / "rules" / "wide.yaml").write_text(WIDE.replace("{tests}", tests), encoding="utf-8")
    return load_rulebook(tmp_path)


@pytest.mark.parametrize("width", [1400])
def test_at_1400_px_state_diagrams_have_no_overlap_and_nothing_leaves_its_section(browser, rulebook,
                                                                                  tmp_path, width):
    book = wide_rulebook(tmp_path)
    out = report.write(tmp_path / "report", report.render(book, CASES))
    browser.open(out, width=width, height=900)
    layout = browser.evaluate(LAYOUT_JS)
    moves = sum(len(t.sources) for table in book.of_kind("transition_table") for m in table.machines.values()
                for t in m.transitions)
    assert layout == {"problems": [], "labels": moves}
    assert browser.evaluate(OVERFLOW_JS) == []
    # the wide grid scrolls inside its section, and scrolled to its end shows its last column there
    grid = browser.evaluate("""(() => { const sec = document.querySelector('section[data-table^="a_decision_table"]');
        const box = sec.querySelector('.scroll'); const before = box.scrollWidth > box.clientWidth + 100;
        box.scrollLeft = box.scrollWidth; const last = sec.querySelector('table.grid tr.row td:last-child').getBoundingClientRect();
        const s = sec.getBoundingClientRect(); return {scrolls: before, shown: last.right <= s.right + 1 && last.left >= s.left - 1}; })()""")
    assert grid == {"scrolls": True, "shown": True}
    shot = browser.screenshot(ARTIFACTS / f"state-diagrams-{width}.png", browser.evaluate(
        """(() => { const r = document.getElementById('transition-tables').getBoundingClientRect();
        return {x: 0, y: r.top + scrollY, width: document.documentElement.clientWidth, height: r.height}; })()"""))
    assert ink(shot) > 0.01


def test_an_anchor_opens_its_section_at_the_top(browser, rulebook, tmp_path):
    out = report.write(tmp_path / "report", report.render(rulebook, CASES))
    for table in ("lt-cn_mobile", "tt-finding_states", "dt-support_reason"):
        browser.call("Page.navigate", {"url": "about:blank"}, session=True)
        browser.wait_event("Page.loadEventFired")
        browser.call("Page.navigate", {"url": out.resolve().as_uri() + "#" + table}, session=True)
        browser.wait_event("Page.loadEventFired")
        seen = browser.evaluate(f"""(() => {{ const t = document.getElementById('{table}').getBoundingClientRect();
            const shown = Array.from(document.querySelectorAll('section.table')).filter(s => s.getClientRects().length > 0);
            return {{scrolled: scrollY, top: t.top < innerHeight && t.top >= 0, height: t.height > 0,
                     shown: shown.map(s => s.id), note: getComputedStyle(document.querySelector('.focus-note')).display}}; }})()""")
        assert seen == {"scrolled": 0, "top": True, "height": True, "shown": [table], "note": "block"}, table
    browser.evaluate("document.querySelector('.focus-note a').click()")
    every = browser.evaluate("Array.from(document.querySelectorAll('section.table')).filter(s => s.getClientRects().length > 0).length")
    assert every == browser.evaluate("document.querySelectorAll('section.table').length") > 10


def test_a_headless_screenshot_of_an_anchor_is_not_blank(rulebook, tmp_path):
    """`chromium --headless --screenshot index.html#anchor`: a page scrolled to its anchor was
    captured blank; the section is now painted without scrolling."""
    binary = chromium_or_skip()
    out = report.write(tmp_path / "report", report.render(rulebook, CASES))
    shot = tmp_path / "anchor.png"
    subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                    f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1400,900",
                    out.resolve().as_uri() + "#lt-cn_mobile"], capture_output=True, timeout=120, check=False)
    assert ink(shot) > 0.01
