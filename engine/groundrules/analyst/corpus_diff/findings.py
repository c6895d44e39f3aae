"""One call sequence of the findings corpus, before and after an edit: per call, the outcome (ok or
the refusal code, guard and message), the moves the transition tables checked and the warnings."""
from __future__ import annotations

from typing import Any


def summary(run: dict | None) -> list[dict]:
    """Per call: tool, outcome, the moves it checked (machine from -> to: ok | code by guard), warnings."""
    if run is None:
        return []
    return [{"tool": step["tool"], "outcome": "ok" if step["ok"] else step["error"], "guard": step.get("guard"),
             "message": None if step["ok"] else step.get("message"),
             "moves": [_move(m) for m in step["moves"]], "warnings": step["warnings"]} for step in run["steps"]]


def _move(m: tuple) -> str:
    _, machine, source, target, _, _, _, blocked = m
    verdict = "ok" if blocked is None else blocked.code + (f" by {blocked.guard}" if blocked.guard else "")
    return f"{machine} {source} -> {target}: {verdict}"


def compare(case: str, before: list, after: list) -> dict | None:
    if before == after:
        return None
    calls = []
    for n in range(max(len(before), len(after))):
        a = before[n] if n < len(before) else None
        b = after[n] if n < len(after) else None
        if a != b:
            shown = b or a
            assert shown is not None, "the two differ: one of them is a call"
            calls.append({"call": n + 1, "tool": shown["tool"], "before": a, "after": b})
    return {"case": case, "calls": calls}


def outcome(step: Any) -> str | None:
    """A call in one line: its outcome and guard, the moves it checked, its warnings."""
    if step is None:
        return None
    text = step["outcome"] + (f" (guard {step['guard']})" if step.get("guard") else "")
    if step.get("message"):
        text += f": {step['message']}"
    if step["moves"]:
        text += "; " + "; ".join(step["moves"])
    if step["warnings"]:
        text += "; warnings: " + ", ".join(step["warnings"])
    return text
