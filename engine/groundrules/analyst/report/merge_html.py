"""A merge policy as HTML: its slots (with the lock kinds that must back them and the patterns that
produce those kinds), how each event type folds, the policies with their whole-fold examples, and
links to the decision tables it embeds (drawn with the other decision tables)."""
from __future__ import annotations

from html import escape

from ...evidence.policy import MergePolicy
from ...core.rulebook import Rulebook
from ...core.yamlsrc import Source
from .page import examples_cell, heading

EMBEDDED = ("sources", "resolve", "status", "questions")    # its decision tables, in the order the fold asks them


def merge_section(policy: MergePolicy, source: Source, book: Rulebook, examples: dict, changed: frozenset) -> str:
    """`changed` holds the slot ids, event types and policy names the edit added or changed."""
    data = source.data
    producers: dict = {}
    for table in book.of_kind("lock_patterns"):
        for p in table.patterns:
            producers.setdefault(p.kind, []).append(p.id)
    out = [f'<section class="table merge" id="mp-{escape(policy.id)}" data-table="{escape(policy.id)}">',
           heading(policy.id, data.get("title", "")),
           f'<p class="meta"><code>{escape(source.file)}</code> · merge policy · field events fold into scope '
           f'<b>{escape(policy.initial_scope)}</b> until a scope event opens another · evidence validity, best first: '
           f'{escape(" › ".join(policy.validity_precedence))} · its decision tables: '
           + ", ".join(f'<a href="#dt-{escape(getattr(policy, k).id)}">{escape(k)}</a>' for k in EMBEDDED) + "</p>",
           '<h4>slots</h4><div class="scroll"><table class="plain slots"><thead><tr><th>slot</th><th>label</th>'
           '<th>inherited by a new scope</th><th>must be backed by a lock</th><th>patterns producing that kind</th>'
           '</tr></thead><tbody>']
    for slot in policy.slots.values():
        cls = ' class="changed"' if slot.id in changed else ""
        line = source.where(("slots", slot.id))[0]
        if slot.lock_kinds:
            backed = (", ".join(slot.lock_kinds) + (" (required" if slot.lock_required else " (optional")
                      + f", matched on {slot.lock_match})")
            found = [pid for kind in slot.lock_kinds for pid in producers.get(kind, ())]
            missing = [k for k in slot.lock_kinds if k not in producers]
            made = escape(", ".join(found)) + "".join(
                f'<div class="warn">no lock pattern produces kind {escape(k)}</div>' for k in missing)
        else:
            backed, made = "–", "–"
        out.append(f'<tr{cls} data-slot="{escape(slot.id)}"><td class="rid"><span class="id">{escape(slot.id)}</span>'
                   f'<span class="line">:{line}</span></td><td>{escape(slot.label)}</td>'
                   f'<td>{"yes" if slot.inherit else "no"}</td><td>{escape(backed)}</td><td>{made}</td></tr>')
    out.append("</tbody></table></div>")
    rows = []
    for event, op in policy.ops.items():
        cls = ' class="changed"' if f"event:{event}" in changed else ""
        rows.append(f'<tr{cls} data-event="{escape(event)}"><td><code>{escape(event)}</code></td>'
                    f'<td>{escape(op)}</td><td>{escape(policy.layer(event))}</td></tr>')
    out.append('<h4>events</h4><div class="scroll"><table class="plain events"><thead><tr><th>event type</th>'
               '<th>folds as</th><th>layer (scope events first, then field events)</th></tr></thead><tbody>'
               + "".join(rows) + "</tbody></table></div>")
    rows = []
    for name, description in policy.policies.items():
        cls = ' class="changed"' if f"policy:{name}" in changed else ""
        rows.append(f'<tr{cls} data-policy="{escape(name)}"><td><code>{escape(name)}</code></td>'
                    f'<td class="text">{escape(description)}</td>{examples_cell(examples.get(name))}</tr>')
    out.append('<h4>policies</h4><div class="scroll"><table class="plain policies"><thead><tr><th>policy</th>'
               '<th>what it says</th><th>whole-fold examples</th></tr></thead><tbody>' + "".join(rows)
               + "</tbody></table></div></section>\n")
    return "\n".join(out)


def changed_items(table_id: str, book: Rulebook, base: Rulebook | None) -> frozenset:
    """Slot ids, `event:<type>` and `policy:<name>` whose entry the edit added or changed."""
    if base is None:
        return frozenset()
    now = book.sources[table_id].data
    was = base.sources[table_id].data if table_id in base.sources else {}
    out = {s for s, spec in now["slots"].items() if was.get("slots", {}).get(s) != spec}
    out |= {f"event:{e}" for e, op in now["events"].items() if was.get("events", {}).get(e) != op}
    out |= {f"policy:{p}" for p, d in now.get("policies", {}).items() if was.get("policies", {}).get(p) != d}
    return frozenset(out)
