"""The studio in a real headless Chromium: a cell edited to a misspelt field shows lint's error at
that cell, the fix clears it, Save writes a one-line diff, `groundrules lint` passes on the saved
project, and the page logged no console error. Chromium is Debian's `chromium` (.ci/run installs
it); in CI (CI=true) a missing browser fails this test, elsewhere it skips, saying why.
Screenshots are kept in tests/artifacts/studio/ (git-ignored)."""
from __future__ import annotations

import difflib
import json
import threading
import time

import pytest

from cdp import Browser, chromium_or_skip
from cli_inproc import run_cli
from groundrules.analyst.studio import yamltext
from groundrules.analyst.studio.server import make_server
from groundrules.analyst.studio.workspace import Workspace
from project import ROOT, copy_project

TABLE = "rules/support_reason.yaml"
ARTIFACTS = ROOT / "tests" / "artifacts" / "studio"
WAIT_S = 60.0


@pytest.fixture
def browser():
    with Browser(chromium_or_skip(), timeout=WAIT_S) as b:
        b.call("Log.enable", session=True)
        yield b


@pytest.fixture
def served(tmp_path):
    project = copy_project(tmp_path / "project")
    server = make_server(Workspace(project), 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield project, "http://%s:%d/" % server.server_address[:2]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def until(browser: Browser, expression: str) -> object:
    """Poll the page until `expression` is truthy (bounded: WAIT_S)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = browser.evaluate(expression)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"the page never got to: {expression}")


def type_into(browser: Browser, path: list, text: str) -> None:
    browser.evaluate(f"""(() => {{
      const area = document.querySelector(`textarea[data-path='{_key(path)}']`);
      area.focus(); area.value = {json.dumps(text, ensure_ascii=False)};
      area.dispatchEvent(new Event('input', {{bubbles: true}}));
    }})()""")


def shot(browser: Browser, element: str, name: str) -> None:
    """The viewport with `element` in its middle, kept in tests/artifacts/studio/."""
    browser.evaluate(f"{element}.scrollIntoView({{block: 'center', inline: 'start'}})")
    time.sleep(0.3)                  # let the focused cell grow first
    browser.screenshot(ARTIFACTS / name, beyond=False)


def _key(path: list) -> str:
    """A path as the page's JSON.stringify writes it."""
    return json.dumps(path, separators=(",", ":"), ensure_ascii=False)


def cell(path: list) -> str:
    return f"document.querySelector(`td[data-cell='{_key(path)}']`)"


@pytest.mark.extended          # ~1-2 min: a whole lint, the examples and the corpus per keystroke pause
def test_edit_a_cell_see_the_error_there_fix_it_save_and_lint_passes(browser, served):
    project, url = served
    before = (project / TABLE).read_text(encoding="utf-8")
    rows = yamltext.read(before)["rows"]
    i = next(n for n, r in enumerate(rows) if r["id"] == "no_candidates")
    path = ["rows", i, "when"]
    browser.open(url + "#file=" + TABLE, width=1100, height=640)
    until(browser, "document.body.dataset.ready === 'true'")
    assert until(browser, f"{cell(path)} && {cell(path)}.querySelector('textarea').value") == \
        "{field: metrics.candidate_count, eq: 0}"

    type_into(browser, path, "{field: metrics.candidate_cuont, eq: 0}")
    message = until(browser, f"{cell(path)}.classList.contains('bad') && {cell(path)}.querySelector('.msg').textContent")
    assert "unknown-field" in message and "candidate_count" in message
    shot(browser, cell(path) + ".parentElement.firstElementChild", "error-at-cell.png")
    browser.evaluate("document.getElementById('save').click()")
    until(browser, "document.getElementById('status').textContent.startsWith('not saved')")
    assert (project / TABLE).read_text(encoding="utf-8") == before

    type_into(browser, path, "{field: metrics.candidate_count, eq: 0}")
    until(browser, f"!{cell(path)}.classList.contains('bad') && document.getElementById('status').textContent === 'saved'")
    i2 = next(n for n, r in enumerate(rows) if r["id"] == "no_usable_evidence.unreadable")
    type_into(browser, ["rows", i2, "description"], "candidates came back, and none of them could be read")
    until(browser, "document.getElementById('status').textContent.startsWith('edited')")
    browser.evaluate("document.getElementById('sim-case').selectedIndex = 1")
    browser.evaluate("document.getElementById('sim-run').click()")
    until(browser, "document.getElementById('sim-out').textContent.includes('fired')")
    browser.evaluate("document.getElementById('save').click()")
    said = until(browser, "document.getElementById('status').textContent.startsWith('saved ') && "
                          "document.getElementById('status').textContent")
    assert said == f"saved {TABLE}: 2 changed line(s)"
    after = (project / TABLE).read_text(encoding="utf-8")
    changed = [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
               if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changed == ["-    description: candidates came back, but no page could be read",
                       "+    description: candidates came back, and none of them could be read"]
    assert run_cli("--rules", str(project), "lint").returncode == 0
    shot(browser, "document.querySelector('tr.fired td')", "simulator.png")
    browser.evaluate("1")            # read the events the page sent last
    assert browser.console_errors() == []
