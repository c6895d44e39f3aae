"""A call's state changes checked against the state machines (rules/finding_states.yaml): the
move or stay allowed for this tool and role, its guards given the links judged for independence,
a refusal carrying the table's code and message."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.errors import GroundrulesError
from .independence import judged
if TYPE_CHECKING:
    from .call import Call


def check_move(call: Call, machine: str, source: str, target: str, facts: dict) -> None:
    """Refuse the move `source` -> `target` unless a transition allows it via this call's tool."""
    facts = dict(facts, **{k: judged(call.book, facts[k]) for k in ("basis", "links") if k in facts})
    blocked = call.states.check(machine, source, target, facts, via=call.tool, role=call.role)
    if blocked is not None:
        extra = {"guard": blocked.guard} if blocked.guard else {}
        raise GroundrulesError(blocked.code, blocked.message, machine=machine, **extra)


def check_stay(call: Call, machine: str, state: str, facts: dict) -> None:
    """Refuse a call that leaves `state` as it is (revalidation) where the machine forbids it."""
    blocked = call.states.check_stay(machine, state, facts, via=call.tool, role=call.role)
    if blocked is not None:
        raise GroundrulesError(blocked.code, blocked.message, machine=machine, guard=blocked.guard)
