"""A call's state changes checked against the state machines (rules/finding_states.yaml): the
move or stay allowed for this tool and role, its guards given the links judged for independence,
a refusal carrying the table's code and message."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.errors import GroundrulesError
from .independence import shown
if TYPE_CHECKING:
    from .call import Call


LINK_LISTS = ("basis", "links", "new_links")


def last_demotion(call: Call, seq: int) -> int:
    """The finding's version at its last demotion (an epistemic move to a lower `rank` of
    rules/finding_states.yaml: supported -> provisional, anything -> refuted, ...), 0 if never."""
    epistemic = call.states.machine("epistemic")
    return max((m["version"] for m in call.tx.state_moves(seq) if epistemic.demotes(m["from_state"], m["to_state"])),
               default=0)


def timed(links: list[dict], demoted: int) -> list[dict]:
    """Each link with `after_demotion`: was it linked after the finding's last demotion (at a later
    version)? Support must come from such links, not one the finding once had (docs/spec/findings.md,
    what the tools never do)."""
    return [dict(link, after_demotion=link["finding_version"] > demoted) for link in links]


def check_move(call: Call, machine: str, source: str, target: str, facts: dict) -> None:
    """Refuse the move `source` -> `target` unless a transition allows it via this call's tool."""
    facts = dict(facts, **{k: call.judge(facts[k]) for k in LINK_LISTS if k in facts})
    blocked = call.states.check(machine, source, target, facts, via=call.tool, role=call.role)
    if blocked is not None:
        extra = {"guard": blocked.guard} if blocked.guard else {}
        raise GroundrulesError(blocked.code, blocked.message, machine=machine, **extra, **_weighed(facts, blocked.guard))


def check_stay(call: Call, machine: str, state: str, facts: dict) -> None:
    """Refuse a call that leaves `state` as it is (revalidation) where the machine forbids it: its
    `requires` guards, and the guards of its `stays` for this state and tool."""
    facts = dict(facts, **{k: call.judge(facts[k]) for k in LINK_LISTS if k in facts})
    blocked = call.states.check_stay(machine, state, facts, via=call.tool, role=call.role)
    if blocked is not None:
        raise GroundrulesError(blocked.code, blocked.message, machine=machine, guard=blocked.guard,
                               **_weighed(facts, blocked.guard))


def _weighed(facts: dict, guard: str) -> dict:
    """A guard's refusal says how each link it weighed was judged (`support`), so the caller sees
    why the evidence did not count."""
    return {"support": [shown(link) for link in facts["basis"]]} if guard and facts.get("basis") else {}


def check_requires(call: Call, machine: str, state: str, facts: dict) -> None:
    """Refuse any write to a record whose machine's `requires` guards fail (a superseded record)."""
    blocked = call.states.check_requires(machine, state, facts, via=call.tool, role=call.role)
    if blocked is not None:
        raise GroundrulesError(blocked.code, blocked.message, machine=machine, guard=blocked.guard)
