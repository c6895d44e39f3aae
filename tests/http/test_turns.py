"""Turns on the interpreter (transports/turns.py): a principal that floods waits behind one that
sends a request at a time, between the parts of a request as well as before it; a part that outlasts
its turn lets the next one start; nothing is lost when a waiting request goes away. Orders, never
durations."""
from __future__ import annotations

import asyncio
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx2
from groundrules import Caller
from groundrules.transports.dispatch import Dispatcher
from groundrules.transports.http_guard import OFF_LOOP_BYTES
from groundrules.transports.settings import ServerSettings
from groundrules.transports.turns import CURRENT, Turns
from test_shared_server import ALPHA, BETA, serve
from http_support import CALLERS
from wire import Wire, envelope

LONG = 60.0          # a turn limit no test reaches: turns change hands only as the test says


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 30))


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_a_freed_turn_goes_to_the_principal_with_fewest_requests_in_service_then_the_longest_unserved():
    async def scenario() -> list[str]:
        turns, order = Turns(1, LONG), []

        async def request(principal: str, hold: asyncio.Event | None = None) -> None:
            turn = await turns.take(principal)
            order.append(principal)
            if hold is not None:
                await hold.wait()
            turns.done(turn)

        first = asyncio.Event()
        tasks = [asyncio.create_task(request("flood", first))]
        await settle()
        tasks += [asyncio.create_task(request("flood")) for _ in range(3)]
        await settle()
        tasks += [asyncio.create_task(request("victim")), asyncio.create_task(request("other"))]
        await settle()
        assert turns.waiting == 5
        first.set()
        await asyncio.gather(*tasks)
        assert turns.waiting == 0
        return order
    assert run(scenario()) == ["flood", "victim", "other", "flood", "flood", "flood"]


def test_at_a_checkpoint_a_request_lets_whoever_waits_go_first_and_keeps_its_turn_when_nobody_does():
    async def scenario() -> list[str]:
        turns, order = Turns(1, LONG), []
        turn = await turns.take("long")
        await turn.checkpoint()                      # nobody waits: no turn changes hands
        order.append("long: part 1")

        async def short() -> None:
            mine = await turns.take("short")
            order.append("short")
            turns.done(mine)
        waiting = asyncio.create_task(short())
        await settle()
        assert order == ["long: part 1"]             # the turn is still the long request's
        await turn.checkpoint()
        order.append("long: part 2")
        turns.done(turn)
        await waiting
        return order
    assert run(scenario()) == ["long: part 1", "short", "long: part 2"]


def test_a_part_that_outlasts_its_turn_lets_the_next_request_start_beside_it():
    async def scenario() -> list[str]:
        turns, order = Turns(1, 0.01), []
        stuck = await turns.take("stalled")          # a part waiting on a stopped database, say

        async def other() -> None:
            mine = await turns.take("other")
            order.append("other served")
            turns.done(mine)
        await other()                                # served although the first never gave its turn back
        order.append("stalled still in service")
        await stuck.checkpoint()                     # its next part waits its turn again
        order.append("stalled: next part")
        turns.done(stuck)
        return order
    assert run(scenario()) == ["other served", "stalled still in service", "stalled: next part"]


def test_a_request_that_goes_away_while_it_waits_takes_no_turn_with_it():
    async def scenario() -> None:
        turns = Turns(1, LONG)
        held = await turns.take("a")
        gone = asyncio.create_task(turns.take("b"))
        await settle()
        assert turns.waiting == 1
        gone.cancel()
        await settle()
        assert turns.waiting == 0
        turns.done(held)
        again = await asyncio.wait_for(turns.take("c"), 5)       # the turn is free, not lost
        turns.done(again)
        turns.done(again)                            # and a second `done` gives back nothing more
        last = await asyncio.wait_for(turns.take("d"), 5)
        other = asyncio.create_task(turns.take("e"))
        await settle()
        assert not other.done()                      # one turn, held by d: the double done took none
        turns.done(last)
        turns.done(await other)
    run(scenario())


def test_a_finished_requests_turn_is_no_turn_at_all():
    """A stale turn (a session's context outliving the request that set it) never takes a turn."""
    async def scenario() -> None:
        turns = Turns(1, LONG)
        old = await turns.take("a")
        turns.done(old)
        holder = await turns.take("b")
        await asyncio.wait_for(old.checkpoint(), 5)  # returns at once, though b holds the only turn
        turns.done(holder)
    run(scenario())


