"""A transition table as HTML: each machine's diagram, transitions and examples, then the guards."""
from __future__ import annotations

from html import escape

from ..findings.transitions import Machine, TransitionTable
from .condtext import text
from .coverage import Examples
from .diagram import order, svg
from .page import examples_cell

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
