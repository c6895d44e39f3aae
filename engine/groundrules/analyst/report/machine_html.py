"""A transition table as HTML: each machine's diagram, transitions and examples, then the guards.

Who may take a move is what both tables allow: the roles the transition lists (all, when it lists
none) that may also call one of the operations it may be made by (`via`; any operation when it
names none), as the role table grants them."""
from __future__ import annotations

from html import escape

from ...access import RoleTable
from ...findings.transitions import Machine, Transition, TransitionTable
from ...core.yamlsrc import Source
from .condtext import text
from .coverage import Examples
from .diagram import order, svg
from .page import examples_cell


def transition_section(table: TransitionTable, source: Source, examples: dict, changed: dict,
                       role_table: RoleTable | None) -> str:
    """Every machine as a diagram, its transitions, its guards, and the table's examples."""
    every = tuple(role_table.roles) if role_table is not None else ()
    out = [f'<section class="table transitions" id="tt-{escape(table.id)}" data-table="{escape(table.id)}">',
           f'<h3>{escape(table.id)}</h3>',
           f'<p class="meta"><code>{escape(source.file)}</code> · transition table · a move not listed is '
           f'refused with <b>{escape(table.refusal_code)}</b> · ◆ guarded move, double border: terminal state'
           + (f' · a move with no role under its name may be taken by every role ({escape(", ".join(every))})'
              if every else "") + "</p>"]
    for name, m in table.machines.items():
        raw = {t["id"]: t for t in source.data["machines"][name]["transitions"]}
        who = {t.id: may_take(t, raw[t.id].get("roles", ()), role_table) for t in m.transitions}
        out.append(_machine(table, m, examples, changed.get(name, frozenset()), who, every))
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


def may_take(t: Transition, listed, role_table: RoleTable | None) -> tuple[tuple, str]:
    """(the roles that may take the move, in the role table's order; why, in words)."""
    if role_table is None:
        return (), "no role table"
    every = tuple(role_table.roles)
    listed = tuple(listed)
    if t.via:
        granted = {r for tool in t.via for r in role_table.grants.get(tool, ())}
        grants = "; ".join(f"{tool}: {', '.join(r for r in every if r in role_table.grants.get(tool, ())) or 'no role'}"
                           for tool in t.via)
    else:
        granted, grants = set(every), ""
    roles = tuple(r for r in every if (not listed or r in listed) and r in granted)
    why = ([f"the transition lists {', '.join(listed)}"] if listed else []) + \
        ([f"{'its operation' if len(t.via) == 1 else 'its operations'} are granted to {grants}"] if t.via else [])
    return roles, "; ".join(why) or "any role, by any operation"


def _machine(table: TransitionTable, m: Machine, examples: dict, changed: frozenset, who: dict, every: tuple) -> str:
    rows = []
    for t in m.transitions:
        cls = ' class="changed"' if t.id in changed else ""
        roles, why = who[t.id]
        rows.append(f'<tr{cls} data-transition="{escape(t.id)}"><td><code>{escape(t.id)}</code></td>'
                    f'<td>{escape(", ".join(t.sources))}</td><td>{escape(t.to)}</td>'
                    f'<td>{escape(", ".join(t.via)) or "any operation"}</td>'
                    f'<td>{escape(", ".join(t.guards)) or "–"}</td>'
                    f'<td class="roles" data-roles="{escape(" ".join(roles))}">{escape(", ".join(roles)) or "no role"}'
                    f'<div class="why">{escape(why)}</div></td></tr>')
    restricted = {tid: roles for tid, (roles, _) in who.items() if roles != every}
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
            + f'</p><div class="scroll diagram">{svg(m, table.id, changed, restricted)}</div>'
            f'<p class="states">states: {escape(states)}</p>'
            '<div class="scroll"><table class="plain"><thead><tr><th>transition</th><th>from</th><th>to</th>'
            '<th>only via</th><th>guards</th><th>who may take it</th></tr></thead><tbody>' + "".join(rows)
            + "</tbody></table></div>"
            + ('<div class="scroll"><table class="plain examples"><thead><tr><th>example</th><th>move</th>'
               '<th>via</th><th>expects</th><th>result</th></tr></thead><tbody>' + "".join(ex_rows)
               + "</tbody></table></div>" if ex_rows else "")
            + "</div>")
