"""The order in which a lane's freed slots go to waiting principals (dispatch.FairLane), without
a server: a flooding principal's queue never empties, and another's one call must not wait it out."""
from __future__ import annotations

import anyio

from groundrules.transports.dispatch import FairLane


def grants(capacity: int, queued: list[str]) -> list[str]:
    """The principals in the order their calls got a slot, when `queued` all wait on a full lane
    (each call holding its slot until the next event loop turn)."""
    order: list[str] = []

    async def run() -> None:
        lane = FairLane(capacity)
        for _ in range(capacity):
            await lane.acquire("holder")

        async def call(principal: str) -> None:
            await lane.acquire(principal)
            order.append(principal)
            await anyio.sleep(0)
            lane.release(principal)

        async with anyio.create_task_group() as tasks:
            for principal in queued:
                tasks.start_soon(call, principal)
                await anyio.sleep(0)            # queued in this order
            for _ in range(capacity):
                lane.release("holder")
    anyio.run(run)
    return order


def test_a_principal_that_always_waits_does_not_go_first_among_equals():
    order = grants(1, ["flood"] * 5 + ["victim"])
    assert order.index("victim") == 1                    # right after the flood's first call


def test_two_waiting_principals_alternate():
    order = grants(1, ["a"] * 4 + ["b"] * 4)
    assert order == ["a", "b"] * 4


def test_a_freed_slot_goes_to_the_principal_running_fewest():
    order = grants(2, ["a", "a", "a", "b"])
    assert order[:2] == ["a", "b"]                       # a runs one when the second slot frees
