"""Erasure in every copy (issue 35, items 1, 2 and 6): after a redaction is acknowledged, none of the
redacted values is readable in the raw database files, in any encoding, on either backend: SQLite's
file and WAL, PostgreSQL's heap and pg_wal; nor in a copy of the database taken before the
redaction, because the data keys it was sealed under are destroyed. The campaign that found 60 of
60 phone numbers in pg_wal after their redaction is what this replays, with the decision log on."""
from __future__ import annotations

import base64
import json
import re
import secrets
import shutil
from pathlib import Path

import pytest

from groundrules import Caller, EvidenceLedger, Service
from groundrules.core.errors import StorageFailure
from groundrules.decision_log.crypto import DecisionKey
from groundrules.decision_log.log import DecisionLog
from groundrules.findings import SequentialIds, StepClock
from groundrules.store import sealing
from groundrules.store.keystore import SqliteKeyStore

REVIEWER = Caller("user:dpo", "reviewer", ("alpha",))
AGENT = Caller("agent-a", "agent", ("alpha",))
SEALED = re.compile(rb'\{"key":"([0-9a-f]{24})","sealed":"[A-Za-z0-9+/=]+"')


def phone() -> tuple[str, str]:
    """A fresh valid mobile number, as written (spaced) and normalised: unique to this run, so no
    other test's bytes can stand in for it."""
    digits = "139" + "".join(secrets.choice("0123456789") for _ in range(8))
    return f"{digits[:3]} {digits[3:7]} {digits[7:]}", digits


def encodings(value: str) -> set[bytes]:
    """How a value could sit in a file: UTF-8, UTF-16 either way, JSON-escaped, and base64 at each
    of the three alignments it could start at in a longer base64 text."""
    out = {value.encode("utf-8"), value.encode("utf-16-le"), value.encode("utf-16-be"),
           json.dumps(value).encode("ascii")}
    for shift in range(3):
        text = base64.b64encode(b"\0" * shift + value.encode("utf-8"))
        out.add(text[4 if shift else 0:-4])          # the characters that depend on the value alone
    return {e for e in out if len(e) >= 6}


def files_under(*roots: Path) -> list[Path]:
    return [p for root in roots for p in ([root] if root.is_file() else sorted(root.rglob("*"))) if p.is_file()]


def found_in(paths: list[Path], values: list[str]) -> list[tuple[str, str]]:
    """(file, value) for every value readable in one of the files, in any encoding."""
    needles = {n: v for v in values for n in encodings(v)}
    hits = []
    for path in paths:
        data = path.read_bytes()
        hits += [(str(path), needles[n].__repr__()) for n in needles if n in data]
    return hits


class Scenario:
    """A ledger and a decision log on one database, sharing one key store: a user message with a
    phone number and a WeChat id, its locks, an interpretation setting the phone slot, and two
    logged calls copying the number (the append and a lock_message)."""

    def __init__(self, db, keys_path: Path, rulebook):
        ids = SequentialIds()
        self.keys = SqliteKeyStore(keys_path)
        self.evidence = EvidenceLedger(db, ids=lambda: ids.new("R"), clock=StepClock("2030-01-01T00:00:00Z"),
                                       rulebook=rulebook, keys=self.keys)
        self.log = DecisionLog(db, key=DecisionKey(b"k" * 32), data_keys=self.keys, rulebook=rulebook,
                               clock=StepClock("2030-01-01T00:00:00Z"), purge_every_s=None)
        self.service = Service(rulebook, evidence=self.evidence, decisions=self.log)
        self.written, self.digits = phone()
        self.wechat = "wx_" + secrets.token_hex(5)
        self.values = [self.written, self.digits, self.wechat]
        self.decisions: list[str] = []              # the logged calls, each holding a copy of a value
        message = {"id": "m1", "type": "message", "role": "user", "state": "sent",
                   "content": f"手机 {self.written}，微信 {self.wechat}"}
        stored = self.call("append_evidence", {"record": message}, AGENT)["records"]
        locks = [r for r in stored if r["type"] == "lock"]
        mobile = next(r for r in locks if r["lock"]["normalized_value"] == self.digits)
        self.call("append_interpretation", {"interpretation": {
            "id": "I1", "events": [{"id": "e1", "type": "set", "slot": "phone", "value": self.digits,
                                    "evidence": [mobile["id"]]}],
            "dispositions": [{"lock": r["id"], "slot": "phone" if r is mobile else "wechat"} for r in locks]}}, AGENT)
        self.call("lock_message", {"message": {"id": "m9", "role": "user", "content": f"再说一遍 {self.written}"}},
                  AGENT)
        assert self.log.flush()
        self.locks = [r["id"] for r in locks]

    def call(self, tool: str, arguments: dict, caller: Caller) -> dict:
        answer = self.service.call(tool, arguments, caller)
        assert answer["ok"], answer["error"]
        self.decisions.append(answer["decision"])
        return answer["data"]

    def close(self) -> None:
        self.log.close()
        self.evidence.close()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request, tmp_path):
    """(db, the files that hold the database, a callable that makes them current on disk)."""
    if request.param == "sqlite":
        db = tmp_path / "ledger.db"
        return db, lambda: [db, Path(f"{db}-wal")], lambda: None
    import psycopg
    cluster = request.getfixturevalue("pg_cluster")
    name = cluster.fresh_database()
    request.addfinalizer(lambda: cluster.drop(name))
    uri = cluster.uri(name)
    data = Path(cluster.folder) / "data"

    def checkpoint() -> None:
        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute("CHECKPOINT")
    return uri, lambda: [data / "base", data / "pg_wal", data / "global"], checkpoint


