"""Rotating the decision key (issue 35, item 3): the keyring opens rows sealed under a retired key,
`groundrules decisions rekey` re-seals them under the current one, and after two rotations the
newest key alone opens every decision: a rotation loses none. On both backends."""
from __future__ import annotations

import json
from pathlib import Path

from groundrules import Caller
from groundrules.cli.main import main
from groundrules.decision_log.crypto import DecisionKey, DecisionKeyring
from groundrules.decision_log.log import DecisionLog
from groundrules.store.keystore import SqliteKeyStore

from decision_support import KEY_MATERIAL, START

AGENT = Caller("agent-a", "agent", ("p1",))


def lock_args(text: str) -> dict:
    return {"message": {"id": "m1", "role": "user", "content": text}}


def log_some(make_service, key, n: int) -> list[str]:
    service = make_service(key=key)
    ids = [service.call("lock_message", lock_args(f"微信 wx_rot{n}{i:02d}"), AGENT)["decision"] for i in range(3)]
    service.decisions.close()
    return ids


def payloads(db, keys_path, ring) -> dict:
    """{decision id: its arguments' content} of every row the ring opens; the count it does not."""
    log = DecisionLog(db, key=ring, data_keys=SqliteKeyStore(keys_path), purge_every_s=None)
    try:
        return {row["id"]: log.opened(row)["arguments"]["message"]["content"] for row in log.rows()}
    finally:
        log.close()


def rekey(db, keys_path: Path, folder: Path, current: bytes, retired: list[bytes], capsys) -> dict:
    files = []
    for n, material in enumerate([current, *retired]):
        path = folder / f"key{n}"
        path.write_bytes(material)
        files.append(str(path))
    argv = ["decisions", "rekey", "--db", str(db), "--project", "p1", "--role", "reviewer",
            "--key-store", str(keys_path), "--decision-key", files[0], "--step-clock", START]   # START: no purge
    for f in files[1:]:
        argv += ["--retired-decision-key", f]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["data"]


def test_two_rotations_lose_no_decision(make_service, db, tmp_path, capsys):
    keys_path = Path(f"{db}.keys") if isinstance(db, Path) else tmp_path / "keys"
    first, second, third = KEY_MATERIAL, b"the second decision key, 32+ bytes long", b"the third decision key, 32 bytes or more"
    logged = log_some(make_service, DecisionKey(first), 1)
    # rotation 1: the new key seals new rows, the retired one still opens the old
    ring = DecisionKeyring(DecisionKey(second), [DecisionKey(first)])
    logged += log_some(make_service, ring, 2)
    before = payloads(db, keys_path, ring)
    assert sorted(before) == sorted(logged)
    done = rekey(db, keys_path, tmp_path, second, [first], capsys)
    assert done == {"resealed": 3, "current": DecisionKey(second).id, "unreadable": 0}
    assert payloads(db, keys_path, DecisionKey(second)) == before                # the retired key is not needed
    assert rekey(db, keys_path, tmp_path, second, [first], capsys)["resealed"] == 0   # safe to run again
    # rotation 2
    ring = DecisionKeyring(DecisionKey(third), [DecisionKey(second)])
    logged += log_some(make_service, ring, 3)
    done = rekey(db, keys_path, tmp_path, third, [second], capsys)
    assert done == {"resealed": 6, "current": DecisionKey(third).id, "unreadable": 0}
    after = payloads(db, keys_path, DecisionKey(third))
    assert sorted(after) == sorted(logged) and {k: after[k] for k in before} == before


def test_a_row_no_key_of_the_ring_opens_is_counted_not_lost(make_service, db, tmp_path, capsys):
    keys_path = Path(f"{db}.keys") if isinstance(db, Path) else tmp_path / "keys"
    logged = log_some(make_service, DecisionKey(KEY_MATERIAL), 1)
    other = b"another decision key, 32 bytes or more!"
    done = rekey(db, keys_path, tmp_path, other, [], capsys)
    assert done["resealed"] == 0 and done["unreadable"] == len(logged)
    ring = DecisionKeyring(DecisionKey(other), [DecisionKey(KEY_MATERIAL)])
    assert sorted(payloads(db, keys_path, ring)) == sorted(logged)                 # still there, still opens
