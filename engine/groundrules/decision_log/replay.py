"""Replay: the logged calls of the stateless tools re-run under a candidate rulebook, each answer
compared byte for byte with the logged one, the differences told the way an analyst reads them.

A call runs through `Service.call` exactly as it was answered (same tool, arguments, role and
project), so the comparison covers the registry's checks too. Its answer is compared with the
logged envelope as JSON text, without the rulebook version (which differs by design) and without
the paths the masking table never kept. A decision logged under a rulebook whose tables are given
(`logged`, or the candidate itself when the versions match) must reproduce: one that does not is
counted and shown as not reproduced, never folded into "changed".
"""
from __future__ import annotations

import json
from collections import Counter, deque
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Protocol

from ..api import Caller, Service
from ..batch import pool
from ..core.decide import outcome
from . import masking

if TYPE_CHECKING:
    from ..core.rulebook import Rulebook

STATELESS = ("explain_support", "lock_message", "fold_evidence", "verify_extraction")
KINDS = ("primary", "locks", "refusals", "other", "not_reproduced")
LOCK_FIELDS = ("pattern", "kind", "start", "end", "valid", "invalid_reason")
SHOWN_LOCK_FIELDS = ("quote", "normalized_value")


class Logged(Protocol):
    """A log as replay reads it: the decision log (log.DecisionLog) or an export of it (export.ExportedLog)."""

    def pages(self, *, projects: list | None = None, tools: list | None = None,
              since: str | None = None) -> Iterator[list[dict]]: ...

    def texts(self, row: dict) -> tuple[str, str] | None: ...

    def opened(self, row: dict) -> dict | None: ...

    def mask(self, tool: str, doc: dict) -> dict: ...


def replay(log: Logged, candidate: Rulebook, logged: Iterable[Rulebook] = (), *, projects: list | None = None,
           tools: Iterable[str] = STATELESS, since: str | None = None, examples: int = 3,
           reveal: bool = False, workers: int = 1, chunk_rows: int = 500, in_flight: int = 3) -> dict:
    """The whole comparison as JSON-able data (see `lines` for the text form). With `workers` > 1
    the calls are re-run in forked processes, `chunk_rows` at a time (batch.pool); the log is
    read, opened and tallied here, in its order, so the result is the same for any worker count."""
    services = {candidate.version: Service(candidate)}
    for book in logged:
        services.setdefault(book.version, Service(book))
    run = services[candidate.version]
    tally = _Tally(examples)
    chunks = _chunks(log, tally, projects, list(tools), since, chunk_rows)
    for outcomes in pool.ordered(_rerun, (services, run), _sent(chunks), workers=workers, in_flight=in_flight):
        chunk = chunks.kept.popleft()                   # the oldest chunk sent: the one these outcomes answer
        for (row, _texts, doc), (after, reproduced, changed) in zip(chunk, outcomes):
            if not changed and reproduced is not False:
                tally.same(row["tool"])
                continue
            doc = doc or log.opened(row)
            assert doc is not None, "a replayed row's payload opened as it was read (_not_replayable)"
            version = row["rulebook"]
            before_book = services[version].book if version in services else None
            tally.add(row, doc, after, reproduced, changed,
                      _difference(row["tool"], doc["answer"], after) if changed else None,
                      (before_book, candidate), reveal, log)
    return tally.result(candidate.version, sorted(services))


class _Chunks:
    """The log's replayable rows as (row, texts, doc) chunks, read and opened here; rows that cannot
    be replayed are counted in the tally as they are read. Each chunk is kept until its outcomes
    come back (at most workers × in_flight of them)."""

    def __init__(self, source: Iterator[list]):
        self.source = source
        self.kept: deque = deque()


def _chunks(log: Logged, tally: "_Tally", projects: list | None, tools: list, since: str | None,
            size: int) -> _Chunks:
    def read() -> Iterator[list]:
        chunk: list = []
        for page in log.pages(projects=projects, tools=tools, since=since):
            for row in page:
                texts = log.texts(row)
                doc = None
                if texts is None:
                    doc = log.opened(row)
                    why = _not_replayable(row, doc)
                    if why:
                        tally.skipped[why] += 1
                        continue
                chunk.append((row, texts, doc))
                if len(chunk) >= size:
                    yield chunk
                    chunk = []
        if chunk:
            yield chunk
    return _Chunks(read())


