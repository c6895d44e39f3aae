"""`groundrules demo`: every part's tool run on the example inputs bundled in schemas/examples/,
and a walk through both ledgers (an evidence ledger and a finding ledger, in memory).

By default a short walk for a person who just installed groundrules: per example, what went in
and what the part decided, a few lines each. `--json` prints every answer in one envelope.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Callable

from ..core import canonical
from ..api import Caller, Service
from .io import emit, emit_text
from .session import lang_from, rulebook_from, tool_arguments
from .tool_cmds import lock_arguments

CALLER = Caller("demo", "agent")
WIDTH = 60      # characters of an input shown


def _cut(text: Any) -> str:
    text = str(text).replace("\n", " ")
    return text if len(text) <= WIDTH else text[:WIDTH] + "…"


def _refused(envelope: dict) -> list[str]:
    error = envelope["error"] or {}
    return [f"out: refused {error.get('code')}: {_cut(error.get('message', ''))}"]


def _support(doc: Any, envelope: dict) -> list[str]:
    data = envelope["data"]
    others = [r["code"] for r in data["reasons"] if r["code"] != data["primary"]]
    return [f"in:  {_cut(doc.get('query'))!s} (support_status {doc.get('support_status')})",
            f"out: primary {data['primary']} ({data['primary_label']})"
            + (f"; also {', '.join(others)}" if others else "")]


def _locks(doc: Any, envelope: dict) -> list[str]:
    messages = doc["messages"] if isinstance(doc, dict) and "messages" in doc else [doc]
    lines = [f"in:  {m.get('role')}: {_cut(m.get('content'))}" for m in messages]
    for lock in envelope["data"]["locks"]:
        verdict = "valid" if lock["valid"] else f"invalid ({lock['invalid_reason']})"
        lines.append(f"out: {lock['kind']} \"{lock['quote']}\" -> {lock['normalized_value']}, {verdict}")
    return lines if envelope["data"]["locks"] else lines + ["out: nothing to lock"]


def _fold(doc: Any, envelope: dict) -> list[str]:
    events = [e.get("type") for i in doc.get("interpretations", []) for e in i.get("events", [])]
    lines = [f"in:  {len(doc.get('records', []))} evidence records; events {', '.join(map(str, events))}"]
    if not envelope["ok"]:
        return lines + _refused(envelope)
    state = envelope["data"]["state"]
    for scope_id, scope in state["scopes"].items():
        for slot_id, slot in scope["slots"].items():
            shown = "" if slot["value"] is None else f" = {slot['value']} (evidence {', '.join(slot['evidence'])})"
            lines.append(f"out: {scope_id}.{slot_id} {slot['status']}{shown}")
    lines += [f"out: ask \"{c['question']}\"" for c in state["clarifications"] if c["status"] == "open"]
    return lines


def _verify(doc: Any, envelope: dict) -> list[str]:
    lines = [f"in:  {_cut(doc.get('request', {}).get('input'))} (fields {doc.get('request', {}).get('fields')})"]
    if envelope["ok"]:
        return lines + [f"out: verified; data {canonical.dumps(envelope['data']['data'], indent=None)}"]
    error = envelope["error"]
    issues = ", ".join(i["code"] for i in error.get("issues", []))
    return lines + [f"out: {error['code']}" + (f": {issues}" if issues else "")]


# folder under schemas/examples/ -> (what it shows, tool, convenience shape -> arguments, answer -> lines);
# a file holding the tool's own arguments is passed as it is
DEMOS: dict[str, tuple[str, str, Callable[[Any], Any], Callable[[Any, dict], list[str]]]] = {
    "support_reason": ("why a retrieval context got its support status (docs/spec/support-reasons.md)", "explain_support",
                       lambda doc: {"context": doc}, _support),
    "locks": ("the evidence a message mechanically holds, before any model reads it (docs/spec/locks.md)", "lock_message",
              lock_arguments, _locks),
    "fold": ("evidence and a model's interpretation folded into slot state (docs/spec/evidence.md)", "fold_evidence",
             lambda doc: doc, _fold),
    "verify": ("may a model's extraction be used? (docs/spec/verification.md)", "verify_extraction", lambda doc: doc, _verify),
}


def _walk_lines(call: dict, envelope: dict) -> list[str]:
    """One line per call of a walk: the tool and what it answered, in a few words."""
    if not envelope["ok"]:
        return [f"{call['tool']}: " + _refused(envelope)[0].removeprefix("out: ")]
    data, tool = envelope["data"], call["tool"]
    if tool == "append_evidence":
        locks = [r["lock"] for r in data["records"] if r["type"] == "lock"]
        said = f"{_cut(data['records'][0].get('content', ''))}"
        return [f"append_evidence: {said}; locked " + (", ".join(f"{l['kind']} \"{l['quote']}\"" for l in locks)
                                                      or "nothing")]
    if tool == "draft_interpretation":
        return [f"draft_interpretation: {len(data['locks'])} lock(s) to place: "
                + ", ".join(f"{l['kind']} -> slots {', '.join(l['slots'])}" for l in data["locks"])]
    if tool == "fold_ledger":
        state = data["state"]
        slots = [f"{sid}.{slot}={v['status']}" for sid, scope in state["scopes"].items()
                 for slot, v in scope["slots"].items()]
        pending = [f"{p['kind']} ({p['why']})" for p in state.get("pending", [])]
        return [f"fold_ledger: {', '.join(slots) or 'no slot decided'}"
                + (f"; pending: {', '.join(pending)}" if pending else "")]
    if tool == "log_finding":
        return [f"log_finding: {data['finding_id']} {data['epistemic_state']}, evidence {data['evidence_count']}"]
    if tool == "query_findings":
        return [f"query_findings: {len(data['findings'])} found"]
    return [f"{tool}: ok"]


def _walk(book: Any, doc: dict, lang: str | None = None) -> tuple[dict, list[str]]:
    """A walk through both ledgers (in memory, ids and clock stepped, so every run answers the same
    bytes): each call of the example in order, by the role it names (`as`; default agent): the
    host relays what was said, the agent interprets it."""
    from ..evidence import EvidenceLedger
    from ..findings import FindingLedger, SequentialIds, StepClock
    ids, clock = SequentialIds(), StepClock()
    findings = FindingLedger(":memory:", rulebook=book, ids=ids, clock=clock)
    evidence = EvidenceLedger(None, rulebook=book, ids=lambda: ids.new("R"), clock=clock)
    service = Service(book, findings=findings, evidence=evidence, lang=lang)
    answers, lines = [], [f"in:  {_cut(doc.get('description', ''))}"]
    try:
        for call in doc["calls"]:
            caller = Caller(f"demo-{call.get('as', 'agent')}", call.get("as", "agent"), ("demo",))
            envelope = service.call(call["tool"], call["arguments"], caller)
            answers.append({"tool": call["tool"], **{key: envelope[key] for key in ("ok", "data", "warnings", "error")}})
            lines += ["out: " + line for line in _walk_lines(call, envelope)]
    finally:
        findings.close()
        evidence.close()
    refused = next((a["error"] for a in answers if not a["ok"]), None)
    return {"ok": refused is None, "data": answers, "warnings": [], "error": refused}, lines


# folder under schemas/examples/ -> what it shows: each file a walk, its calls made in order on one service
WALKS = {"ledgers": "one conversation: evidence, its interpretation, the fold, a finding (seeds 003, 001)"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run every part on the bundled example inputs",
                       description="Run each part of groundrules on the examples in schemas/examples/ "
                                   "through its tool and say, per example, what went in and what was decided.")
    p.add_argument("--json", action="store_true", help="print every answer in one envelope instead")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    book = rulebook_from(args)
    service = Service(book, lang=lang_from(args))
    base = Path(book.root) / "schemas" / "examples"
    data, text = {}, ["groundrules demo: every part on the examples in schemas/examples/, through the tools an "
                      "agent calls (--json for the answers themselves)"]
    for part, (what, tool, arguments_of, summary) in DEMOS.items():
        answers = {}
        text += ["", f"{part} ({tool}): {what}"]
        for path in sorted((base / part).glob("*.json")):
            doc = json.loads(path.read_text(encoding="utf-8"))
            envelope = service.call(tool, tool_arguments(book, tool, doc, arguments_of), CALLER)
            answers[path.stem] = {key: envelope[key] for key in ("ok", "data", "warnings", "error")}
            lines = summary(doc, envelope) if envelope["ok"] or part in ("fold", "verify") else _refused(envelope)
            text += [f"  {path.stem}"] + [f"    {line}" for line in lines]
        data[part] = answers
    for part, what in WALKS.items():
        text += ["", f"{part} (both ledgers): {what}"]
        data[part] = {}
        for path in sorted((base / part).glob("*.json")):
            data[part][path.stem], lines = _walk(book, json.loads(path.read_text(encoding="utf-8")),
                                                       lang_from(args))
            text += [f"  {path.stem}"] + [f"    {line}" for line in lines]
    if args.json:
        emit(canonical.envelope(ok=True, data=data, rulebook=book.version))
    else:
        emit_text("\n".join(text))
    return 0