@pytest.mark.extended
def test_no_redacted_value_is_readable_in_any_file_or_in_a_copy_taken_before(backend, rulebook, tmp_path):
    db, files, checkpoint = backend
    scenario = Scenario(db, tmp_path / "keys", rulebook)
    try:
        checkpoint()
        before = tmp_path / "copy-before"
        before.mkdir()
        for n, root in enumerate(files()):
            if root.exists():
                (shutil.copytree if root.is_dir() else shutil.copy2)(root, before / f"{n}-{root.name}")
        # sealed from the start: no value is in the database in the clear, even before its redaction
        assert found_in(files_under(*[r for r in files() if r.exists()]), scenario.values) == []
        sealed_keys = set(SEALED.findall(b"".join(p.read_bytes() for p in files_under(before))))
        assert sealed_keys, "the copy holds the sealed values"
        answer = scenario.call("redact_evidence", {"record_id": "m1", "reason": "用户要求删除"}, REVIEWER)
        erased = answer["erased"]
        assert erased["records"] == ["m1", *scenario.locks] and erased["interpretations"] == ["I1"]
        assert sorted(erased["decisions"]) == sorted(scenario.decisions[:3]) and erased["keys_destroyed"] >= 6
        checkpoint()
        assert found_in(files_under(*[r for r in files() if r.exists()]), scenario.values) == []
        assert found_in(files_under(before), scenario.values) == []
        assert found_in([tmp_path / "keys"], scenario.values) == []
        # the copy's sealed values: the keys of every erased one are gone from the key store
        remaining = scenario.keys.get(sorted(k.decode() for k in sealed_keys))
        assert len(remaining) < len(sealed_keys)
        assert all(scenario.values[1] not in json.dumps(r, ensure_ascii=False)
                   for r in scenario.evidence.records(project="alpha"))
        views = scenario.call("read_decisions", {"reveal": True, "limit": 100}, REVIEWER)["decisions"]
        assert all(scenario.digits not in json.dumps(v, ensure_ascii=False) for v in views)
    finally:
        scenario.close()


def test_a_copy_of_a_sqlite_ledger_taken_before_the_redaction_no_longer_opens(rulebook, tmp_path):
    """The SQLite copy, opened as a ledger and a log with the key store they share: the redacted
    record reads as tombstones, its interpretation withdrawn, the logged copies erased."""
    scenario = Scenario(tmp_path / "ledger.db", tmp_path / "keys", rulebook)
    copy = tmp_path / "copy"
    copy.mkdir()
    try:
        scenario.evidence.store.forget()
        scenario.log.store.forget()
        shutil.copy2(tmp_path / "ledger.db", copy / "ledger.db")
        scenario.call("redact_evidence", {"record_id": "m1", "reason": "用户要求删除"}, REVIEWER)
    finally:
        scenario.close()
    keys = SqliteKeyStore(tmp_path / "keys")
    old = EvidenceLedger(copy / "ledger.db", ids=lambda: "unused", clock=lambda: "2030-01-01T00:00:00Z",
                         rulebook=rulebook, keys=keys, project="alpha")
    log = DecisionLog(copy / "ledger.db", key=DecisionKey(b"k" * 32), data_keys=keys, rulebook=rulebook,
                      purge_every_s=None)
    try:
        records = old.records()
        assert [r["id"] for r in records][:1] == ["m1"]
        assert records[0]["content"]["redacted"] is True                # in the copy, unredacted, yet unreadable
        text = json.dumps(records, ensure_ascii=False) + json.dumps(old.interpretations(), ensure_ascii=False)
        assert scenario.digits not in text and scenario.wechat not in text
        assert old.interpretations() == []
        opened = [log.opened(row) for row in log.rows()]
        assert sum(o is None for o in opened) == 3                       # the three calls that copied the number
        assert all(scenario.digits not in json.dumps(o, ensure_ascii=False) for o in opened if o is not None)
    finally:
        log.close()
        old.close()


