"""A batch's answers as a page of charts (`groundrules report --batch OUTPUT`): what the rows were
answered, counted by `batch.summary`, each count a horizontal bar in an inline SVG (no script, no
network). Every name and label comes from the answers and is escaped; the same answers give the
same bytes."""
from __future__ import annotations

from html import escape

from . import page as report_page

WIDTH, LABEL_H, BAR_H, GAP = 720, 16, 14, 8
ROW_H = LABEL_H + BAR_H + GAP
STYLE = """<style>
figure.chart { margin: 1.2em 0; }
figure.chart figcaption { font-weight: 600; margin-bottom: .3em; }
svg.bars text { font-size: 12px; fill: #222; }
svg.bars text.count { fill: #555; }
svg.bars rect.valid, svg.bars rect.count { fill: #4a7ab5; }
svg.bars rect.invalid { fill: #d08a3a; }
dl.totals { display: flex; gap: 2em; } dl.totals dt { color: #666; } dl.totals dd { margin: 0; font-size: 1.4em; }
</style>
"""


def chart(name: str, title: str, bars: list[tuple[str, list[tuple[str, int]]]]) -> str:
    """One figure: per bar its label and its parts (class, count), stacked; widths are to scale
    with the largest bar (its total spans the plot)."""
    if not bars:
        return ""
    top = max(sum(n for _, n in parts) for _, parts in bars) or 1
    plot = WIDTH - 80
    rows = []
    for i, (label, parts) in enumerate(bars):
        y = i * ROW_H
        total = sum(n for _, n in parts)
        x, rects = 0.0, []
        for cls, n in parts:
            w = plot * n / top
            rects.append(f'<rect class="{escape(cls)}" x="{x:.1f}" y="{y + LABEL_H}" width="{w:.1f}" '
                         f'height="{BAR_H}"><title>{escape(cls)}: {n}</title></rect>')
            x += w
        rows.append(f'<g class="bar" data-name="{escape(label)}" data-count="{total}">'
                    f'<text class="label" x="0" y="{y + LABEL_H - 4}">{escape(label)}</text>{"".join(rects)}'
                    f'<text class="count" x="{x + 6:.1f}" y="{y + LABEL_H + BAR_H - 3}">{total}</text></g>')
    height = len(bars) * ROW_H
    return (f'<figure class="chart" id="chart-{escape(name)}" data-chart="{escape(name)}">'
            f'<figcaption>{escape(title)}</figcaption>'
            f'<svg class="bars" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}">{"".join(rows)}</svg></figure>\n')


def _named(code: str, label: str | None) -> str:
    return f"{code} · {label}" if label else code


def charts(summary: dict) -> list[tuple[str, str, list]]:
    """(name, title, bars) of every chart the summary has data for, in the page's order."""
    locks = summary["locks"]
    return [
        ("refusals", "Refusals by error code", [(r["code"], [("count", r["count"])]) for r in summary["refusals"]]),
        ("primary", "Primary support reason (support_reason)",
         [(_named(r["code"], r["label"]), [("count", r["count"])]) for r in summary["primary"]]),
        ("reasons", "Every support reason, by row of support_reason",
         [(_named(r["code"], r["label"]), [("count", r["count"])]) for r in summary["reasons"]]),
        ("lock-kinds", "Locks by kind: valid (blue) and invalid (orange)",
         [(k["kind"], [("valid", k["valid"]), ("invalid", k["invalid"])]) for k in locks["kinds"]]),
        ("invalid-reasons", "Invalid locks by reason",
         [(r["reason"], [("count", r["count"])]) for r in locks["invalid_reasons"]]),
        ("patterns", "Locks by pattern (lock table row)", [(p["pattern"], [("count", p["count"])]) for p in locks["patterns"]]),
        ("issues", "Verification issues and warnings by code", [(r["code"], [("count", r["count"])]) for r in summary["issues"]]),
        ("slots", "Folded slots by status", [(r["status"], [("count", r["count"])]) for r in summary["slots"]]),
    ]


def section(summary: dict, source: str) -> str:
    totals = (f'<dl class="totals"><div><dt>rows</dt><dd id="rows">{summary["rows"]}</dd></div>'
              f'<div><dt>ok</dt><dd id="ok">{summary["ok"]}</dd></div>'
              f'<div><dt>refused</dt><dd id="refused">{summary["refused"]}</dd></div></dl>\n')
    versions = ", ".join(f'<code>{escape(r["rulebook"])}</code> ×{r["count"]}' for r in summary["rulebooks"])
    figures = "".join(chart(name, title, bars) for name, title, bars in charts(summary))
    return (f'<section class="group" id="batch"><h2>Answers of {escape(source)}</h2>\n{totals}'
            f'<p class="summary">rulebook {versions or "—"}</p>\n{figures or "<p>no answers</p>"}</section>\n')


def page(summary: dict, source: str) -> str:
    header = f"<h1>groundrules — batch answers</h1>\n{STYLE}"
    return report_page.document("groundrules batch", header, section(summary, source))
