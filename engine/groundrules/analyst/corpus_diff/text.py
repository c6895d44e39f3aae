"""The diff for people: one block per changed case, `-` before the edit and `+` after."""
from __future__ import annotations

from typing import Any

from ...core import canonical
from .findings import outcome

NONE = "(none)"


def lines(diff: dict, cases_label: str = "tests/cases") -> list[str]:
    """Every line of the readable diff, ending with a one-line summary."""
    out = [f"edited: {e['file']} ({e['table'] or 'schema'}, {e['change']})" for e in diff["edited"]]
    if not diff["edited"]:
        out.append("edited: no table differs from the base")
    for table in diff["decision_tables"]:
        out += table_lines(table, cases_label)
    for part in ("locks", "chat", "fold", "transitions"):
        if part in diff:
            out += corpus_lines(part, diff[part], cases_label)
    counts = [len(t["changes"]) for t in diff["decision_tables"]]
    parts = {part: len(diff[part]["changes"]) for part in ("locks", "chat", "fold", "transitions") if part in diff}
    total = sum(counts) + sum(parts.values())
    out += reach_lines(diff.get("edited_rows", ()), total)
    said = ", ".join(f"{n} {UNITS[part]}" for part, n in parts.items())
    out.append(f"{total} case(s) changed: {sum(counts)} decision-table case(s), {said} "
               f"(base {diff['base']} -> {diff['current']})")
    return out


def reach_lines(rows, changed: int) -> list[str]:
    """Each edited row no corpus value reaches, and, when nothing changed at all, each edited row
    that values reach without any outcome telling the edit from the base: a zero that says nothing."""
    out = []
    for r in rows:
        where = f"warning: {r['file']}:{r['line']}: row {r['row']} of {r['table']} was edited"
        if r["exercised"] == 0:
            out.append(f"{where} and no value of {r['corpus']} ({r['values']}) reaches it: the diff cannot show "
                       "its effect; add a case it fires on")
        elif changed == 0:
            out.append(f"{where}; it holds on {r['exercised']} of {r['values']} value(s) of {r['corpus']}, and no "
                       "outcome changed: no case tells the edit from the base; add one where it matters")
    return out


def show(value: Any) -> str:
    if value is None:
        return NONE
    return value if isinstance(value, str) else canonical.dumps(value, indent=None)


def table_lines(table: dict, cases_label: str = "tests/cases") -> list[str]:
    """One decision table: its head line, then each changed case."""
    where = table["file"] + (f"#{table['key']}" if table["key"] else "")
    head = f"{table['table']} ({where}{', ' + table['change'] if table['change'] else ''})"
    if table["corpus"] is None:
        also = f"; the {table['exercised_by']} corpus below runs it" if table["exercised_by"] else ""
        return [f"{head}: no corpus ({cases_label}/{table['table']}/ does not exist{also})"]
    out = [f"{head}: {len(table['changes'])} of {table['cases']} case(s) changed"]
    for c in table["changes"]:
        out.append(f"  {c['case']}")
        if c.get("error"):
            out.append(f"    error: {show(c['error']['before'])} -> {show(c['error']['after'])}")
        p = c["primary"]
        out.append(f"    primary: {show(p['before'])} -> {show(p['after'])}" if p["before"] != p["after"]
                   else f"    primary: {show(p['after'])} (unchanged)")
        if c["added"]:
            out.append("    added: " + ", ".join(c["added"]))
        if c["removed"]:
            out.append("    removed: " + ", ".join(c["removed"]))
        if c["reordered"]:
            was, now = _moved(c["codes"]["before"], c["codes"]["after"])
            out.append(f"    reordered: {', '.join(was)} -> {', '.join(now)}")
        out += [f"    row of {r['code']}: {r['before']} -> {r['after']}" for r in c["rows"]]
        for o in c["outputs"]:
            out.append(f"    {o['code']}.{o['key']}")
            out += _minus_plus(o["before"], o["after"], "      ")
    return out


def _moved(before: list, after: list) -> tuple[list, list]:
    """The stretch of the codes kept by both sides that changed order (common ends trimmed)."""
    was = [k for k in before if k in after]
    now = [k for k in after if k in before]
    while was and was[0] == now[0]:
        was, now = was[1:], now[1:]
    while was and was[-1] == now[-1]:
        was, now = was[:-1], now[:-1]
    return was, now


