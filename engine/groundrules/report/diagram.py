"""A state machine as inline SVG: states in one row, moves as arcs (an arc diagram).

States are placed left to right in breadth-first order from the initial state (the order in which
the table's transitions reach them), then any unreachable state, dashed. A move to a state further
right is an arc above the row, a move back is an arc below, each arc as high as the distance it
spans, so no arc crosses a state and the two directions between a pair never share a path. Each
arc is labelled with its transition id; its tooltip names the guards and the operations allowed.
Same machine => same bytes.
"""
from __future__ import annotations

from html import escape

from ..findings.transitions import Machine

STEP, BOX_W, BOX_H = 170, 136, 46      # distance between state centres; state box size
RISE, RISE_PER_SPAN = 26, 24           # arc height: RISE + RISE_PER_SPAN * (span - 1)
MARGIN, PORT = 34, 14                  # outer margin; how far from a box's centre arcs leave/arrive


def reachable(machine: Machine) -> list[str]:
    """States reachable from the initial one, breadth-first, in the order the transitions reach them."""
    seen = [machine.initial]
    for state in seen:
        for t in machine.transitions:
            if state in t.sources and t.to not in seen:
                seen.append(t.to)
    return seen


def order(machine: Machine) -> list[str]:
    """Reachable states first, then unreachable states in table order."""
    seen = reachable(machine)
    return seen + [s for s in machine.states if s not in seen]


def svg(machine: Machine, key: str, changed: frozenset = frozenset()) -> str:
    """The diagram; transitions and states whose id is in `changed` are drawn highlighted. `key` makes
    the arrowhead's element id unique in the page."""
    arrow = escape(f"arrow-{key}-{machine.name}")
    states = order(machine)
    live = set(reachable(machine))
    x = {s: MARGIN + BOX_W / 2 + i * STEP for i, s in enumerate(states)}
    arcs = [(t, src) for t in machine.transitions for src in t.sources]
    spans = [abs(states.index(t.to) - states.index(src)) for t, src in arcs]
    up = max([RISE + RISE_PER_SPAN * (d - 1) for (t, s), d in zip(arcs, spans)
              if states.index(t.to) > states.index(s)] or [0])
    down = max([RISE + RISE_PER_SPAN * (d - 1) for (t, s), d in zip(arcs, spans)
                if states.index(t.to) < states.index(s)] or [0])
    top = MARGIN + up + 14
    width = round(2 * MARGIN + BOX_W + STEP * (len(states) - 1))
    height = round(top + BOX_H + down + 14 + MARGIN)
    parts = [f'<svg class="machine" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" role="img" aria-label="state diagram of {escape(machine.name)}">',
             f'<defs><marker id="{arrow}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>']
    # entry arrow into the initial state
    x0 = x[machine.initial] - BOX_W / 2
    parts.append(f'<path class="entry" d="M{_n(x0 - 26)},{_n(top + BOX_H / 2)} H{_n(x0 - 2)}" '
                 f'marker-end="url(#{arrow})"/>')
    for (t, src), span in zip(arcs, spans):
        i, j = states.index(src), states.index(t.to)
        forward = j > i
        rise = RISE + RISE_PER_SPAN * (span - 1)
        x1 = x[src] + (PORT if forward else -PORT)
        x2 = x[t.to] + (-PORT if forward else PORT)
        y = top if forward else top + BOX_H
        apex = y - rise if forward else y + rise
        # a cubic through both ports whose middle reaches `apex`
        ctrl = y + (apex - y) * 4 / 3
        cls = "move changed" if t.id in changed else "move"
        tip = f"{t.id}: {src} → {t.to}"
        if t.guards:
            tip += "; guards: " + ", ".join(t.guards)
        if t.via:
            tip += "; only via " + ", ".join(t.via)
        parts.append(f'<g class="{cls}" data-transition="{escape(t.id)}"><title>{escape(tip)}</title>'
                     f'<path d="M{_n(x1)},{_n(y)} C{_n(x1)},{_n(ctrl)} {_n(x2)},{_n(ctrl)} {_n(x2)},{_n(y)}" '
                     f'marker-end="url(#{arrow})"/>'
                     f'<text x="{_n((x1 + x2) / 2)}" y="{_n(apex + (-4 if forward else 12))}">'
                     f'{escape(t.id)}{" ◆" if t.guards else ""}</text></g>')
    for s in states:
        cls = ["state"]
        if s in machine.terminal:
            cls.append("terminal")
        if s not in live:
            cls.append("unreachable")
        if s in changed:
            cls.append("changed")
        left = x[s] - BOX_W / 2
        label = machine.label(s)
        parts.append(f'<g class="{" ".join(cls)}" data-state="{escape(s)}"><title>{escape(s)}</title>'
                     f'<rect x="{_n(left)}" y="{_n(top)}" width="{BOX_W}" height="{BOX_H}" rx="8"/>'
                     + (f'<rect class="inner" x="{_n(left + 4)}" y="{_n(top + 4)}" width="{BOX_W - 8}" '
                        f'height="{BOX_H - 8}" rx="6"/>' if s in machine.terminal else "")
                     + f'<text x="{_n(x[s])}" y="{_n(top + 19)}" class="id">{escape(s)}</text>'
                     f'<text x="{_n(x[s])}" y="{_n(top + 36)}" class="label">'
                     f'{escape(label if label != s else "")}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def _n(value: float) -> str:
    """Coordinates with at most one decimal, the same text in every process."""
    return f"{value:.1f}".rstrip("0").rstrip(".")