def _sent(chunks: _Chunks) -> Iterator[list]:
    """Each chunk as the workers get it, kept for the tally."""
    for chunk in chunks.source:
        chunks.kept.append(chunk)
        yield chunk


def _rerun(state: tuple, chunk: list) -> list:
    """(after, reproduced, changed) of each call in the chunk; `after` only where the tally reads it."""
    services, run = state
    out = []
    for row, texts, doc in chunk:
        caller = Caller(row["principal"], row["role"], (row["project"],))
        if texts is not None:
            after, reproduced, changed = _by_text(services, run, row, texts, caller)
        else:
            after, reproduced, changed = _by_value(services, run, row, doc, caller)
        out.append((after if changed or reproduced is False else None, reproduced, changed))
    return out


def _by_text(services: dict, run: Service, row: dict, texts: tuple[str, str], caller: Caller) -> tuple:
    """(the candidate's envelope, reproduced, changed) of a call whose logged arguments and answer
    are the texts the Service wrote; reproduced is None when the logged rulebook was not given.
    Each answer is compared as the text the Service makes anyway, its rulebook version aside."""
    tool, version = row["tool"], row["rulebook"]
    arguments, logged_text = texts
    logged_body = _body(logged_text, version)
    reproduced = again = None
    if version in services:
        again, text = services[version].call_text(tool, arguments, caller)
        reproduced = _body(text, version) == logged_body if logged_body is not None else \
            _text(again, []) == _text(json.loads(logged_text), [])
    if version == run.book.version:
        after, changed = again, not reproduced
    else:
        after, text = run.call_text(tool, arguments, caller)
        changed = _body(text, run.book.version) != logged_body if logged_body is not None else \
            _text(after, []) != _text(json.loads(logged_text), [])
    return after, reproduced, changed


def _body(text: str, version: Any) -> str | None:
    """An envelope's JSON text without its closing rulebook version (canonical.envelope puts it
    last), or None when the text does not end so."""
    tail = f', "rulebook": {json.dumps(version, ensure_ascii=False)}}}'
    return text[:-len(tail)] if text.endswith(tail) else None


def _by_value(services: dict, run: Service, row: dict, doc: dict, caller: Caller) -> tuple:
    """`_by_text` for a payload the masking table cut: compared without the paths never kept."""
    tool, version = row["tool"], row["rulebook"]
    dropped = [masking.parse(p) for p in json.loads(row["dropped"])]
    logged_text = _text(doc["answer"], dropped)
    reproduced = again = None
    if version in services:
        again = services[version].call(tool, doc["arguments"], caller)
        reproduced = _text(again, dropped) == logged_text
    after = again if again is not None and version == run.book.version else run.call(tool, doc["arguments"], caller)
    return after, reproduced, _text(after, dropped) != logged_text


def _not_replayable(row: dict, doc: dict | None) -> str | None:
    if row["kept"] == "erased":
        return "erased by a redaction"
    if doc is None:
        return "nothing kept (masking table)"
    if any(p == "arguments" or p.startswith("arguments.") for p in json.loads(row["dropped"])):
        return "arguments not kept (masking table)"
    if doc["answer"] is None:
        return "answer not kept"
    return None


def _text(envelope: Mapping[str, Any], dropped: list) -> str:
    """The envelope as compared: without the rulebook version and decision id, without the paths
    the log never kept."""
    shown = {k: v for k, v in envelope.items() if k not in ("rulebook", "decision")}
    for path in dropped:
        if path[0] == "answer":
            masking.drop({"answer": shown}, path)
    return json.dumps(shown, ensure_ascii=False)


# ----------------------------------------------------------------------------- differences

