"""The traces of lock tables, transition tables and merge policies for people: one line per step,
each at its file:line:col, with what was read (`groundrules eval`, `groundrules lock --trace`)."""
from __future__ import annotations

import json
from typing import Any

from ..core.examples import failed_test
from ..core.yamlsrc import undotted
from ..analyst.trace import Where, located, located_lock_trace, where_of  # noqa: F401 - the located traces, shared with the studio


def brief(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _node(data: Any, path: tuple) -> Any:
    for part in path:
        data = data[part]
    return data


# ---- lock tables ---------------------------------------------------------------------------

def lock_lines(trace: dict, sources: dict) -> list[str]:
    """One message's trace through each lock table."""
    m = trace["message"]
    out = []
    for table in trace["tables"]:
        source = sources[table["table"]]
        at = where_of(source)
        out.append(f"{table['table']} ({table['file']}) on message {m['id']} ({m['role']}, {m['state']}): "
                   f"{len(table['locks'])} lock(s)")
        for p in table["patterns"]:
            out += _pattern_lines(p, source.data, at)
    return out


def _pattern_lines(p: dict, data: Any, at: Where) -> list[str]:
    out = [f"{at(p['where'])}: pattern {p['pattern']} ({p['kind']})"]
    c = p["counts_in"]
    if not c["ok"]:
        out.append(f"    does not count in {c['role']}/{c['state']} (counts_in: roles {', '.join(c['roles'])}; "
                   f"states {', '.join(c['states'])})")
        return out
    if p["prefilter"] is not None:
        f = p["prefilter"]
        out.append(f"    prefilter: found {quoted(f['found'])}" if f["ok"] else
                   f"    prefilter: none of {', '.join(map(quoted, f['words']))} in the message: not scanned")
    if p["gate"] is not None:
        g = p["gate"]
        needs = " and ".join(x for x in (f"{g['count']} in all" if g["count"] else "",
                                         f"{g['run']} in a row" if g["run"] else "") if x)
        out.append(f"    gate {g['chars']}: {g['counted']} in all, longest run {g['longest_run']}; needs {needs}: "
                   + ("passed" if g["ok"] else "not scanned"))
    if p["ran"] and not p["candidates"]:
        out.append("    the regex found no candidate")
    for cand in p["candidates"]:
        out += _candidate_lines(cand, data, at)
    for miss in p["near_misses"]:
        out.append(f"    near miss [{miss['start']}:{miss['end']}] {quoted(miss['text'])}: " + _reach_words(miss))
    return out


def _candidate_lines(c: dict, data: Any, at: Where) -> list[str]:
    out = [f"    candidate [{c['start']}:{c['end']}] {quoted(c['quote'])}"
           + (f", value read from {quoted(c['read'])}" if c["read"] != c["quote"] else "")]
    for step in c["steps"]:
        out.append(f"      {at(step['where'])}: {_node(data, step['where']).get('step')} -> {quoted(step['value'])}")
    for check in c["checks"]:
        said = "ok" if check["ok"] else f"failed: invalid_reason {check['reason']}"
        out.append(f"      {at(check['where'])}: check {check['check']} on {quoted(c['value'])}: {said}")
    for rule in c["rules"]:
        if rule["held"] is None:
            continue
        said = "held" if rule["held"] else f"did not hold: {failed_test(rule['failed'])[0]}"
        out.append(f"      {at(rule['where'])}: {rule['section']} {rule['rule']}: {said}")
    verdict = {"locked": "locked " + ("valid" if c["valid"] else f"invalid ({c['invalid_reason']})"),
               "dropped": f"dropped by drop rule {c['by']}",
               "not_recorded": "not recorded: invalid and no attempt rule holds"}[c["verdict"]]
    if c["verdict"] == "locked" and c["by"]:
        verdict += f", as an attempt ({c['by']})"
    out.append(f"      -> {verdict}")
    return out


def _reach_words(miss: dict) -> str:
    if "reach" not in miss:
        return "the gate stopped the scan before the regex read it"
    reach, start, text = miss["reach"], miss["start"], miss["text"]
    if reach is None:
        return "could not be told within the table's time budget"
    if reach == start:
        return f"the regex cannot start a candidate at {quoted(text[0])}"
    read = text[:reach - start] if reach <= miss["end"] else text + "…"
    return f"the regex reads {quoted(read)} from {start} and cannot go on at offset {reach}"


# ---- transition tables ------------------------------------------------------------------------

def transition_lines(table_id: str, file: str, trace: dict, at: Where) -> list[str]:
    role = trace["role"] or "(no role)"
    head = (f"{table_id} ({file}): {trace['machine']} {trace['from']} -> {trace['to']} via "
            f"{trace['via'] or '(any operation)'} as {role}: {trace['result']}")
    out = [head]
    for n, step in enumerate(trace["steps"]):
        decisive = " <- refused here" if n == trace["decided_by"] else ""
        kind = step["step"]
        if kind == "move":
            if step["ok"]:
                out.append(f"{at(step['where'])}: transition {step['transition']}{decisive}")
            else:
                out.append(f"{at(step['where'])}: no transition moves {trace['from']} to {trace['to']} "
                           f"(leaving {trace['from']}: {', '.join(step['leaving']) or 'none'}){decisive}")
        elif kind in ("via", "role"):
            allowed = ", ".join(step["allowed"]) if step["allowed"] else f"any {'operation' if kind == 'via' else 'role'}"
            out.append(f"    {kind} {step['read'] or '(none)'}: {'ok' if step['ok'] else 'not allowed'} "
                       f"({allowed}){decisive}")
        else:
            said = "passed" if step["ok"] else f"failed ({step['code']})"
            out.append(f"{at(step['where'])}: guard {step['guard']} ({step['required_by']}): {said}{decisive}")
            if not step["ok"]:
                out += failure_lines(step["failed"], at, 2)
    if trace["message"]:
        out.append(f"message: {trace['message']}")
    return out


def failure_lines(failure: dict | None, at: Where, depth: int = 0) -> list[str]:
    """A failed test in words: where it is, what it compared, what it read; for list operators the
    item that decided."""
    if failure is None:
        return []
    pad = "  " * depth
    where = at(undotted(failure["at"]))
    if failure.get("op") == "any" and "failed" in failure:           # an `any: [...]` of conditions
        out = [f"{pad}{where}: none of these held:"]
        for inner in failure["failed"]:
            out += failure_lines(inner, at, depth + 1)
        return out
    if failure.get("op") == "not":
        return [f"{pad}{where}: not: the condition inside held"]
    expected = failure.get("expected")
    out = [f"{pad}{where}: {failure['field']} {failure['op']} {brief(expected)}: read {brief(failure['read'])}"]
    if "item" in failure:
        item = failure["item"]
        if "failed" in item:
            out.append(f"{pad}  item [{item['index']}] failed:")
            out += failure_lines(item["failed"], at, depth + 2)
        else:
            out.append(f"{pad}  item [{item['index']}] held: {brief(item['held'])}")
    for item in failure.get("items", ()):
        out.append(f"{pad}  item [{item['index']}] of {failure['of']} failed:")
        out += failure_lines(item["failed"], at, depth + 2)
    if "counted" in failure:
        out.append(f"{pad}  counted {failure['counted']}")
    return out


# ---- merge policies: fold events -------------------------------------------------------------

NO_RESOLVE = {"field": "no resolve: a {outcome} sets the slot without weighing it against its value",
              "scope": "no resolve: a scope event", "activity": "no resolve: an activity event is tallied"}


def fold_lines(policy_id: str, trace: dict, at: Where, rows: dict, every_row: bool) -> list[str]:
    """Per event: the deciding resolve row at its line and the facts it read; with `every_row`,
    each row before it with the test that failed."""
    decided = [e for e in trace["events"] if e["rule"] is not None]
    out = [f"{policy_id}: {len(trace['events'])} event(s), {len(decided)} decided by {trace['table']}"]
    for e in trace["events"]:
        head = f"event {e['event']} {e['type']}" + (f" {e['slot']}" if e["slot"] else "") \
            + (f" in {e['scope']}" if e["scope"] else "")
        if e["rule"] is None:
            why = "a reading left for clarification" if e["outcome"] == "clarify" else \
                NO_RESOLVE.get(e["layer"], "no resolve").format(outcome=e["outcome"])
            out.append(f"{head}: {e['outcome']} ({why})")
            continue
        row = rows.get(e["rule"])
        out.append(f"{head}: {e['outcome']} by {e['rule']}" + (f" ({at(row.where)})" if row is not None else ""))
        out.append(f"    facts: {brief(e['facts'], 400)}")
        for note in e["trace"] if every_row else ():
            if note["fired"]:
                break
            if "skipped" in note:
                continue
            out.append(f"    {at(rows[note['row']].where)}: not fired {note['row']}")
            out += failure_lines(note["failed"], at, 3)
    return out
