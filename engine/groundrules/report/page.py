"""HTML of the report: one self-contained page (styles and script inlined, no network, no build).

Every function returns a string of HTML for one part; text from the tables is always escaped.
"""
from __future__ import annotations

from html import escape
from importlib import resources

from ..findings.transitions import Machine, TransitionTable
from ..locks.compile import LockTable
from .. import canonical
from .condtext import text
from .coverage import Coverage, Examples
from .diagram import order, svg
from .grid import Grid, GridRow

OTHER = "other conditions"     # the column of conjuncts that read several fields
HIT_POLICIES = {  # DMN's single letters and what they mean for a reader
    "unique": ("U", "at most one row may match"),
    "first": ("F", "the first matching row decides"),
    "collect": ("C", "every matching row, in row order"),
    "output_order": ("O", "every matching code, sorted by priority"),
}


def asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def document(title: str, header: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"zh-CN\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{escape(title)}</title>\n<style>\n{asset('report.css')}</style>\n</head>\n"
            f"<body>\n<header>\n{header}</header>\n<main>\n{body}</main>\n"
            f"<script>\n{asset('report.js')}</script>\n</body>\n</html>\n")


def heading(table_id: str, title: str) -> str:
    return f'<h3>{escape(table_id)}' + (f' <span class="title">{escape(title)}</span>' if title else "") + "</h3>"


def examples_cell(ex: Examples | None) -> str:
    if ex is None or not ex.total:
        return '<td class="ex none">—</td>'
    if ex.failed:
        tip = "\n".join(ex.failed)
        return (f'<td class="ex fail" title="{escape(tip)}">✗ {ex.passed}/{ex.total}'
                f'<div class="why">{escape(ex.failed[0])}</div></td>')
    return f'<td class="ex ok">✓ {ex.passed}/{ex.total}</td>'


def coverage_cell(fired: tuple | None, coverage: Coverage | None) -> str:
    if coverage is None or fired is None:
        return '<td class="cov none" data-fired="" data-cases="">no corpus</td>'
    share = len(fired) / coverage.cases if coverage.cases else 0.0
    cls = "cov" + ("" if fired else " zero")
    tip = "\n".join(fired) if fired else "no case fires this row"
    return (f'<td class="{cls}" data-fired="{len(fired)}" data-cases="{coverage.cases}" title="{escape(tip)}">'
            f'<span class="num">{len(fired)} / {coverage.cases}</span>'
            f'<span class="bar"><i style="width:{share * 100:.0f}%"></i></span></td>')


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
        ex_table = ('<p class="meta">table examples (whole-table expectations): '
                    + examples_cell(grid.table_examples).replace("<td", "<span").replace("</td>", "</span>") + "</p>")
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
             + ("".join(f'<div class="why-changed">{escape(w)}</div>' for w in r.changed)) + "</td>"]
    if ranked:
        cells.append(f'<td class="rank">{r.rank if r.rank is not None else "–"}</td>')
    cells.append(coverage_cell(r.fired, grid.coverage))
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


def changes_block(title: str, lines: list[str]) -> str:
    """The diff's lines for one table or corpus, `-`/`+` coloured; empty when nothing changed."""
    if not lines:
        return ""
    out = []
    for line in lines:
        stripped = line.lstrip()
        cls = "minus" if stripped.startswith("- ") else "plus" if stripped.startswith("+ ") else \
            "case" if line.startswith("  ") and not line.startswith("   ") else ""
        out.append(f'<span class="{cls}">{escape(line)}</span>' if cls else escape(line))
    cases = sum(1 for line in lines if line.startswith("  ") and not line.startswith("   "))
    return (f'<details class="changes" open><summary>{escape(title)}: {cases} case(s) change</summary>'
            '<pre class="diff">' + "\n".join(out) + "</pre></details>\n")