def _difference(tool: str, before: dict, after: dict) -> dict:
    """What changed between two answers of one call, by kind."""
    out: dict = {"refusal": None, "primary": None, "codes": None, "locks": None}
    b_code = (before.get("error") or {}).get("code") if not before["ok"] else None
    a_code = (after.get("error") or {}).get("code") if not after["ok"] else None
    if before["ok"] != after["ok"] or b_code != a_code:
        kind = "gained" if before["ok"] else "lost" if after["ok"] else "changed"
        out["refusal"] = {"kind": kind, "before": b_code, "after": a_code}
    if tool == "explain_support":
        b, a = before.get("data") or {}, after.get("data") or {}
        if b.get("primary") != a.get("primary"):
            out["primary"] = {"before": b.get("primary"), "after": a.get("primary")}
        codes_b, codes_a = _codes(b), _codes(a)
        if codes_b != codes_a:
            out["codes"] = {"added": [c for c in codes_a if c not in codes_b],
                            "removed": [c for c in codes_b if c not in codes_a]}
    elif tool == "lock_message":
        out["locks"] = _locks(_lock_list(before), _lock_list(after))
    elif tool == "verify_extraction":
        codes_b, codes_a = _issue_codes(before), _issue_codes(after)
        if codes_b != codes_a:
            out["codes"] = {"added": [c for c in codes_a if c not in codes_b],
                            "removed": [c for c in codes_b if c not in codes_a]}
    elif tool == "fold_evidence":
        slots = _slot_changes(before.get("data"), after.get("data"))
        if slots:
            out["slots"] = slots
    return out


def _codes(data: dict) -> list:
    return [r.get("code") for r in data.get("reasons", []) if isinstance(r, dict)]


def _issue_codes(envelope: Mapping[str, Any]) -> list:
    issues = (envelope.get("error") or {}).get("issues", [])
    return [i.get("code") for i in issues if isinstance(i, dict)] + \
        [w.get("code") for w in envelope.get("warnings", []) if isinstance(w, dict)]


def _lock_list(envelope: dict) -> list:
    data = envelope.get("data") if envelope.get("ok") else None
    return data.get("locks", []) if isinstance(data, dict) else []


def _lock_key(c: dict) -> tuple:
    return c["pattern"], c["locator"]["message_id"], c["locator"]["start"], c["locator"]["end"]


def _locks(old: list, new: list) -> dict | None:
    """Locks added, removed, or changed (same pattern and span, another verdict)."""
    before, after = {_lock_key(c): c for c in old}, {_lock_key(c): c for c in new}
    added = [after[k] for k in after if k not in before]
    removed = [before[k] for k in before if k not in after]
    changed = [{"before": before[k], "after": after[k]} for k in after if k in before and before[k] != after[k]]
    if not (added or removed or changed):
        return None
    return {"added": added, "removed": removed, "changed": changed}


def _slot_changes(before: Any, after: Any) -> list:
    def slots(data: Any) -> dict:
        out = {}
        scopes = ((data or {}).get("state") or {}).get("scopes") or {}
        for scope, body in scopes.items():
            for slot, state in (body.get("slots") or {}).items():
                out[(scope, slot)] = state.get("status")
        return out
    b, a = slots(before), slots(after)
    return [{"scope": s, "slot": k, "before": b.get((s, k)), "after": a.get((s, k))}
            for (s, k) in list(b) + [x for x in a if x not in b] if b.get((s, k)) != a.get((s, k))]


def _rows(book: Any, context: Any) -> list:
    """(table, row) of the support_reason rows that fire on a context."""
    table = book.tables.get("support_reason")
    if table is None:
        return []
    return [(table.id, f["row"]) for f in outcome(table, context)["fired"]]


# ----------------------------------------------------------------------------- the tally

