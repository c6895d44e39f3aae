"""A lock table as HTML: each pattern's regex, steps, corpus coverage and examples, then its
context rules (drop, attempt) with the patterns they apply to, their conditions, coverage and
examples."""
from __future__ import annotations

from html import escape

from ...core import canonical
from ...locks.compile import LockTable
from ...locks.rules import Row
from ...core.yamlsrc import Source
from .condtext import literal, text
from .coverage import Coverage
from .page import examples_cell, heading

SECTIONS = {  # a context rule's section -> what holding means for a candidate
    "drop": "a candidate of the rule's patterns on which it holds is no lock (dropped before it is recorded)",
    "attempt": "an invalid candidate of the rule's patterns is recorded only when one of these holds "
               "(it looks like an attempt at this kind); a valid one never needs them",
}

def lock_section(table: LockTable, source: Source, examples: dict, coverage: Coverage | None,
                 rule_coverage: Coverage | None, changed: frozenset) -> str:
    """Every pattern with its regex, steps, corpus coverage and examples (expected locks, pass/fail),
    then the context rules. `changed` holds local pattern ids and `<section>.<rule id>`s."""
    data, file = source.data, source.file
    out = [f'<section class="table locks" id="lt-{escape(table.id)}" data-table="{escape(table.id)}">',
           heading(table.id, data.get("title", "")),
           f'<p class="meta"><code>{escape(file)}</code> · lock patterns · {table.timeout_ms} ms per '
           'pattern per message · invalid reasons: ' + ", ".join(
               f'<span title="{escape(v)}"><code>{escape(k)}</code></span>' for k, v in table.invalid_reasons.items())
           + "</p>"]
    for raw, p in zip(data["patterns"], table.patterns):
        local = raw["id"]
        fired = coverage.fired.get(p.id, ()) if coverage is not None else None
        cov = ("no corpus" if coverage is None or fired is None else
               f"locks something in {len(fired)} of {coverage.cases} conversation(s) of tests/cases/{coverage.corpus}")
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
    if table.rows:
        out.append(_rules(table, source, examples, rule_coverage, changed))
    out.append("</section>\n")
    return "\n".join(out)


def _rules(table: LockTable, source: Source, examples: dict, coverage: Coverage | None, changed: frozenset) -> str:
    """The drop and attempt rules as one table each, in the order they are tried."""
    every = len(table.patterns)
    out = ['<h4>context rules</h4><p class="meta">The rules read the candidate\'s facts (quote, value, '
           'valid, reason, before, after, groups, inside, overlaps); drop rules are tried first, in order.</p>']
    for section, meaning in SECTIONS.items():
        rows = [r for r in table.rows if r.section == section]
        if not rows:
            continue
        body = "".join(_rule_row(table, r, source, examples, coverage, changed, every) for r in rows)
        out.append(f'<h5>{section}</h5><p class="meta">{escape(meaning)}</p>'
                   '<div class="scroll"><table class="plain rules"><thead><tr><th>rule</th><th>patterns</th>'
                   '<th>holds when</th><th>coverage</th><th>examples</th></tr></thead><tbody>' + body
                   + "</tbody></table></div>")
    return "".join(out)


def _rule_row(table: LockTable, row: Row, source: Source, examples: dict, coverage: Coverage | None,
              changed: frozenset, every: int) -> str:
    key = f"{row.section}.{row.id}"
    raw = source.data[row.section][row.where[1]]
    local = sorted(p[len(table.id) + 1:] for p in row.patterns)
    patterns = "every pattern" if len(local) == every and "patterns" not in raw else ", ".join(local)
    fired = coverage.fired.get(f"{table.id}:{key}", ()) if coverage is not None else None
    cov = ("no corpus" if coverage is None or fired is None else f"holds in {len(fired)} of {coverage.cases} conversation(s)")
    tip = f' title="{escape(chr(10).join(fired))}"' if fired else ""
    cls = ' class="changed"' if key in changed else ""
    desc = f'<div class="desc">{escape(raw["description"])}</div>' if raw.get("description") else ""
    return (f'<tr{cls} data-rule="{escape(key)}"><td class="rid"><span class="id">{escape(row.id)}</span>'
            f'<span class="line">:{source.where(row.where)[0]}</span>{desc}</td>'
            f'<td>{escape(patterns)}</td><td><code class="regex">{escape(text(row.when))}</code></td>'
            f'<td class="{"warn" if fired == () else ""}"{tip}>{escape(cov)}</td>'
            f'{examples_cell(examples.get(key))}</tr>')


def _step(step: dict, key: str) -> str:
    args = ", ".join(f"{k}={literal(v) if isinstance(v, str) else canonical.dumps(v, indent=None)}"
                     for k, v in step.items() if k not in (key, "reason"))
    reason = f" ⇒ {step['reason']}" if "reason" in step else ""
    return f"{step[key]}({args}){reason}"
