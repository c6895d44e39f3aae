"""A live rule reload (SIGHUP's Reloader) takes up an edited decision_masking table with the
rest of the rulebook: each decision is masked by the table of the rulebook that answered it (a
call still on the old service keeps the old one), the new retention is enforced from the first
call the new rulebook answers, and a masking table that fails to load keeps the one in force;
against a real server on loopback."""
from __future__ import annotations

from pathlib import Path

import yaml

from groundrules import Caller, Service, load_rulebook
from groundrules.decision_log import masking, times
from groundrules.decision_log.crypto import DecisionKey
from groundrules.decision_log.log import DecisionLog
from groundrules.transports.mcp_http import GrantsVerifier, Reloader
from http_support import CALLERS, serving, write_tokens
from wire import Wire, envelope

KEY = DecisionKey(b"the operator's decision key, 32+ bytes, kept outside the database")
START = "2025-03-01T08:00:00Z"
CUT = "answer.data.locks"


def lock_args(n: int) -> dict:
    return {"message": {"id": f"m{n}", "role": "user", "content": f"手机 1380013800{n}"}}


def edit_masking(root: Path, edit) -> None:
    path = root / "rules" / "decision_masking.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")


def test_a_reload_masks_and_keeps_decisions_by_the_new_table_from_its_first_call(tmp_path, tables_copy):
    root = tables_copy
    book = load_rulebook(root)
    table = masking.of(book)
    assert "lock_message" not in [t for t, p in table.tools.items() if p.never_keep]
    old_days = table.policy("lock_message").retention_days
    now = [START]
    log = DecisionLog(tmp_path / "ledger.db", key=KEY, rulebook=book, clock=lambda: now[0], purge_every_s=3600)
    service = Service(book, decisions=log)
    agent = Caller(*CALLERS["tok-alpha"][:2], tuple(CALLERS["tok-alpha"][2]))
    try:
        with serving(service, write_tokens(tmp_path / "tokens.yaml", CALLERS)) as (url, served):
            reloader = Reloader(served, GrantsVerifier(tmp_path / "tokens.yaml", book.table("roles").roles), root)
            wire = Wire(url, "tok-alpha")
            first = envelope(wire.call(None, "lock_message", lock_args(1)))["decision"]
            new_days = 2
            assert new_days + 2 < old_days                      # what the old table would still keep

            def cut_and_shorten(data: dict) -> None:
                data["tools"]["lock_message"].update(never_keep=[CUT], retention_days=new_days)
            edit_masking(root, cut_and_shorten)
            assert reloader.reload() is True
            assert served.dispatcher.service.decisions.masking.policy("lock_message").retention_days == new_days
            now[0] = times.days_before(START, -(new_days + 2))
            in_flight = service.call("lock_message", lock_args(2), agent)["decision"]   # a call on the old service
            log.flush()
            kept = {r["id"]: r for r in log.rows()}
            assert first in kept                                # the old retention still in force: nothing purged
            reloaded = envelope(wire.call(None, "lock_message", lock_args(3)))["decision"]
            log.flush()
            rows = {r["id"]: r for r in log.rows()}
            assert first not in rows                            # the new retention, enforced from its first call
            assert (rows[in_flight]["kept"], rows[in_flight]["dropped"]) == ("all", "[]")
            assert (rows[reloaded]["kept"], rows[reloaded]["dropped"]) == ("part", f'["{CUT}"]')
            assert log.opened(rows[reloaded])["answer"]["data"] == {}

            def misspelt(data: dict) -> None:
                data["tools"]["lock_message"]["never_keep"] = ["answer.data.lokcs"]
            edit_masking(root, misspelt)
            assert reloader.reload() is False                   # a bad table keeps the one in force
            again = envelope(wire.call(None, "lock_message", lock_args(4)))["decision"]
            log.flush()
            assert {r["id"]: r for r in log.rows()}[again]["dropped"] == f'["{CUT}"]'
    finally:
        log.close()
