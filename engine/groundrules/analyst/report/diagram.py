"""A state machine as inline SVG: states in one row, each move a bracket above the row (moves to
the right) or below it (moves back), labelled with its transition id and, when not every role may
take it, the roles that may.

The layout keeps every label clear of every line and every other label, by construction:
- each move's label sits in a gap between two state boxes that the move spans (a move to itself:
  the gap on its right), and each gap is as wide as the widest label placed in it;
- a move's vertical strokes leave and enter the boxes' edges, never a gap, so no stroke crosses a
  label; its horizontal stroke runs at its own level, and a label sits in the band just beyond it;
- two moves on one level never overlap, and a move spanning another runs on a higher level, so
  brackets nest instead of crossing where they can; ports along a box's edge are ordered so that
  an outer bracket leaves the box outside the inner one.
States are placed left to right in breadth-first order from the initial state, then any
unreachable state (dashed). Text widths are estimated from the characters (a CJK character is one
em, others about 0.64 em), generously, so that a browser's font fits. Same machine => same bytes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from ...findings.transitions import Machine, Transition

BOX_W, BOX_H = 136, 46             # smallest state box
MARGIN, ENTRY = 24, 30             # outer margin; room for the arrow into the initial state
PAD, MIN_GAP, TRAIL = 12, 44, 24   # room around a label inside its gap; narrowest gap; gap after the last state
FIRST, SPACE = 16, 5               # from a box to the first level; between a label and the next level
LINE, ROLE_LINE = 13, 12           # label line heights (id, roles)
ID_EM, ROLE_EM = 11, 10            # label font sizes (px), as report.css sets them
RADIUS, EDGE = 6, 10               # bracket corner radius; port margin inside a box edge


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


def text_width(text: str, em: float) -> float:
    return sum(em * (1.0 if ord(c) >= 0x2E80 else 0.64) for c in text)


@dataclass
class _Move:
    transition: Transition
    src: int
    dst: int
    above: bool
    gap: int
    lines: tuple           # (id line, roles line or None)
    width: float
    level: int = 0
    ports: tuple = (0.0, 0.0)

    @property
    def span(self) -> tuple[int, int]:
        """The stretch of the row the bracket covers: its states, or a state and its right gap."""
        lo, hi = sorted((self.src, self.dst))
        return (lo, hi) if lo != hi else (lo, lo + 1)


def svg(machine: Machine, key: str, changed: frozenset = frozenset(), roles: dict | None = None) -> str:
    """The diagram; transitions and states whose id is in `changed` are drawn highlighted. `key` makes
    the arrowhead's element id unique in the page; `roles` maps a transition id to the roles that
    may take it, for the transitions not every role may take."""
    roles = roles or {}
    states = order(machine)
    index = {s: i for i, s in enumerate(states)}
    live = set(reachable(machine))
    moves = []
    for t in machine.transitions:
        for src in t.sources:
            i, j = index[src], index[t.to]
            lines = (t.id + (" ◆" if t.guards else ""),
                     (", ".join(roles[t.id]) or "no role") if t.id in roles else None)
            width = max(text_width(lines[0], ID_EM), text_width(lines[1] or "", ROLE_EM))
            lo, hi = sorted((i, j))
            gap = lo if lo == hi else (lo + hi - 1) // 2
            moves.append(_Move(t, i, j, j >= i, gap, lines, width))
    for above in (True, False):
        _levels([m for m in moves if m.above == above])
    box_w = max([BOX_W] + [math.ceil(max(text_width(s, 13), text_width(machine.label(s), 11))) + 24 for s in states])
    gaps = [MIN_GAP] * (len(states) - 1) + [TRAIL]
    for m in moves:
        gaps[m.gap] = max(gaps[m.gap], math.ceil(m.width) + 2 * PAD)
    left = [MARGIN + ENTRY]
    for g in gaps[:-1]:
        left.append(left[-1] + box_w + g)
    _ports(moves, states, left, box_w)
    heights: dict[tuple[bool, int], int] = {}
    for m in moves:
        h = LINE + (ROLE_LINE if m.lines[1] else 0)
        heights[m.above, m.level] = max(heights.get((m.above, m.level), 0), h)
    up = _offsets(heights, True)
    down = _offsets(heights, False)
    top = MARGIN + (up[max(up)] + heights[True, max(up)] + SPACE if up else 0)
    bottom = top + BOX_H
    width = round(left[-1] + box_w + gaps[-1] + MARGIN)
    height = round(bottom + (down[max(down)] + heights[False, max(down)] + SPACE if down else 0) + MARGIN)
    arrow = escape(f"arrow-{key}-{machine.name}")
    parts = [f'<svg class="machine" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
             f'aria-label="state diagram of {escape(machine.name)}">',
             f'<defs><marker id="{arrow}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>']
    x0 = left[index[machine.initial]]
    parts.append(f'<path class="entry" d="M{_n(x0 - ENTRY + 4)},{_n(top + BOX_H / 2)} H{_n(x0 - 2)}" '
                 f'marker-end="url(#{arrow})"/>')
    for m in moves:
        level_y = top - up[m.level] if m.above else bottom + down[m.level]
        parts.append(_move(m, states, level_y, top if m.above else bottom, left, box_w, gaps, arrow, changed))
    for s in states:
        parts.append(_state(machine, s, left[index[s]], top, box_w, s in live, s in changed))
    parts.append("</svg>")
    return "".join(parts)


def _levels(moves: list[_Move]) -> None:
    """Level 1 is nearest the row. A bracket goes above every bracket it encloses and never shares a
    level with one it overlaps."""
    placed: list[_Move] = []
    for m in sorted(moves, key=lambda m: (m.span[1] - m.span[0], m.span[0], m.src, m.dst)):
        lo, hi = m.span
        level = 1 + max([o.level for o in placed if lo <= o.span[0] and o.span[1] <= hi] or [0])
        while any(o.level == level and o.span[0] < hi and lo < o.span[1] for o in placed):
            level += 1
        m.level = level
        placed.append(m)


def _ports(moves: list[_Move], states: list, left: list, box_w: float) -> None:
    """Where each bracket leaves and enters a box: per box and side, brackets to the left first
    (innermost leftmost), then brackets to the right (outermost leftmost)."""
    ends: dict = {}
    for m in moves:
        lo, hi = m.span
        for end, here in ((0, m.src), (1, m.dst)):
            if m.src == m.dst and end == 1:
                continue                          # a move to itself comes back through the box's side
            rightward = (hi if here == lo else lo) > here
            ends.setdefault((here, m.above), []).append(((1, -m.level) if rightward else (0, m.level), m, end))
    for (state, _), items in ends.items():
        items.sort(key=lambda item: (item[0], item[1].src, item[1].dst, item[2]))
        for k, (_, m, end) in enumerate(items):
            x = left[state] + EDGE + (box_w - 2 * EDGE) * (k + 0.5) / len(items)
            m.ports = (x, m.ports[1]) if end == 0 else (m.ports[0], x)


def _offsets(heights: dict, above: bool) -> dict:
    """level -> distance of its stroke from the row; each level's labels fit before the next."""
    out, at = {}, FIRST
    for level in sorted(lv for side, lv in heights if side == above):
        out[level] = at
        at += heights[above, level] + SPACE + 3
    return out


