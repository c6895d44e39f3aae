"""`groundrules report`: a picture of the rulebook as one static HTML page.

Decision tables are DMN-like grids (rows x conditions x outputs, hit policy and priority shown),
transition tables are state diagrams (with the roles that may take each move), lock tables show
their patterns and context rules with their examples, merge policies their slots and events; every
row, pattern and rule carries its coverage by the case corpora and the status of its examples. Given the
base rulebook, the rows, moves, patterns and cases the edit changes are highlighted; given a replay
of logged traffic under these tables (decision_log.replay), what the edit changes on real calls is its
last section. The page needs no network and no build step, and the same tables, corpora and replay
always give the same bytes.
"""
from __future__ import annotations

import os
import tempfile
from html import escape
from pathlib import Path

from .. import corpus
from ..corpus_diff import corpus_diff
from ..corpus_diff.text import corpus_lines, reach_lines, table_lines
from ...core.rulebook import Rulebook
from . import coverage as cov
from . import decision_html, grid, lock_html, machine_html, merge_html, page, replay_html

PICTURED = ("decision_table", "transition_table", "lock_patterns", "merge_policy")


def render(book: Rulebook, cases: Path, base: Rulebook | None = None, replay: dict | None = None) -> str:
    """The whole page for `book`, its corpora under `cases`, and (optionally) the base it is compared
    with and a replay of logged calls under `book` (replay.v1.schema.json)."""
    refs = corpus.decision_tables(book)
    coverage = cov.decision_coverage(book, cases)
    diff = corpus_diff(base, book, cases) if base is not None else None
    base_refs = {r.id: r for r in corpus.decision_tables(base)} if base is not None else {}
    base_coverage = cov.decision_coverage(base, cases) if base is not None else {}
    grids = []
    sections = [page.group_start("decision-tables", "Decision tables")]
    for ref in refs:
        against = (base_refs.get(ref.id), base, base_coverage.get(ref.id)) if base is not None else None
        g = grid.build(ref, book, coverage.get(ref.id), cov.example_status(ref.table), against)
        grids.append(g)
        lines = []
        if diff is not None:
            entry = next(t for t in diff["decision_tables"] if t["table"] == ref.id)
            lines = table_lines(entry)[1:] if entry["changes"] else []
        sections.append(decision_html.grid_section(g, page.changes_block("cases this edit changes", lines)))
    if diff is not None:
        sections.append(page.changes_block("edited rows no case tells apart",
                                           reach_lines(diff["edited_rows"], _changed_cases(diff))))
    sections.append(page.GROUP_END + page.group_start("transition-tables", "Transition tables"))
    roles = book.of_kind("role_table")
    edits: dict = {"transition item(s)": 0, "merge item(s)": 0, "lock pattern(s) and rule(s)": 0}
    if diff is not None:
        sections.append(page.changes_block("call sequences this edit changes",
                                           corpus_lines("transitions", diff["transitions"])[1:]))
    for table in book.of_kind("transition_table"):
        source = book.sources[table.id]
        moved = _moved(table.id, book, base)
        edits["transition item(s)"] += sum(len(ids) for ids in moved.values())
        sections.append(machine_html.transition_section(table, source, cov.example_status(table),
                                                        moved, roles[0] if roles else None))
    sections.append(page.GROUP_END + page.group_start("merge-policies", "Merge policies"))
    for policy in book.of_kind("merge_policy"):
        items = merge_html.changed_items(policy.id, book, base)
        edits["merge item(s)"] += len(items)
        sections.append(merge_html.merge_section(policy, book.sources[policy.id], book, cov.example_status(policy),
                                                 items))
    if diff is not None:
        sections.append(page.changes_block("fold payloads this edit changes", corpus_lines("fold", diff["fold"])[1:]))
    sections.append(page.GROUP_END + page.group_start("lock-tables", "Lock tables"))
    lock_cov = cov.lock_coverage(book, cases)
    rule_cov = cov.lock_rule_coverage(book, cases)
    if diff is not None:
        sections.append(page.changes_block("conversations this edit changes",
                                           corpus_lines("locks", diff["locks"])[1:]))
        sections.append(page.changes_block("chat conversations this edit changes",
                                           corpus_lines("chat", diff["chat"])[1:]))
    for table in book.of_kind("lock_patterns"):
        changed = _patterns_changed(table.id, book, base)
        edits["lock pattern(s) and rule(s)"] += len(changed)
        sections.append(lock_html.lock_section(table, book.sources[table.id], cov.example_status(table), lock_cov,
                                               rule_cov, changed))
    sections.append(page.GROUP_END + _others(book))
    if replay is not None:
        sections.append(replay_html.section(replay))
    header = _header(book, base, grids, lock_cov, replay, edits, diff)
    return page.document("groundrules rulebook report", header, "\n".join(sections))


PAGE_MODE = 0o644


