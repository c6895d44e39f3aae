"""Part 1: why a knowledge-gateway context got its support_status (docs/spec/support-reasons.md).

The reasons, their order, labels and sentences are all in rules/support_reason.yaml; this module
only validates the context, runs the table and shapes the result. It never raises and never
touches the context: an explanation that fails must not take retrieval down with it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from .core import rulebook as rulebooks
from .core.canonical import plain
from .core.decide import Decision, DecisionTable
from .core.rulebook import Rulebook
from .core.schema_check import contract

if TYPE_CHECKING:
    from .results import Reason, SupportReason

TABLE = "support_reason"
CONTRACT = "knowledge-gateway.v1.schema.json"
UNKNOWN = "unknown"


def explain(ctx: Any, rulebook: Rulebook | None = None) -> "SupportReason":
    """The `support_reason` object for `ctx`; `primary: unknown` when it cannot be explained."""
    return _explain(ctx, rulebook)[0]


def explain_with_trace(ctx: Any, rulebook: Rulebook | None = None) -> tuple["SupportReason", list]:
    """The `support_reason` and, for every row, whether it fired and else the first failing test."""
    reason, decision = _explain(ctx, rulebook, trace=True)
    return reason, list(decision.trace or ()) if decision else []


def contract_text(ctx: Any, rulebook: Rulebook | None = None) -> str:
    """One sentence for the LLM: the status, the primary reason and every other reason."""
    reason = explain(ctx, rulebook)
    try:
        table = _table(rulebook)
        items = reason["reasons"]
        status = ctx.get("support_status") if isinstance(ctx, dict) else None
        head = table.render_message("contract_head", {}, {
            "support_status": status if isinstance(status, str) else "unknown",
            "primary_label": reason["primary_label"], "primary_detail": _detail_of(reason)})
        others = [table.render_message("contract_item", {}, {"label": i["label"], "detail": i["detail"]})
                  for i in items if i["code"] != reason["primary"]]
        if others:
            head += table.render_message("contract_other", {}, {"others": "；".join(others)})
        return head
    except Exception as exc:  # noqa: BLE001 - the contract text must never take the caller down
        return f"support_reason unavailable: {type(exc).__name__}"


def _detail_of(reason: SupportReason) -> str:
    for item in reason["reasons"]:
        if item["code"] == reason["primary"]:
            return item["detail"]
    return ""


def _table(rulebook: Rulebook | None) -> DecisionTable:
    return (rulebook or rulebooks.default()).table(TABLE)


def _explain(ctx: Any, rulebook: Rulebook | None, trace: bool = False) -> tuple[SupportReason, Decision | None]:
    try:
        book = rulebook or rulebooks.default()
        table: DecisionTable = book.table(TABLE)
    except Exception as exc:  # noqa: BLE001 - no rulebook: say so in the one shape callers expect
        return _bare_unknown(f"rulebook unavailable: {type(exc).__name__}"), None
    try:
        checker = contract(book.schemas, CONTRACT)
        if not checker.valid(ctx):
            problem = checker.located(ctx)
            if problem is not None:
                return _unknown(table, table.render_message("malformed", {}, {"problem": problem})), None
            ctx = plain(ctx)     # valid only through subclasses (an OrderedDict): read it as the JSON it is
        elif checker.fast is None:
            ctx = plain(ctx)     # jsonschema accepts subclasses the compiled rules would not read
        decision = table.evaluate(ctx, trace=trace)
        primary = table.primary(decision, ctx)
        assert primary is not None, "support_reason.yaml has a default row and `otherwise: default`"
        reasons = [_item(table, f.code, f.outputs) for f in decision.fired]
        if all(f.row is not primary.row for f in decision.fired):
            reasons.append(_item(table, primary.code, primary.outputs))    # spec: a diagnostic never decides
        return {"primary": primary.code, "primary_label": _label(table, primary.code),
                "reasons": reasons}, decision
    except Exception as exc:  # noqa: BLE001 - spec: a failed explanation must not fail retrieval
        from .core.errors import GroundrulesError
        if isinstance(exc, GroundrulesError):           # one made by name, in the book's language
            from .core.messages import of, worded
            exc = worded(exc, of(book))
        detail = table.render_message("internal", {}, {"problem": f"{type(exc).__name__}: {exc}"})
        return _unknown(table, detail), None


def _item(table: DecisionTable, code: str, outputs: dict) -> Reason:
    """One reason: every output the row rendered that the item schema declares (the table's
    `output_item`, checked at load, so no output is dropped here)."""
    item: dict[str, Any] = {"code": code, "label": _label(table, code), "detail": outputs.get("detail", "")}
    for key in table.output_keys or tuple(outputs):
        if key in outputs and key not in item:
            item[key] = outputs[key]
    return cast("Reason", item)       # its keys are the item schema's: output_item is checked at load


def _label(table: DecisionTable, code: str) -> str:
    return table.codes.get(code, {}).get("label", code)


def _unknown(table: DecisionTable, detail: str) -> SupportReason:
    label = _label(table, UNKNOWN)
    return {"primary": UNKNOWN, "primary_label": label,
            "reasons": [{"code": UNKNOWN, "label": label, "detail": detail}]}


def _bare_unknown(detail: str) -> SupportReason:
    return {"primary": UNKNOWN, "primary_label": UNKNOWN,
            "reasons": [{"code": UNKNOWN, "label": UNKNOWN, "detail": detail}]}
