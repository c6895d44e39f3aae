"""Two servers writing one ledger (issue 35, item 5): `append_interpretation` was refused
OBSERVED_AFTER_NOW with two PostgreSQL servers writing. The cause: a server reads its clock, then
reads a record another server committed meanwhile (or whose clock runs a little ahead), stamped
later than its own `now`; the fold then saw a record observed after now. Under the one clock
policy no write is timed before a write it reads: the interpretation is recorded at the later
time. A record that claims to be observed later than it was recorded is still refused."""
from __future__ import annotations

import itertools

import pytest

from groundrules import EvidenceLedger
from groundrules.core.errors import GroundrulesError

AHEAD, BEHIND = "2030-01-01T00:00:01.250000Z", "2030-01-01T00:00:00Z"


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path):
    return str(tmp_path / "l.sqlite") if request.param == "sqlite" else request.getfixturevalue("pg_db")


def server(db, keys, clock: str, rulebook, prefix: str) -> EvidenceLedger:
    n = itertools.count()
    return EvidenceLedger(db, ids=lambda: f"{prefix}{next(n)}", clock=lambda: clock, rulebook=rulebook,
                          project="p1", keys=keys)


def interpretation(lock: dict) -> dict:
    return {"id": "I1", "events": [{"id": "e1", "type": "set", "slot": "wechat",
                                    "value": lock["lock"]["normalized_value"], "evidence": [lock["id"]]}],
            "dispositions": [{"lock": lock["id"], "slot": "wechat"}]}


def test_a_record_another_server_stamped_later_does_not_refuse_an_interpretation(database, tmp_path, rulebook):
    a = server(database, tmp_path / "keys", AHEAD, rulebook, "A")
    b = server(database, tmp_path / "keys", BEHIND, rulebook, "B")
    try:
        stored = a.append_message({"id": "m1", "type": "message", "role": "user", "state": "sent",
                                   "content": "微信 wx_clock01"})
        assert stored[0]["observed_at"] == AHEAD
        recorded = b.append_interpretation(interpretation(stored[1]))
        assert recorded == {"id": "I1", "recorded_at": AHEAD}            # timed after what it read
        folded = b.fold(None, AHEAD)
        assert folded["state"]["scopes"]["demand_1"]["slots"]["wechat"]["value"] == "wx_clock01"
    finally:
        a.close()
        b.close()


def test_a_record_observed_after_it_was_recorded_is_still_refused(database, tmp_path, rulebook):
    a = server(database, tmp_path / "keys", BEHIND, rulebook, "A")
    try:
        stored = a.append_message({"id": "m1", "type": "message", "role": "user", "state": "sent",
                                   "content": "微信 wx_clock02", "observed_at": AHEAD})
        with pytest.raises(GroundrulesError) as refused:
            a.append_interpretation(interpretation(stored[1]))
        assert refused.value.code == "OBSERVED_AFTER_NOW"
    finally:
        a.close()
