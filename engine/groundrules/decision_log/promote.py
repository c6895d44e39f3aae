"""From traffic to corpus: one logged call written as a case of the corpus it belongs to, its
personal values replaced by placeholders that keep the lock behaviour, for an analyst to review.

The case's shape is the corpus's: an explain_support context for a decision table's folder
(tests/cases/support_reason/), `{"messages": [...]}` under tests/cases/locks/, a named payload
under tests/cases/fold/, a verify payload under tests/cases/verify/. The promoted arguments are
run again under the tables that logged the call (or the candidate) and their outcome compared
with the logged one, so the analyst knows whether the case still shows what the traffic showed.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from ..core import canonical, codes
from ..api import Caller, Service
from ..core.errors import GroundrulesError, refusal
from . import replay
from .placeholders import Placeholders

if TYPE_CHECKING:
    from ..core.rulebook import Rulebook
    from .log import DecisionLog

_SAFE = re.compile(r"[^A-Za-z0-9_-]+")


def promote(log: DecisionLog, decision_id: str, to: Path, candidate: Rulebook, logged: dict[str, Rulebook]) -> dict:
    rows = list(log.rows(ids=[decision_id]))
    if not rows:
        raise _usage("usage.promote_unknown", decision=decision_id[:40])
    row = rows[0]
    tool = row["tool"]
    if tool not in replay.STATELESS:
        raise _usage("usage.promote_stateless", tool=tool, tools=list(replay.STATELESS))
    doc = log.opened(row)
    why = replay._not_replayable(row, doc)
    if why:
        raise _usage("usage.promote_not_replayable", decision=decision_id, problem=why)
    book = logged.get(row["rulebook"]) or candidate
    assert doc is not None, "_not_replayable names a row with nothing kept"
    holder = Placeholders(book, log.masking, seed=row["id"])
    arguments = holder.value(doc["arguments"])
    case, name = _case(tool, arguments, to, book, row["id"])
    path = to / name
    if path.exists():
        raise _usage("usage.promote_exists", path=str(path))
    to.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{name}.tmp")
    tmp.write_text(canonical.dumps(case) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    caller = Caller(row["principal"], row["role"], (row["project"],))
    again = Service(book).call(tool, arguments, caller)
    logged_answer = holder.value(doc["answer"])
    differs = _outcome(tool, again) != _outcome(tool, logged_answer)
    return {"path": str(path), "decision": row["id"], "tool": tool, "rulebook": book.version,
            "replaced": len(holder.quotes), "behaviour": "differs" if differs else "kept",
            "logged": _outcome(tool, logged_answer), "promoted": _outcome(tool, again)}


def lines(written: dict) -> str:
    out = [f"wrote {written['path']} from {written['decision']} ({written['tool']}): "
           f"{written['replaced']} value(s) the locks found replaced by placeholders",
           f"  under rulebook {written['rulebook']} the case answers as the logged call did: "
           + ("yes" if written["behaviour"] == "kept" else "NO"),
           "  review it: text the locks do not recognise (names, addresses) is kept as the caller wrote it"]
    if written["behaviour"] != "kept":
        out.append(f"  logged:   {json.dumps(written['logged'], ensure_ascii=False)}")
        out.append(f"  promoted: {json.dumps(written['promoted'], ensure_ascii=False)}")
    return "\n".join(out)


def _case(tool: str, arguments: dict, to: Path, book: Any, decision_id: str) -> tuple[Any, str]:
    name = f"decision-{_SAFE.sub('_', decision_id)}"
    parts = to.resolve().parts
    if tool == "explain_support":
        if to.name not in book.tables:
            raise _usage("usage.promote_to_explain", to=str(to))
        return arguments["context"], f"{name}.json"
    if tool == "lock_message":
        if "locks" not in parts:
            raise _usage("usage.promote_to_lock", to=str(to))
        return {"messages": arguments["messages"] if "messages" in arguments else [arguments["message"]]}, f"{name}.json"
    if tool == "fold_evidence":
        if to.name != "fold":
            raise _usage("usage.promote_to_fold", to=str(to))
        return {name: arguments}, f"{name}.json"
    if "verify" not in parts:
        raise _usage("usage.promote_to_verify", to=str(to))
    return {k: v for k, v in arguments.items() if k != "report"}, f"{name}.json"


def _outcome(tool: str, envelope: Mapping[str, Any]) -> dict:
    """What a case must keep of the logged answer: the outcome, and per tool what an analyst reads."""
    out: dict = {"ok": envelope["ok"], "error": (envelope.get("error") or {}).get("code")}
    data = envelope.get("data")
    data = data if isinstance(data, dict) else {}
    if tool == "explain_support":
        out.update(primary=data.get("primary"), codes=replay._codes(data))
    elif tool == "lock_message":
        out["locks"] = [[c["pattern"], c["locator"]["start"], c["locator"]["end"], c["valid"], c["invalid_reason"]]
                        for c in data.get("locks", [])]
    elif tool == "verify_extraction":
        out["codes"] = replay._issue_codes(envelope)
    else:
        out["slots"] = replay._slot_changes(None, data)
    return out


def _usage(name: str, /, **params: Any) -> GroundrulesError:
    return refusal(codes.USAGE, name, **params)