def transition_section(table: TransitionTable, file: str, examples: dict, changed: dict) -> str:
    """Every machine as a diagram, its transitions, its guards, and the table's examples."""
    out = [f'<section class="table transitions" id="tt-{escape(table.id)}" data-table="{escape(table.id)}">',
           f'<h3>{escape(table.id)}</h3>',
           f'<p class="meta"><code>{escape(file)}</code> · transition table · a move not listed is '
           f'refused with <b>{escape(table.refusal_code)}</b> · ◆ guarded move, double border: terminal state</p>']
    for name, m in table.machines.items():
        out.append(_machine(table, m, examples, changed.get(name, frozenset())))
    guard_rows = []
    for gid, g in table.guards.items():
        cls = ' class="changed"' if gid in changed.get("guards", ()) else ""
        guard_rows.append(f'<tr{cls} data-guard="{escape(gid)}"><td><code>{escape(gid)}</code></td>'
                          f'<td>{escape(text(g.when))}</td><td>{escape(g.code)}</td>'
                          f'{examples_cell(examples.get(gid))}</tr>')
    out.append('<h4>guards</h4><div class="scroll"><table class="plain"><thead><tr><th>guard</th>'
               '<th>passes when</th><th>refusal code</th><th>examples</th></tr></thead><tbody>'
               + "".join(guard_rows) + "</tbody></table></div>")
    out.append("</section>\n")
    return "\n".join(out)


def _machine(table: TransitionTable, m: Machine, examples: dict, changed: frozenset) -> str:
    rows = []
    for t in m.transitions:
        cls = ' class="changed"' if t.id in changed else ""
        rows.append(f'<tr{cls} data-transition="{escape(t.id)}"><td><code>{escape(t.id)}</code></td>'
                    f'<td>{escape(", ".join(t.sources))}</td><td>{escape(t.to)}</td>'
                    f'<td>{escape(", ".join(t.via)) or "any operation"}</td>'
                    f'<td>{escape(", ".join(t.guards)) or "–"}</td></tr>')
    checks = [(n, ex) for n, ex in enumerate(table.examples, 1) if ex["machine"] == m.name]
    results = {n: (ok, msg) for n, ok, msg in (examples.get("examples") or Examples(())).results}
    ex_rows = []
    for n, ex in checks:
        ok, msg = results.get(n, (False, "not run"))
        ex_rows.append(f'<tr class="{"ok" if ok else "fail"}"><td>{escape(ex.get("name", ""))}</td>'
                       f'<td>{escape(ex["from"])} → {escape(ex["to"])}</td><td>{escape(ex.get("via", "") or "–")}</td>'
                       f'<td>{escape(ex["result"])}</td><td>{"✓" if ok else "✗ " + escape(msg)}</td></tr>')
    states = ", ".join(f"{s} ({m.label(s)})" for s in order(m))
    return (f'<div class="machine-block" data-machine="{escape(m.name)}"><h4>machine {escape(m.name)}</h4>'
            f'<p class="meta">initial <b>{escape(m.initial)}</b>'
            + (f' · terminal {escape(", ".join(m.terminal))}' if m.terminal else "")
            + (f' · every move first needs {escape(", ".join(m.requires))}' if m.requires else "")
            + f'</p><div class="scroll diagram">{svg(m, table.id, changed)}</div>'
            f'<p class="states">states: {escape(states)}</p>'
            '<div class="scroll"><table class="plain"><thead><tr><th>transition</th><th>from</th><th>to</th>'
            '<th>only via</th><th>guards</th></tr></thead><tbody>' + "".join(rows) + "</tbody></table></div>"
            + ('<div class="scroll"><table class="plain examples"><thead><tr><th>example</th><th>move</th>'
               '<th>via</th><th>expects</th><th>result</th></tr></thead><tbody>' + "".join(ex_rows)
               + "</tbody></table></div>" if ex_rows else "")
            + "</div>")


