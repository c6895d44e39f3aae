"""A decision table's grid as HTML: hit policy letter, priority, inputs, outputs, coverage, examples."""
from __future__ import annotations

from html import escape

from .grid import Grid, GridRow
from .page import coverage_cell, examples_cell, heading

OTHER = "other conditions"     # the column of conjuncts that read several fields
HIT_POLICIES = {  # DMN's single letters and what they mean for a reader
    "unique": ("U", "at most one row may match"),
    "first": ("F", "the first matching row decides"),
    "collect": ("C", "every matching row, in row order"),
    "output_order": ("O", "every matching code, sorted by priority"),
}


def grid_section(grid: Grid, changes: str) -> str:
    ref = grid.ref
    letter, meaning = HIT_POLICIES.get(grid.hit_policy, ("?", grid.hit_policy))
    cov = grid.coverage
    where = f"{ref.file}#{ref.key}" if ref.key else ref.file
    corpus = (f"corpus <code>tests/cases/{escape(cov.corpus)}/</code>: {cov.cases} case(s)" if cov is not None
              else f"<span class=\"warn\">no corpus</span> (add cases under <code>tests/cases/{escape(ref.id)}/</code>)")
    covered = sum(1 for r in grid.rows if r.fired) if cov is not None else None
    ex = [r.examples for r in grid.rows if r.examples is not None]
    passed, total = sum(e.passed for e in ex), sum(e.total for e in ex)
    head = [f'<section class="table decision" id="dt-{escape(ref.id)}" data-table="{escape(ref.id)}" '
            f'data-rows="{len(grid.rows)}">',
            heading(ref.id, grid.title),
            f'<p class="meta"><code>{escape(where)}{":" + str(grid.line) if grid.line else ""}</code> · decision table · hit policy '
            f'<b>{escape(grid.hit_policy)}</b> ({meaning}) · {corpus}'
            + (f" · {covered} of {len(grid.rows)} rows fired" if covered is not None else "")
            + f' · row examples {passed} of {total} pass</p>']
    if grid.hit_policy == "output_order" and grid.priority:
        head.append('<p class="priority">priority: ' + " › ".join(
            f'<span class="code">{escape(c)}</span>' for c in grid.priority) + "</p>")
    if grid.removed:
        head.append('<p class="removed">rows removed by this edit: '
                    + ", ".join(f"<code>{escape(r)}</code>" for r in grid.removed) + "</p>")
    ranked = grid.hit_policy == "output_order"
    inputs = list(grid.columns) + ([OTHER] if grid.has_other else [])
    th = ['<tr>', f'<th rowspan="2" class="hp" title="hit policy {escape(grid.hit_policy)}: {meaning}">{letter}</th>',
          '<th rowspan="2">row</th>']
    if ranked:
        th.append('<th rowspan="2" title="place of the row\'s code in priority">prio</th>')
    th += ['<th rowspan="2" title="cases of the corpus on which the row fires">coverage</th>',
           '<th rowspan="2" title="the row\'s inline examples">examples</th>',
           f'<th colspan="{len(inputs)}" class="inputs">when (inputs)</th>' if inputs else "",
           f'<th colspan="{1 + len(grid.outputs)}" class="outputs">then (outputs)</th></tr>', '<tr>']
    th += [f'<th class="in">{escape(c)}</th>' for c in inputs]
    th += ['<th class="out">code</th>'] + [f'<th class="out">{escape(o)}</th>' for o in grid.outputs] + ["</tr>"]
    body = [_grid_row(r, grid, inputs, ranked) for r in grid.rows]
    table = ('<div class="scroll"><table class="grid">\n<thead>' + "".join(th) + "</thead>\n<tbody>\n"
             + "\n".join(body) + "\n</tbody></table></div>")
    ex_table = ""
    if grid.table_examples is not None:
        ex_table = ('<div class="meta">table examples (whole-table expectations): '
                    + examples_cell(grid.table_examples, "span") + "</div>")
    return "\n".join(head) + "\n" + table + "\n" + ex_table + changes + "</section>\n"


def _grid_row(r: GridRow, grid: Grid, inputs: list, ranked: bool) -> str:
    cls = ["row"]
    if r.n == 0:
        cls.append("default")
    if r.changed:
        cls.append("changed")
    if r.fired == ():
        cls.append("uncovered")
    cells = [f'<td class="n">{r.n or "–"}</td>',
             f'<td class="rid"><span class="id">{escape(r.id)}</span><span class="line">:{r.line}</span>'
             + (f'<div class="desc">{escape(r.description)}</div>' if r.description else "")
             + "".join(f'<div class="why-changed">{escape(w)}</div>' for w in r.changed)
             + "".join(f'<div class="why-noted">{escape(w)}</div>' for w in r.noted) + "</td>"]
    if ranked:
        cells.append(f'<td class="rank">{r.rank if r.rank is not None else "–"}</td>')
    cells.append(coverage_cell(r.fired, grid.coverage, r.taken))
    cells.append(examples_cell(r.examples))
    for column in inputs:
        value = r.other if column == OTHER else r.inputs.get(column, "")
        if r.n == 0 and not value:
            value = "(nothing else matched)" if column == inputs[0] else ""
        cells.append(f'<td class="in">{escape(value)}</td>' if value else '<td class="in"><span class="any">–</span></td>')
    note = grid.code_notes.get(r.code, "")
    tip = f' title="{escape(note)}"' if note else ""
    cells.append(f'<td class="out code"{tip}>{escape(r.code)}</td>')
    cells += [f'<td class="out">{escape(r.outputs.get(o, ""))}</td>' for o in grid.outputs]
    return (f'<tr class="{" ".join(cls)}" data-row="{escape(r.id)}" data-code="{escape(r.code)}">'
            + "".join(cells) + "</tr>")