def write(out: Path, html: str) -> Path:
    """Write `out/index.html` whole or not at all (a temporary file renamed over it), readable by
    others as any page a web server or a colleague opens (mkstemp's own mode is 0600)."""
    out.mkdir(parents=True, exist_ok=True)
    target = out / "index.html"
    fd, tmp = tempfile.mkstemp(dir=out, prefix=".index.", suffix=".html")
    try:
        os.fchmod(fd, PAGE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(html)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def _changed_cases(diff: dict | None) -> int:
    """Cases of every corpus whose outcome the edit changed (the diff's own total)."""
    if diff is None:
        return 0
    return (sum(len(t["changes"]) for t in diff["decision_tables"])
            + sum(len(diff[part]["changes"]) for part in ("locks", "chat", "fold", "transitions")))


def _header(book: Rulebook, base: Rulebook | None, grids: list, lock_cov, replay: dict | None,
            edits: dict | None = None, diff: dict | None = None) -> str:
    rows = [r for g in grids for r in g.rows]
    unfired = sum(1 for r in rows if r.fired == ())
    no_corpus = [g.ref.id for g in grids if g.coverage is None]
    failing = sum(len(r.examples.failed) for r in rows if r.examples is not None)
    changed = sum(1 for r in rows if r.changed)
    nav = "".join(f'<a href="#dt-{escape(g.ref.id)}">{escape(g.ref.id)}</a>' for g in grids)
    nav += "".join(f'<a href="#tt-{escape(t.id)}">{escape(t.id)}</a>' for t in book.of_kind("transition_table"))
    nav += "".join(f'<a href="#mp-{escape(t.id)}">{escape(t.id)}</a>' for t in book.of_kind("merge_policy"))
    nav += "".join(f'<a href="#lt-{escape(t.id)}">{escape(t.id)}</a>' for t in book.of_kind("lock_patterns"))
    nav += '<a href="#other-tables">other tables</a>'
    if replay is not None:
        nav += '<a href="#replay">replay</a>'
    summary = (f"rulebook <code>{book.version}</code>"
               + (f" compared with base <code>{base.version}</code> · {changed} row(s) changed"
                  + "".join(f", {n} {what} changed" for what, n in (edits or {}).items() if n)
                  + f" · {_changed_cases(diff)} case(s) changed over the corpora" if base else "")
               + f" · {len(grids)} decision tables, {len(rows)} rows, {unfired} fired by no case"
               + (f", {len(no_corpus)} without a corpus" if no_corpus else "")
               + f" · {failing} failing row example(s)"
               + (f" · on logged traffic: {replay['replayed']} call(s) replayed, {replay['changed']} changed, "
                  f"{replay['not_reproduced']} not reproduced" if replay is not None else ""))
    filters = ('<div class="filters">'
               + ('<label><input type="checkbox" id="only-changed"> only rows this edit changes</label>' if base else "")
               + '<label><input type="checkbox" id="only-uncovered"> only rows no case fires</label></div>')
    return (f"<h1>groundrules — the rulebook at a glance</h1>\n<p class=\"summary\">{summary}</p>\n"
            f"<nav>{nav}</nav>\n{filters}\n"
            '<p class="focus-note">This address opens one table of the report. <a href="#">Show every table</a></p>\n')


def _moved(table_id: str, book: Rulebook, base: Rulebook | None) -> dict:
    """machine -> ids of its states and transitions the edit added or changed; 'guards' -> guard ids."""
    if base is None:
        return {}
    now = book.sources[table_id].data
    was = base.sources[table_id].data if table_id in base.sources else {}
    out: dict = {}
    for name, m in now["machines"].items():
        old = was.get("machines", {}).get(name, {})
        old_t = {t["id"]: t for t in old.get("transitions", ())}
        ids = {t["id"] for t in m["transitions"] if old_t.get(t["id"]) != t}
        ids |= {s for s, attrs in m["states"].items() if old.get("states", {}).get(s, "absent") != attrs}
        out[name] = frozenset(ids)
    old_guards = was.get("guards", {})
    out["guards"] = frozenset(g for g, spec in now.get("guards", {}).items() if old_guards.get(g) != spec)
    return out


def _patterns_changed(table_id: str, book: Rulebook, base: Rulebook | None) -> frozenset:
    """Patterns whose own entry changed, or whose regex reads differently once the table's named
    sets are expanded (an edit of `sets` changes every pattern that uses the set); context rules
    (`<section>.<id>`) whose entry changed."""
    if base is None:
        return frozenset()
    was = base.sources[table_id].data if table_id in base.sources else {}
    now = book.sources[table_id].data
    old = {p["id"]: p for p in was.get("patterns", ())}
    old_regex = {p.id: p.regex.pattern for p in (base.table(table_id).patterns if table_id in base.tables else ())}
    new_regex = {p.id: p.regex.pattern for p in book.table(table_id).patterns}
    patterns = {p["id"] for p in now["patterns"]
                if old.get(p["id"]) != p or old_regex.get(f"{table_id}.{p['id']}") != new_regex.get(
                    f"{table_id}.{p['id']}")}
    rules = {f"{section}.{r['id']}" for section in lock_html.SECTIONS for r in now.get(section, ())
             if r not in was.get(section, ())}
    return frozenset(patterns | rules)


def _others(book: Rulebook) -> str:
    """Tables of the other kinds: where they are and how their examples fare."""
    rows = []
    for table_id in sorted(book.tables):
        table = book.tables[table_id]
        if table.kind in PICTURED:
            continue
        results = [r for ex in cov.example_status(table).values() for r in ex.results]
        passed = sum(1 for _, ok, _ in results if ok)
        status = (f'<td class="ex {"ok" if passed == len(results) else "fail"}">'
                  f'{"✓" if passed == len(results) else "✗"} {passed}/{len(results)}</td>'
                  if results else '<td class="ex none">—</td>')
        rows.append(f'<tr data-table="{escape(table_id)}"><td><code>{escape(table_id)}</code></td>'
                    f'<td>{escape(table.kind)}</td><td><code>{escape(book.sources[table_id].file)}</code></td>{status}</tr>')
    return (page.group_start("other-tables", "Other tables")
            + '<p class="meta">Tables of other kinds are not pictured; decision tables embedded in them appear '
            'above with the other decision tables.</p><div class="scroll"><table class="plain"><thead><tr>'
            '<th>table</th><th>kind</th><th>file</th><th>examples</th></tr></thead>'
            "<tbody>" + "".join(rows) + "</tbody></table></div>" + page.GROUP_END)