def _move(m: _Move, states: list, y: float, edge: float, left: list, box_w: float, gaps: list, arrow: str,
          changed: frozenset) -> str:
    t = m.transition
    sign = -1 if m.above else 1               # away from the row
    x1 = m.ports[0]
    if m.src == m.dst:                        # up, along to the right of the box, down its side, into it
        x2 = left[m.src] + box_w + PAD / 2
        side_y = edge - sign * BOX_H / 2
        d = (f"M{_n(x1)},{_n(edge)} V{_n(y - sign * RADIUS)} Q{_n(x1)},{_n(y)} {_n(x1 + RADIUS)},{_n(y)} "
             f"H{_n(x2 - RADIUS)} Q{_n(x2)},{_n(y)} {_n(x2)},{_n(y - sign * RADIUS)} V{_n(side_y)} "
             f"H{_n(left[m.src] + box_w)}")
    else:
        x2 = m.ports[1]
        r = min(RADIUS, abs(x2 - x1) / 2)
        step = r if x2 > x1 else -r
        d = (f"M{_n(x1)},{_n(edge)} V{_n(y - sign * r)} Q{_n(x1)},{_n(y)} {_n(x1 + step)},{_n(y)} "
             f"H{_n(x2 - step)} Q{_n(x2)},{_n(y)} {_n(x2)},{_n(y - sign * r)} V{_n(edge)}")
    cx = left[m.gap] + box_w + gaps[m.gap] / 2
    height = LINE + (ROLE_LINE if m.lines[1] else 0)
    first = y - 3 - (height - LINE) - 3 if m.above else y + 3 + LINE - 3      # baseline of the id line
    label = f'<tspan x="{_n(cx)}" y="{_n(first)}">{escape(m.lines[0])}</tspan>'
    if m.lines[1]:
        label += f'<tspan class="roles" x="{_n(cx)}" y="{_n(first + ROLE_LINE)}">{escape(m.lines[1])}</tspan>'
    tip = f"{t.id}: {states[m.src]} → {states[m.dst]}"
    if t.guards:
        tip += "; guards: " + ", ".join(t.guards)
    if t.via:
        tip += "; only via " + ", ".join(t.via)
    if m.lines[1]:
        tip += "; only roles " + m.lines[1]
    cls = "move changed" if t.id in changed else "move"
    return (f'<g class="{cls}" data-transition="{escape(t.id)}" data-from="{escape(states[m.src])}">'
            f'<title>{escape(tip)}</title><path d="{d}" marker-end="url(#{arrow})"/><text>{label}</text></g>')


def _state(machine: Machine, s: str, x: float, top: float, box_w: float, live: bool, changed: bool) -> str:
    cls = ["state"]
    if s in machine.terminal:
        cls.append("terminal")
    if not live:
        cls.append("unreachable")
    if changed:
        cls.append("changed")
    label = machine.label(s)
    centre = x + box_w / 2
    return (f'<g class="{" ".join(cls)}" data-state="{escape(s)}"><title>{escape(s)}</title>'
            f'<rect x="{_n(x)}" y="{_n(top)}" width="{box_w}" height="{BOX_H}" rx="8"/>'
            + (f'<rect class="inner" x="{_n(x + 4)}" y="{_n(top + 4)}" width="{box_w - 8}" height="{BOX_H - 8}" '
               'rx="6"/>' if s in machine.terminal else "")
            + f'<text x="{_n(centre)}" y="{_n(top + 19)}" class="id">{escape(s)}</text>'
            f'<text x="{_n(centre)}" y="{_n(top + 36)}" class="label">{escape(label if label != s else "")}</text></g>')


def _n(value: float) -> str:
    """Coordinates with at most one decimal, the same text in every process."""
    return f"{value:.1f}".rstrip("0").rstrip(".")