def lock_section(table: LockTable, data: dict, file: str, examples: dict,
                 coverage: Coverage | None, changed: frozenset) -> str:
    """Every pattern with its regex, steps, corpus coverage and examples (expected locks, pass/fail)."""
    out = [f'<section class="table locks" id="lt-{escape(table.id)}" data-table="{escape(table.id)}">',
           heading(table.id, data.get("title", "")),
           f'<p class="meta"><code>{escape(file)}</code> · lock patterns · {table.timeout_ms} ms per '
           'pattern per message · invalid reasons: ' + ", ".join(
               f'<span title="{escape(v)}"><code>{escape(k)}</code></span>' for k, v in table.invalid_reasons.items())
           + "</p>"]
    for raw, p in zip(data["patterns"], table.patterns):
        local = raw["id"]
        fired = coverage.fired.get(p.id, ()) if coverage is not None else None
        cov = ("no corpus" if fired is None else
               f"locks something in {len(fired)} of {coverage.cases} conversation(s) of tests/cases/locks/")
        steps = " → ".join(_step(s, "step") for s in raw["normalize"]) or "–"
        checks = " → ".join(_step(s, "check") for s in raw["validate"]) or "–"
        cls = "pattern changed" if local in changed else "pattern"
        ex = examples.get(local)
        ex_rows = []
        results = {n: (ok, msg) for n, ok, msg in (ex.results if ex else ())}
        for n, e in enumerate(raw.get("examples", ()), 1):
            ok, msg = results.get(n, (False, "not run"))
            locks = "; ".join(f'{lk["quote"]} [{lk["start"]}:{lk["end"]}] → {lk["normalized_value"]} '
                              + ("valid" if lk["valid"] else f'invalid ({lk.get("invalid_reason")})')
                              for lk in e["locks"]) or "no lock"
            ex_rows.append(f'<tr class="{"ok" if ok else "fail"}"><td class="text">{escape(e["text"])}</td>'
                           f'<td>{escape(e.get("role", "user"))}/{escape(e.get("state", "sent"))}</td>'
                           f'<td>{escape(locks)}</td><td>{"✓" if ok else "✗ " + escape(msg)}</td></tr>')
        item_fail = [msg for n, ok, msg in (ex.results if ex else ()) if n is None and not ok]
        out.append(f'<div class="{cls}" data-pattern="{escape(p.id)}"><h4>{escape(p.id)} '
                   f'<span class="kind">{escape(p.kind)}</span></h4>'
                   + (f'<p class="desc">{escape(raw.get("description", ""))}</p>' if raw.get("description") else "")
                   + f'<table class="plain facts"><tr><th>regex</th><td><code class="regex">{escape(raw["regex"])}</code></td></tr>'
                   f'<tr><th>counts in</th><td>roles {escape(", ".join(sorted(p.roles)))}; states '
                   f'{escape(", ".join(sorted(p.states)))}</td></tr>'
                   + (f'<tr><th>prefilter</th><td>{escape(" ".join(p.prefilter))}</td></tr>' if p.prefilter else "")
                   + f'<tr><th>normalize</th><td>{escape(steps)}</td></tr>'
                   f'<tr><th>validate</th><td>{escape(checks)}</td></tr>'
                   f'<tr><th>coverage</th><td class="{"warn" if not fired else ""}">{escape(cov)}</td></tr></table>'
                   + "".join(f'<p class="warn">✗ {escape(m)}</p>' for m in item_fail)
                   + '<div class="scroll"><table class="plain examples"><thead><tr><th>example text</th>'
                   '<th>role/state</th><th>expected locks</th><th>result</th></tr></thead><tbody>'
                   + "".join(ex_rows) + "</tbody></table></div></div>")
    out.append("</section>\n")
    return "\n".join(out)


def _step(step: dict, key: str) -> str:
    args = ", ".join(f"{k}={v if isinstance(v, str) else canonical.dumps(v, indent=None)}"
                     for k, v in step.items() if k not in (key, "reason"))
    reason = f" ⇒ {step['reason']}" if "reason" in step else ""
    return f"{step[key]}({args}){reason}"