def test_a_redaction_a_logged_copy_cannot_be_found_for_changes_nothing_and_a_retry_completes(rulebook, tmp_path):
    """Item 2: once the decision key changed and the old key is not given, the log cannot look in
    its older rows: the redaction is refused before anything changed (the record still reads, no
    key is destroyed). Given the retired key (a keyring), the retry erases everywhere."""
    scenario = Scenario(tmp_path / "ledger.db", tmp_path / "keys", rulebook)
    scenario.log.close()
    from groundrules.decision_log.crypto import DecisionKeyring
    new = DecisionKey(b"n" * 32)
    rotated = DecisionLog(tmp_path / "ledger.db", key=new, data_keys=scenario.keys, rulebook=rulebook,
                          purge_every_s=None)
    service = Service(rulebook, evidence=scenario.evidence.with_rulebook(rulebook), decisions=rotated)
    try:
        refused = service.call("redact_evidence", {"record_id": "m1", "reason": "r"}, REVIEWER)
        assert refused["error"]["code"] == "DECISION_UNREADABLE"
        assert scenario.digits in json.dumps(scenario.evidence.records(project="alpha"), ensure_ascii=False)
        assert scenario.evidence.redactions(project="alpha") == []
        rotated.close()
        ring = DecisionKeyring(new, [DecisionKey(b"k" * 32)])
        rotated = DecisionLog(tmp_path / "ledger.db", key=ring, data_keys=scenario.keys, rulebook=rulebook,
                              purge_every_s=None)
        service = Service(rulebook, evidence=scenario.evidence.with_rulebook(rulebook), decisions=rotated)
        done = service.call("redact_evidence", {"record_id": "m1", "reason": "r"}, REVIEWER)
        assert done["ok"] and sorted(done["data"]["erased"]["decisions"]) == sorted(scenario.decisions)
        assert scenario.digits not in json.dumps(scenario.evidence.records(project="alpha"), ensure_ascii=False)
    finally:
        rotated.close()
        scenario.evidence.close()


def test_a_key_store_that_fails_refuses_the_redaction_and_changes_nothing(rulebook, tmp_path):
    scenario = Scenario(tmp_path / "ledger.db", tmp_path / "keys", rulebook)
    try:
        def down(ids):
            raise OSError("key store unavailable")
        scenario.keys.destroy = down
        answer = scenario.service.call("redact_evidence", {"record_id": "m1", "reason": "r"}, REVIEWER)
        assert not answer["ok"]
        assert scenario.evidence.redactions(project="alpha") == []
        assert scenario.digits in json.dumps(scenario.evidence.records(project="alpha"), ensure_ascii=False)
        assert len(scenario.evidence.interpretations(project="alpha")) == 1
        del scenario.keys.destroy
        assert scenario.call("redact_evidence", {"record_id": "m1", "reason": "r"}, REVIEWER)["erased"]["records"]
    finally:
        scenario.close()


def test_sealed_values_are_bound_to_their_row(rulebook, tmp_path):
    """A sealed value moved to another record's row does not open there (the associated data)."""
    keys = SqliteKeyStore(tmp_path / "keys")
    sealer = sealing.Sealer(keys)
    sealed = sealer.seal({"content": "x"}, sealing.record_data("alpha", "m1"))
    assert sealer.open(sealed, sealing.record_data("alpha", "m1")) == {"content": "x"}
    with pytest.raises(ValueError):
        sealer.open(sealed, sealing.record_data("alpha", "m2"))
    sealer.destroy([sealed["key"]])
    assert sealer.open(sealed, sealing.record_data("alpha", "m1")) is None
    keys.close()


class _CommitFails:
    """The ledger's store, but the next write transaction fails at its commit (after its body ran:
    here, after the redaction destroyed its keys), as a lost connection or a full disk would."""

    def __init__(self, store):
        self.store, self.armed = store, True

    def __getattr__(self, name):
        return getattr(self.store, name)

    def run_write(self, project, body):
        if not self.armed:
            return self.store.run_write(project, body)
        self.armed = False

        def then_fail(tx):
            body(tx)
            raise StorageFailure("IOERR")
        return self.store.run_write(project, then_fail)


def test_a_redaction_whose_commit_fails_after_its_keys_went_is_completed_by_a_retry(rulebook, tmp_path):
    """The keys are the erasure: destroyed before the ledger commits, so a commit that fails then
    leaves values nobody can open (they read as tombstones) but no redaction recorded; the retry
    records it and clears the logged copies' rows."""
    scenario = Scenario(tmp_path / "ledger.db", tmp_path / "keys", rulebook)
    try:
        scenario.evidence.store = _CommitFails(scenario.evidence.store)
        failed = scenario.service.call("redact_evidence", {"record_id": "m1", "reason": "r"}, REVIEWER)
        assert failed["error"]["code"] == "STORAGE_ERROR"
        assert scenario.evidence.redactions(project="alpha") == []
        text = json.dumps(scenario.evidence.records(project="alpha"), ensure_ascii=False)
        assert scenario.digits not in text and scenario.wechat not in text           # erased all the same
        views = scenario.call("read_decisions", {"reveal": True, "limit": 100}, REVIEWER)["decisions"]
        assert all(scenario.digits not in json.dumps(v, ensure_ascii=False) for v in views)
        done = scenario.call("redact_evidence", {"record_id": "m1", "reason": "r"}, REVIEWER)
        assert done["erased"]["records"] == ["m1", *scenario.locks]
        assert sorted(done["erased"]["decisions"]) == sorted(scenario.decisions[:3])     # their rows cleared now
        assert [e["record"] for e in scenario.evidence.redactions(project="alpha")] == ["m1", *scenario.locks]
        assert scenario.evidence.interpretations(project="alpha") == []
    finally:
        scenario.close()