class _Tally:
    def __init__(self, examples: int):
        self.examples = examples
        self.skipped: Counter = Counter()
        self.by_tool: dict = {}
        self.counts: Counter = Counter()
        self.primary: Counter = Counter()
        self.codes: Counter = Counter()
        self.rows: Counter = Counter()
        self.locks: Counter = Counter()
        self.by_pattern: dict = {}
        self.refusals: Counter = Counter()
        self.refusal_codes: Counter = Counter()
        self.shown: dict = {k: [] for k in KINDS}

    def same(self, tool: str) -> None:
        """A call whose answer came back as logged."""
        per = self.by_tool.setdefault(tool, Counter())
        per["replayed"] += 1
        self.counts["replayed"] += 1
        self.counts["unchanged"] += 1

    def add(self, row: dict, doc: dict, after: dict, reproduced: bool | None, changed: bool, diff: dict | None,
            books: tuple, reveal: bool, log: Logged) -> None:
        tool = row["tool"]
        per = self.by_tool.setdefault(tool, Counter())
        per["replayed"] += 1
        self.counts["replayed"] += 1
        if reproduced is False:
            per["not_reproduced"] += 1
            self.counts["not_reproduced"] += 1
            self._example("not_reproduced", row, doc, after, None, reveal, log)
        if not changed:
            self.counts["unchanged"] += 1
            return
        assert diff is not None, "a changed answer comes with its difference (replay, spark_replay)"
        per["changed"] += 1
        self.counts["changed"] += 1
        kinds = []
        if diff["refusal"]:
            r = diff["refusal"]
            self.refusals[r["kind"]] += 1
            self.refusal_codes[(r["kind"], r["before"], r["after"])] += 1
            kinds.append("refusals")
        if diff["primary"]:
            self.primary[(diff["primary"]["before"], diff["primary"]["after"])] += 1
            kinds.append("primary")
        if diff["codes"]:
            for sign, key in (("+", "added"), ("-", "removed")):
                for code in diff["codes"][key]:
                    self.codes[(tool, sign, code)] += 1
        if tool == "explain_support" and (diff["primary"] or diff["codes"]):
            context = doc["arguments"].get("context") if isinstance(doc["arguments"], dict) else None
            before_book, candidate = books
            now = _rows(candidate, context)
            if before_book is None:                    # the logged tables were not given: what fires now
                for r in now:
                    self.rows[(r, "fires")] += 1
            else:
                was = _rows(before_book, context)
                for r in now:
                    if r not in was:
                        self.rows[(r, "added")] += 1
                for r in was:
                    if r not in now:
                        self.rows[(r, "removed")] += 1
        if diff["locks"]:
            kinds.append("locks")
            for key in ("added", "removed", "changed"):
                for c in diff["locks"][key]:
                    pattern = (c["after"] if key == "changed" else c)["pattern"]
                    self.locks[key] += 1
                    self.by_pattern.setdefault(pattern, Counter())[key] += 1
        if not kinds:
            kinds.append("other")
        for kind in kinds:
            self._example(kind, row, doc, after, diff, reveal, log)

    def _example(self, kind: str, row: dict, doc: dict, after: dict, diff: dict | None, reveal: bool,
                 log: Logged) -> None:
        if len(self.shown[kind]) >= self.examples:
            return
        shown = {"arguments": json.loads(json.dumps(doc["arguments"])), "answer": json.loads(json.dumps(doc["answer"]))}
        again = {"answer": json.loads(json.dumps({k: v for k, v in after.items() if k != "rulebook"}))}
        if not reveal:
            log.mask(row["tool"], shown)
            log.mask(row["tool"], again)
        self.shown[kind].append({
            "decision": row["id"], "tool": row["tool"], "project": row["project"], "at": row["at"],
            "logged_rulebook": row["rulebook"], "change": _shown_diff(diff, reveal) if diff else None,
            "arguments": shown["arguments"], "logged": shown["answer"], "replayed": again["answer"]})

    def result(self, candidate: str, versions: list) -> dict:
        c = self.counts
        return {
            "candidate": candidate, "rulebooks": versions,
            "replayed": c["replayed"], "unchanged": c["unchanged"], "changed": c["changed"],
            "not_reproduced": c["not_reproduced"],
            "not_replayable": dict(sorted(self.skipped.items())),
            "by_tool": {t: {"replayed": n["replayed"], "changed": n["changed"], "not_reproduced": n["not_reproduced"]}
                        for t, n in sorted(self.by_tool.items())},
            "primary": {"changed": sum(self.primary.values()),
                        "moves": [{"before": b, "after": a, "count": n} for (b, a), n in _ordered(self.primary)]},
            "codes": [{"tool": t, "change": "added" if s == "+" else "removed", "code": code, "count": n}
                      for (t, s, code), n in _ordered(self.codes)],
            "rows": [{"table": t, "row": r, "change": change, "count": n} for ((t, r), change), n in _ordered(self.rows)],
            "locks": {"added": self.locks["added"], "removed": self.locks["removed"], "changed": self.locks["changed"],
                      "by_pattern": [{"pattern": p, "added": n["added"], "removed": n["removed"], "changed": n["changed"]}
                                     for p, n in sorted(self.by_pattern.items())]},
            "refusals": {"gained": self.refusals["gained"], "lost": self.refusals["lost"],
                         "changed": self.refusals["changed"],
                         "by_code": [{"kind": k, "before": b, "after": a, "count": n}
                                     for (k, b, a), n in _ordered(self.refusal_codes)]},
            "examples": self.shown,
        }