# ------------------------------------------------------------------------------ over HTTP

def _waiting(url: str) -> int:
    text = httpx2.get(url.removesuffix("/mcp") + "/metrics").text
    return int(float(re.search(r"^groundrules_requests_waiting (\S+)$", text, re.M).group(1)))


def _until(condition, what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.01)


def test_over_http_a_flooding_principal_waits_behind_one_that_sends_a_request_at_a_time(tmp_path, rulebook):
    """alpha's first call holds the only turn; four more of alpha's wait, then one of beta's: beta's
    is served next, before any of alpha's that came before it."""
    first = threading.Event()
    served: list[str] = []

    def held(tool, caller) -> bool:
        served.append(caller.principal)
        if first.is_set():
            return False
        first.set()
        return True
    settings = ServerSettings(turns=1, turn_limit_s=LONG)
    service, server = serve(tmp_path, rulebook, settings, held=held)
    with server as url, ThreadPoolExecutor(6) as pool:
        alpha, beta = Wire(url, ALPHA), Wire(url, BETA)
        flood = [pool.submit(alpha.call, None, "query_findings", {})]
        service.wait_arrived()
        flood += [pool.submit(alpha.call, None, "query_findings", {}) for _ in range(4)]
        _until(lambda: _waiting(url) == 4, "alpha's four wait")
        victim = pool.submit(beta.call, None, "query_findings", {})
        _until(lambda: _waiting(url) == 5, "beta's call waits too")
        service.release.set()
        assert envelope(victim.result(30))["ok"] and all(envelope(f.result(30))["ok"] for f in flood)
    alpha_name, beta_name = CALLERS[ALPHA][0], CALLERS[BETA][0]
    assert served == [alpha_name, beta_name] + [alpha_name] * 4


def test_a_body_parsed_beside_the_loop_is_served_in_its_turn(tmp_path, rulebook):
    """A body past OFF_LOOP_BYTES is parsed in a thread, then its request lets whoever waits go
    first: answered as any other, while another principal's calls are answered too."""
    service, server = serve(tmp_path, rulebook, ServerSettings(turns=1))
    tags = ["t" * 40] * (OFF_LOOP_BYTES // 40 + 1)
    with server as url, ThreadPoolExecutor(4) as pool:
        alpha, beta = Wire(url, ALPHA), Wire(url, BETA)
        big = [pool.submit(alpha.call, None, "log_finding", {"claim_kind": "diagnosis", "statement": "x", "tags": tags})
               for _ in range(3)]
        small = [pool.submit(beta.call, None, "query_findings", {}) for _ in range(3)]
        assert all(envelope(f.result(30))["ok"] for f in small)
        for answer in (envelope(f.result(30)) for f in big):
            assert (answer["ok"], answer["error"]["code"], answer["error"]["field"]) == (False, "INVALID_ARGUMENT", "tags")


def test_a_call_waiting_for_a_worker_thread_holds_no_turn(tmp_path, rulebook):
    """The only ledger thread is taken (by a call from outside any turn, held): a request whose
    call queues for it gives its turn up meanwhile, so another principal's request is served."""
    alpha, beta = (Caller(*CALLERS[token][:2], tuple(CALLERS[token][2])) for token in (ALPHA, BETA))
    service, _ = serve(tmp_path, rulebook, ServerSettings(), held=lambda tool, caller: caller == alpha)
    dispatcher = Dispatcher(service, ServerSettings(ledger_threads=1))

    async def scenario() -> None:
        turns = Turns(1, LONG)
        first = asyncio.create_task(dispatcher.call("query_findings", {}, alpha))
        await asyncio.to_thread(service.wait_arrived)

        async def queued() -> dict:
            turn = await turns.take(alpha.principal)
            CURRENT.set(turn)
            try:
                return await dispatcher.call("query_findings", {}, alpha)
            finally:
                turns.done(turn)
        second = asyncio.create_task(queued())
        for _ in range(20):
            await asyncio.sleep(0)
        other = await asyncio.wait_for(turns.take(beta.principal), 5)   # not held up by the queued call
        turns.done(other)
        service.release.set()
        assert (await first)["ok"] and (await second)["ok"]
    run(scenario())
