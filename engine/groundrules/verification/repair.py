"""The repair loop: the host's model proposes, groundrules verifies and feeds the issues back.

Stops on success, on an error that no new candidate can fix (repairable false: e.g. missing
business material), or after `max_attempts`. A candidate function that raises is an attempt
that produced no candidate, recorded like any other; the loop itself never crashes on it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Literal

from ..core.canonical import detached
from .checks import Tables, run, unavailable
from .contract import json_problem
from .instances import ExtensionSchema
from .selection import Request

if TYPE_CHECKING:
    from ..results import Attempt, Issue, Repair, VerifyReport

Propose = Callable[[dict, Any, list], Any]


def loop(request: dict, schema: Any, req: Request, ext: ExtensionSchema, propose: Propose,
         max_attempts: int, tables: Tables) -> Repair:
    history: list[Attempt] = []
    feedback: list[Issue] = []
    stopped: Literal["verified", "not_repairable", "max_attempts"] = "max_attempts"
    final: VerifyReport | None = None
    for attempt in range(1, max_attempts + 1):
        try:
            candidate = propose(request, schema, [dict(i) for i in feedback])
        except Exception as exc:  # noqa: BLE001 - the host's function failing is an outcome, not a crash
            candidate = None
            final = unavailable(exc, tables)
        else:
            final = run(req, ext, candidate, tables)
        history.append({"attempt": attempt, "feedback": feedback, "candidate": _recorded(candidate),
                        "report": final})
        if final["ok"]:
            stopped = "verified"
            break
        if not final["repairable"]:
            stopped = "not_repairable"
            break
        error = final["error"]
        assert error is not None, "a report that is not ok carries its error"
        feedback = list(error["issues"]) + list(final["warnings"])
    assert final is not None, "max_attempts ≥ 1 (repair_loop checks): the loop ran at least once"
    return {"ok": final["ok"], "stopped": stopped, "attempts": len(history), "final": final,
            "history": history}


def _recorded(candidate: Any) -> Any:
    """The candidate as it was verified: a host may fix the same object in place for its next
    attempt, which must not rewrite this one. A value that is not JSON cannot be copied safely and
    is kept as returned (its report already says what is wrong with it)."""
    return detached(candidate) if json_problem(candidate) is None else candidate