def _ordered(counter: Counter) -> list:
    """Most frequent first, then by key: the same bytes for the same log."""
    return sorted(counter.items(), key=lambda kv: (-kv[1], json.dumps(kv[0], ensure_ascii=False)))


def _shown_diff(diff: dict, reveal: bool) -> dict:
    out = {k: v for k, v in diff.items() if v}
    if "locks" in out:
        def lock(c: dict) -> dict:
            keep = {k: c[k] for k in ("pattern", "kind", "valid", "invalid_reason")}
            keep.update(message_id=c["locator"]["message_id"], start=c["locator"]["start"], end=c["locator"]["end"])
            if reveal:
                keep.update({k: c[k] for k in SHOWN_LOCK_FIELDS})
            return keep
        locks = out["locks"]
        out["locks"] = {"added": [lock(c) for c in locks["added"]], "removed": [lock(c) for c in locks["removed"]],
                        "changed": [{"before": lock(c["before"]), "after": lock(c["after"])} for c in locks["changed"]]}
    return out


# ----------------------------------------------------------------------------- reading it

def fails(result: dict, on: str) -> bool:
    """--fail-on: does this replay fail CI? A decision that does not reproduce always does."""
    if result["not_reproduced"]:
        return True
    if on == "primary":
        return result["primary"]["changed"] > 0
    if on == "locks":
        locks = result["locks"]
        return locks["added"] + locks["removed"] + locks["changed"] > 0
    if on == "refusals":
        r = result["refusals"]
        return r["gained"] + r["lost"] + r["changed"] > 0
    return result["changed"] > 0


def lines(result: dict) -> list[str]:
    """The replay as text: the summary, then each kind of change with its examples."""
    out = [f"replayed {result['replayed']} logged call(s) under rulebook {result['candidate']}: "
           f"{result['unchanged']} unchanged, {result['changed']} changed, {result['not_reproduced']} not reproduced"]
    if result["not_replayable"]:
        out.append("  not replayable: " + ", ".join(f"{why} {n}" for why, n in result["not_replayable"].items()))
    if result["by_tool"]:
        out.append("  by tool: " + ", ".join(f"{t} {n['replayed']} (changed {n['changed']}"
                                             + (f", not reproduced {n['not_reproduced']}" if n["not_reproduced"] else "")
                                             + ")" for t, n in result["by_tool"].items()))
    p = result["primary"]
    out.append(f"  primary changes: {p['changed']}" + "".join(
        f"\n    {m['before']} -> {m['after']} ×{m['count']}" for m in p["moves"]))
    if result["codes"]:
        out.append("  codes:" + "".join(f"\n    {c['tool']} {'+' if c['change'] == 'added' else '-'}{c['code']} ×{c['count']}"
                                        for c in result["codes"]))
    if result["rows"]:
        signs = {"added": "+", "removed": "-", "fires": "fires in a changed explanation: "}
        out.append("  rows:" + "".join(f"\n    {signs[r['change']]}{r['table']}.{r['row']} ×{r['count']}"
                                       for r in result["rows"]))
    lk = result["locks"]
    out.append(f"  locks: +{lk['added']} -{lk['removed']} ~{lk['changed']}" + "".join(
        f"\n    {b['pattern']} +{b['added']} -{b['removed']} ~{b['changed']}" for b in lk["by_pattern"]))
    rf = result["refusals"]
    out.append(f"  refusals: gained {rf['gained']}, lost {rf['lost']}, changed {rf['changed']}" + "".join(
        f"\n    {r['kind']} {r['before'] or 'ok'} -> {r['after'] or 'ok'} ×{r['count']}" for r in rf["by_code"]))
    for kind in KINDS:
        shown = result["examples"][kind]
        if not shown:
            continue
        out.append(f"examples: {kind.replace('_', ' ')}")
        for ex in shown:
            out.append(f"  {ex['decision']} {ex['tool']} (project {ex['project']}, {ex['at']}, logged under "
                       f"{ex['logged_rulebook']})")
            if ex["change"]:
                out.append("    change: " + json.dumps(ex["change"], ensure_ascii=False))
            out.append("    arguments: " + json.dumps(ex["arguments"], ensure_ascii=False)[:400])
            if kind == "not_reproduced":
                out.append("    logged:   " + json.dumps(ex["logged"], ensure_ascii=False)[:400])
                out.append("    replayed: " + json.dumps(ex["replayed"], ensure_ascii=False)[:400])
    return out
