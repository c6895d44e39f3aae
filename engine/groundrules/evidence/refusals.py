"""The refusal catalogue (rules/evidence_refusals.yaml): stable codes, retry advice, message templates.

Every refusal of the evidence part goes through `Refusals.error`, so a code that is not in the
table cannot be raised, and a message is always rendered from the table with the refusal's details.
A detail is the caller's input as often as not (a slot, an event type, an id), so every one is cut
to an echo before the message is rendered, but those the engine composes itself from positions and
the contract's words (errors.COMPOSED), which bound their own echoes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..core.errors import GroundrulesError, capped_details, did_you_mean
from ..core.messages import Messages, compile_localized

if TYPE_CHECKING:
    from ..core.tables import CompileContext

TABLE = "evidence_refusals"


class Refuses(Protocol):
    """What a ledger index needs of refusals: the catalogue, or an example's plain ones."""

    def error(self, code: str, **details: Any) -> GroundrulesError: ...

    def first(self, refusals: list[GroundrulesError]) -> GroundrulesError: ...


@dataclass(frozen=True)
class RefusalCatalogue:
    kind: str
    id: str
    file: str
    codes: dict            # code -> retry
    messages: Messages     # code -> its message, in the bound language
    curable: frozenset     # codes a later stored interpretation may cure (later_interpretation_may_cure)
    precedence: tuple = () # of several refusals of one record, the first listed answers

    def error(self, code: str, **details: Any) -> GroundrulesError:
        """The GroundrulesError for `code`, its message rendered from the table with `details`."""
        retry = self.codes[code]
        details = capped_details(details)
        return GroundrulesError(code, self.messages[code].render({}, _renderable(details)), retry=retry, **details)

    def first(self, refusals: list[GroundrulesError]) -> GroundrulesError:
        """The refusal that answers for one record that broke several rules: the first in the
        table's precedence; unlisted codes after every listed one, in the order they were met."""
        rank = {code: n for n, code in enumerate(self.precedence)}
        return min(refusals, key=lambda refusal: rank.get(refusal.code, len(rank)))


def _renderable(details: dict) -> dict:
    return {k: ("、".join(map(str, v)) if isinstance(v, list) else v) for k, v in details.items()}


def compile_refusals(data: dict, ctx: CompileContext) -> RefusalCatalogue | None:
    codes, messages = {}, {}
    for code, spec in data["codes"].items():
        localized = compile_localized(spec["message"], ("codes", code, "message"), ctx.faults)
        if localized is not None:
            codes[code], messages[code] = spec["retry"], localized
    precedence = tuple(data.get("precedence", ()))
    for n, code in enumerate(precedence):
        if code not in data["codes"]:
            ctx.fault("unknown-code", f"precedence names '{code}', which is not a code of this table",
                      ("precedence", n), did_you_mean(code, data["codes"]))
        elif code in precedence[:n]:
            ctx.fault("duplicate-code", f"precedence lists '{code}' twice", ("precedence", n))
    if any(f.severity == "error" for f in ctx.faults):
        return None
    curable = frozenset(c for c, spec in data["codes"].items() if spec.get("later_interpretation_may_cure"))
    return RefusalCatalogue("refusal_catalogue", data["id"], ctx.source.file, codes, Messages(messages), curable,
                            precedence)