def corpus_lines(name: str, part: dict, cases_label: str = "tests/cases") -> list[str]:
    """The lock or fold corpus: its head line, then each changed conversation or payload."""
    unit, case = CORPORA[name]
    if part["corpus"] is None:
        return [f"{name}: no corpus ({cases_label}/{FOLDERS.get(name, name)}/ does not exist)"]
    out = [f"{name} ({cases_label}/{part['corpus']}): {len(part['changes'])} of {part['cases']} {unit} changed"]
    for c in part["changes"]:
        out.append(f"  {c['case']}")
        if c.get("error"):
            out.append(f"    refusal: {show(c['error']['before'])} -> {show(c['error']['after'])}")
        if c.get("message"):
            out.append("    refusal message")
            out += _minus_plus(c["message"]["before"], c["message"]["after"], "      ")
        out += case(c)
    return out


def _lock_case(c: dict) -> list[str]:
    """Per message, by position: a removed lock `-`, an added one `+`, a changed one `-` then `+`."""
    out = []
    for m in c["messages"]:
        out.append(f"    message {m['message']}")
        rows = [(_at(x), 0, x) for x in m["removed"]] + [(_at(x), 1, x) for x in m["added"]]
        rows += [row for ch in m["changed"] for row in ((_at(ch["before"]), 0, ch["before"]),
                                                         (_at(ch["before"]), 1, ch["after"]))]
        for _, plus, lock in sorted(rows, key=lambda r: (r[0], r[1])):
            out.append(f"      {'+' if plus else '-'} {_lock(lock)}")
    return out


def _at(c: dict) -> tuple:
    return c["start"], c["end"], c["pattern"]


def _lock(c: dict) -> str:
    verdict = "valid" if c["valid"] else f"invalid ({c['invalid_reason']})"
    return (f"{c['pattern']} [{c['start']}:{c['end']}] {canonical.dumps(c['quote'], indent=None)} -> "
            f"{show(c['normalized_value'])} {verdict}")


def _fold_case(c: dict) -> list[str]:
    out = []
    for s in c["slots"]:
        out.append(f"    slot {s['scope']}.{s['slot']}")
        out += _minus_plus(_slot(s["before"]), _slot(s["after"]), "      ")
    for e in c["events"]:
        out.append(f"    event {e['event']}")
        out += _minus_plus(_outcome(e["before"]), _outcome(e["after"]), "      ")
    for e in c["evidence"]:
        out.append(f"    evidence {e['evidence']}")
        out += _minus_plus(_source(e["before"]), _source(e["after"]), "      ")
    if c["questions"]:
        out.append("    question")
        out += _minus_plus(" ".join(c["questions"]["before"]) or None,
                           " ".join(c["questions"]["after"]) or None, "      ")
    if c["other"]:
        out.append("    other changes at: " + ", ".join(c["other"]))
    return out


def _findings_case(c: dict) -> list[str]:
    out = []
    for call in c["calls"]:
        out.append(f"    call {call['call']} {call['tool']}")
        out += _minus_plus(outcome(call["before"]), outcome(call["after"]), "      ")
    return out


CORPORA = {"locks": ("conversation(s)", _lock_case), "chat": ("conversation(s)", _lock_case),
           "fold": ("payload(s)", _fold_case), "transitions": ("call sequence(s)", _findings_case)}
UNITS = {"locks": "conversation(s)", "chat": "chat conversation(s)", "fold": "fold payload(s)",
         "transitions": "call sequence(s)"}
FOLDERS = {"chat": "lock_chat*", "transitions": "findings"}


def _slot(s: dict | None) -> str | None:
    if s is None:
        return None
    if s["candidates"]:
        return f"{s['status']}: " + " | ".join(f"{show(k['value'])} ({k['source']})" for k in s["candidates"])
    if s["value"] is None:
        return s["status"]
    return f"{s['status']}: {show(s['value'])} ({s['source']})"


def _outcome(e: dict | None) -> str | None:
    if e is None:
        return None
    return e["outcome"] + (f" by {e['rule']}" if e["rule"] else "") + (f" in {e['scope']}" if e["scope"] else "")


def _source(e: dict | None) -> str | None:
    return None if e is None else f"{e['source']}, {e['validity']}"


def _minus_plus(before: Any, after: Any, indent: str) -> list[str]:
    """`-` the old text (unless there was none), `+` the new one (unless it is gone)."""
    out = []
    if before is not None:
        out.append(f"{indent}- {show(before)}")
    if after is not None:
        out.append(f"{indent}+ {show(after)}")
    return out
