"""The decision log: every call a Service answers, appended per project to the ledgers' database,
its arguments and answer sealed with the operator's key, masked and kept as rules/decision_masking.yaml
says.

The call's own path does almost nothing: `record` takes an id and the time, and queues the JSON
texts Service.call made anyway while checking the arguments and the answer. A writer thread drains
the queue in batches (one transaction each, a few milliseconds apart): it applies the masking
table (paths never kept are removed before anything is sealed), seals, appends, and purges what
retention says is too old. `flush` waits until everything recorded before it is committed; `close`
(also run at interpreter exit) drains the queue first, so a clean shutdown loses no decision of an
answered call. A process killed outright (SIGKILL, power loss) loses the decisions still queued,
at most the last batch interval's; each batch is one transaction, so none is ever half-written.
If the database refuses a batch, the writer keeps it and retries; past `max_pending` queued
decisions new ones are counted in `dropped` and not kept, so a stalled database never stalls a call.
"""
from __future__ import annotations

import atexit
import copy
import itertools
import json
import logging
import secrets
import threading
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol

from ..core import codes, rulebook as rulebooks
from ..core.errors import GroundrulesError, StorageFailure
from ..core.messages import refused
from . import crypto, masking, times

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..store.protocols import DecisionStore
    from ..store.keystore import MemoryKeyStore

log = logging.getLogger("groundrules.decision_log")
UNKNOWN_TOOL = "(unknown)"
CURRENT_PROJECT = "current"


class _Ids:
    """D-<48 random bits for this log>-<counter>: unique across the processes sharing a database,
    and a counter's cost on the call's path."""

    def __init__(self):
        self._prefix = f"D-{secrets.token_hex(6)}-"
        self._count = itertools.count(1)

    def new(self, prefix: str) -> str:
        return f"{self._prefix}{next(self._count):x}"


class _Writer:
    """What every DecisionLog over one store shares, whichever rulebook each masks by: the queue
    and the thread that drains it, the store, the key, ids, clock and counters, and the retention
    in force: the masking table of the newest rulebook that has recorded a decision (a reload's
    rulebook takes over retention with the first call it answers, and a reload that failed
    after its log was made never does)."""

    def __init__(self, store: DecisionStore, key: crypto.DecisionKeyring, data_keys: MemoryKeyStore | None, ids: Any,
                 clock: Callable[[], str | int],
                 timer: Callable[[], int], batch_s: float, max_pending: int, purge_every_s: float | None,
                 masking_table: Any):
        from ..api import TOOLS
        self.store, self.key, self.ids, self.clock, self.timer = store, key, ids, clock, timer
        self.data_keys = data_keys
        self.tools = frozenset(TOOLS)
        self._batch_s, self.max_pending, self._purge_every = batch_s, max_pending, purge_every_s
        self.pending: deque = deque()
        self.wake = threading.Event()
        self.closing = False
        self.dropped = 0
        self.failures = 0
        self.retention, self.generation = masking_table, 0
        self.generations = itertools.count(1)
        self._purge_due = False
        self._retention_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="groundrules-decision-log", daemon=True)
        self._thread.start()
        atexit.register(self.close)

    def take_retention(self, table: Any, generation: int) -> None:
        """`table`'s retention is in force from now (and enforced at the writer's next batch)."""
        with self._retention_lock:
            if generation > self.generation:
                self.retention, self.generation = table, generation
                if self._purge_every is not None:
                    self._purge_due = True
                    self.wake.set()

    def _run(self) -> None:
        last_purge = None
        retry: list = []
        backoff = 0.1
        while True:
            self.wake.wait(timeout=60.0)
            if not self.closing:
                time.sleep(self._batch_s)            # let a batch gather
            self.wake.clear()
            batch, markers = retry, list[threading.Event]()
            while self.pending:
                item = self.pending.popleft()
                (markers if isinstance(item, threading.Event) else batch).append(item)
            retry = []
            latest = None
            if batch:
                try:
                    rows = [self._row(item) for item in batch]
                    self.store.append(rows)
                    latest = rows[-1]["at"]
                    backoff = 0.1
                except StorageFailure as exc:
                    self.failures += 1
                    log.error("decision log: a batch of %d was not written (%s); retrying", len(batch), exc.kind)
                    retry = batch
                    if self.closing:
                        log.error("decision log closing: %d decision(s) not written", len(batch))
                        retry = []
                    else:
                        time.sleep(backoff)
                        backoff = min(backoff * 2, 5.0)
                        self.wake.set()
            now = time.monotonic()
            if not self.closing and self._purge_every is not None and (
                    self._purge_due or last_purge is None or now - last_purge >= self._purge_every):
                last_purge, self._purge_due = now, False
                try:                                    # "now" is the newest decision's time when there is one:
                    self.purge(self.retention, latest)  # an injected clock is read once per decision only
                except StorageFailure as exc:
                    log.error("decision log: retention not enforced this time (%s)", exc.kind)
            if not retry:                               # a flush also waits for the retention this batch was due
                for marker in markers:
                    marker.set()
            else:
                self.pending.extendleft(reversed(markers))
            if self.closing and not self.pending and not retry:
                return

    def _row(self, item: tuple) -> dict:
        (decision, at, duration, tool, principal, role, auth, project, arguments, arguments_text, ok, error,
         rulebook, text, table) = item
        known = isinstance(tool, str) and tool in self.tools
        name = tool if known else UNKNOWN_TOOL
        policy = table.policy(name)
        row = {"project": project, "id": decision, "at": times.text(at), "principal": principal, "role": role,
               "tool": name, "rulebook": rulebook, "ok": int(bool(ok)),
               "error_code": error.get("code") if isinstance(error, dict) else None,
               "duration_us": max(0, duration // 1000), "key_id": None, "sealed": None}
        if policy.whole:
            return dict(row, kept="none", dropped='["all"]')
        dropped: list = []
        if arguments_text is None:                  # not JSON: refused as such, nothing to keep
            arguments_text, dropped = "null", ["arguments"]
        # how the caller was authenticated (api.Authentication) is kept with what it asked, sealed
        auth_text = json.dumps(auth, ensure_ascii=False)
        payload = f'{{"auth":{auth_text},"arguments":{arguments_text},"answer":{text or "null"}'
        if policy.never_keep:
            doc = {"auth": auth, "arguments": json.loads(arguments_text), "answer": json.loads(text) if text else None}
            removed = [".".join(p) for p in policy.never_keep if masking.drop(doc, p)]
            if removed:
                dropped += removed
                payload = json.dumps(doc, ensure_ascii=False)[:-1]
        if not known:
            payload += f',"tool":{json.dumps(tool if isinstance(tool, str) else None, ensure_ascii=False)}'
        plaintext, aad = (payload + "}").encode("utf-8"), crypto.associated(project, decision)
        if self.data_keys is not None:
            plaintext = crypto.seal_with_data_key(self.data_keys, plaintext, aad)
        sealed = self.key.seal(plaintext, aad)
        return dict(row, kept="part" if dropped else "all", dropped=json.dumps(dropped), key_id=self.key.id,
                    sealed=sealed)

    def flush(self, timeout: float | None) -> bool:
        marker = threading.Event()
        self.pending.append(marker)
        self.wake.set()
        return marker.wait(timeout)

    def close(self) -> None:
        if self.closing:
            return
        atexit.unregister(self.close)
        self.closing = True
        self.wake.set()
        self._thread.join()
        self.store.close()

    def purge(self, table: Any, now: str | None) -> int:
        now = now or times.text(self.clock())
        cutoffs = {tool: times.days_before(now, p.retention_days) for tool, p in table.tools.items()}
        deleted = self.store.purge(cutoffs, times.days_before(now, table.default_days))
        if deleted:
            self.store.forget()
        return deleted


class _Sealed(Protocol):
    """What the payload readers of DecisionLog (opened, texts) need of the object they read for:
    an export (export.ExportedLog) and a Spark worker's opener (spark_replay) borrow them."""

    @property
    def key(self) -> crypto.DecisionKeyring: ...

    @property
    def data_keys(self) -> MemoryKeyStore | None: ...

    def _inner(self, row: dict) -> bytes: ...

    def _plaintext(self, row: dict) -> str | None: ...


class _Masks(Protocol):
    """What DecisionLog.mask needs of the object it masks for: an export borrows it too."""

    masking: Any

    def _masked(self, value: Any) -> str: ...


class DecisionLog:
    """The log over `store` (a store object, or the ledgers' SQLite path / postgresql:// URI).

    `key`: a crypto.DecisionKey or DecisionKeyring (retired keys open older rows); `data_keys`: the
    key store (store/keystore.py) each payload is sealed under a data key of, inside the decision
    key, so that a redaction erases a logged copy by destroying its key; `rulebook`: the one whose decision_masking table applies; `ids`
    (`.new("D")`) and `clock` (ISO 8601 text, or epoch ns) are injected for reproducible logs, the
    defaults random ids and the wall clock; `timer` measures durations (ns); retention is enforced
    on start and every `purge_every_s` (None: only when `purge` is called). `with_rulebook` gives
    the same log masked and kept by another rulebook's table (a rule reload)."""

    def __init__(self, store: DecisionStore | str | Path | None, *, key: crypto.DecisionKey | crypto.DecisionKeyring,
                 data_keys: MemoryKeyStore | None = None, rulebook: Any = None, ids: Any = None,
                 clock: Callable[[], str | int] | None = None, timer: Callable[[], int] = time.perf_counter_ns,
                 batch_ms: float = 20.0, max_pending: int = 100_000, purge_every_s: float | None = 3600.0):
        self.masking = _table(rulebook or rulebooks.default())
        if store is None or isinstance(store, (str, Path)):
            from ..store import open_decision_store
            store = open_decision_store(store if store is not None else ":memory:")
        key = crypto.ring(key)
        self._writer = _Writer(store, key, data_keys, ids or _Ids(), clock or time.time_ns, timer, batch_ms / 1000,
                               max_pending, purge_every_s, self.masking)
        self._generation = 0
        self.store, self.key, self.timer = store, key, timer

    def with_rulebook(self, rulebook: Any) -> "DecisionLog":
        """This log (its store, queue and writer) masking by `rulebook`'s decision_masking table:
        every decision recorded through it is masked by that table, and its retention is in force
        from the first one. Refuses a rulebook without the table, as opening the log would."""
        fresh = copy.copy(self)
        fresh.masking = _table(rulebook)
        fresh._generation = next(self._writer.generations)
        return fresh

    @property
    def dropped(self) -> int:
        """Decisions not kept because the queue was full (a stalled database)."""
        return self._writer.dropped

    @property
    def failures(self) -> int:
        """Batches the database refused (each retried until written)."""
        return self._writer.failures

    # -- the call's path ------------------------------------------------------------------------
    def record(self, tool: Any, arguments: Any, arguments_text: str | None, caller: Any,
               envelope: Mapping[str, Any], text: str | None, started: int) -> str:
        """Queue one answered call; returns its decision id (the envelope's `decision`)."""
        writer = self._writer
        if writer.generation < self._generation:   # the first decision of a reloaded rulebook
            writer.take_retention(self.masking, self._generation)
        decision = writer.ids.new("D")
        item = (decision, writer.clock(), self.timer() - started, tool, caller.principal, caller.role,
                caller.auth.as_json(),
                _project(arguments, caller.projects), arguments, arguments_text, envelope["ok"],
                envelope["error"], envelope["rulebook"], text, self.masking)
        if len(writer.pending) >= writer.max_pending:
            writer.dropped += 1
            if writer.dropped == 1 or writer.dropped % 10_000 == 0:
                log.error("decision log falling behind: %d decision(s) not kept", writer.dropped)
            return decision
        writer.pending.append(item)
        if not writer.wake.is_set():
            writer.wake.set()
        return decision

    def flush(self, timeout: float | None = 30.0) -> bool:
        """Wait until every decision recorded before this call is committed (False on timeout)."""
        return self._writer.flush(timeout)

    def close(self) -> None:
        """Write every queued decision, then stop the writer and close the store (of every log
        `with_rulebook` made of this one: they share them)."""
        self._writer.close()

    # -- retention ------------------------------------------------------------------------------
    def purge(self, now: str | None = None) -> int:
        """Delete the decisions older than their tool's retention in this log's table; returns how many."""
        return self._writer.purge(self.masking, now)

    # -- reading --------------------------------------------------------------------------------
    def opened(self: _Sealed, row: dict) -> dict | None:
        """A row's arguments and answer ({"arguments", "answer"}), or None when nothing was kept."""
        text = self._plaintext(row)
        return None if text is None else json.loads(text)

    def texts(self: _Sealed, row: dict) -> tuple[str, str] | None:
        """(arguments, answer) as the JSON texts the Service made, when the payload holds them as
        written (nothing masked away); else None. Inside either text a nested key is followed by
        ', ' and ': ', so the payload's own ',"answer":' is found once, where it was put."""
        if row["sealed"] is None or row["dropped"] != "[]":
            return None
        payload = self._plaintext(row)
        at = payload.find(',"answer":') if payload is not None else -1
        if payload is None or not payload.startswith('{"arguments":') or at < 0:
            return None
        return payload[13:at], payload[at + 10:-1]

    def _inner(self: _Sealed, row: dict) -> bytes:
        return self.key.open(row["sealed"], crypto.associated(row["project"], row["id"]), row["key_id"])

    def _plaintext(self: _Sealed, row: dict) -> str | None:
        """The row's payload; None when nothing was kept, or a redaction destroyed its data key."""
        if row["sealed"] is None:
            return None
        plain = crypto.open_with_data_key(self.data_keys, self._inner(row),
                                          crypto.associated(row["project"], row["id"]))
        return None if plain is None else plain.decode("utf-8")

    @property
    def data_keys(self) -> MemoryKeyStore | None:
        """The key store the payloads' data keys are in (an export's replay needs it too)."""
        return self._writer.data_keys

    def rows(self, **filters: Any) -> Iterator[dict]:
        """Every row the filters keep, in append order (promote, tests)."""
        self.flush()
        return self.store.scan(**filters)

    def pages(self, **filters: Any) -> Iterator[list[dict]]:
        """`rows` a page at a time (replay streams a log of any size through a page's memory)."""
        self.flush()
        return self.store.pages(**filters)

    def now(self) -> str:
        return times.text(self._writer.clock())

    def read(self, arguments: dict, *, project: str) -> dict:
        """The read_decisions tool: a page of the project's log, newest first, or one decision."""
        self.flush()
        table = self.masking
        since = None
        if "since" in arguments:
            since = times.since(arguments["since"], self.now())
            if since is None:
                raise GroundrulesError(codes.INVALID_ARGUMENT, table.message("bad_time", value=arguments["since"][:40]),
                                       field="since")
        before = None
        if "before" in arguments:
            before = self.store.seq_of(project, arguments["before"])
            if before is None:
                raise GroundrulesError(codes.DECISION_NOT_FOUND, table.message(
                    "not_found", decision=arguments["before"][:40], project=project), field="before")
        limit = arguments.get("limit", 20)
        outcome = arguments.get("outcome")
        rows = self.store.page(project, decision_id=arguments.get("decision_id"), tool=arguments.get("tool"),
                               since=since, ok=None if outcome is None else outcome == "ok", before=before,
                               limit=limit + 1)
        if "decision_id" in arguments and not rows:
            raise GroundrulesError(codes.DECISION_NOT_FOUND, table.message(
                "not_found", decision=arguments["decision_id"][:40], project=project), field="decision_id")
        shown = [self.view(r, reveal=bool(arguments.get("reveal"))) for r in rows[:limit]]
        return {"decisions": shown, "next": rows[limit - 1]["id"] if len(rows) > limit else None}

    def view(self, row: dict, *, reveal: bool = False) -> dict:
        """A row as read_decisions shows it: personal values masked unless `reveal`."""
        doc = self.opened(row)
        if doc is not None and not reveal:
            self.mask(row["tool"], doc)
        out = {"id": row["id"], "at": row["at"], "principal": row["principal"], "role": row["role"],
               **({"auth": doc["auth"]} if doc and "auth" in doc else {}), "project": row["project"], "tool": row["tool"], "rulebook": row["rulebook"], "ok": bool(row["ok"]),
               "error_code": row["error_code"], "duration_us": row["duration_us"], "kept": row["kept"],
               "dropped": json.loads(row["dropped"])}
        if row["erased_by"] is not None:
            out["erased_by"] = row["erased_by"]
        out["arguments"] = doc["arguments"] if doc else None
        out["answer"] = doc["answer"] if doc else None
        return out

    def mask(self: _Masks, tool: str, doc: dict) -> dict:
        """Replace, in place, every value at the tool's personal paths by the table's mask."""
        for path in self.masking.policy(tool).personal:
            masking.replace(doc, path, self._masked)
        return doc

    def _masked(self: _Masks, value: Any) -> str:
        chars = len(value) if isinstance(value, str) else len(json.dumps(value, ensure_ascii=False))
        return self.masking.message("masked", chars=chars)

    # -- key rotation ---------------------------------------------------------------------------
    def rekey(self, batch: int = 500) -> dict:
        """Re-seal every row sealed under a retired key under the current one, a batch per
        transaction (the data key inside stays: only the decision key's layer changes). Answers
        {"resealed", "current", "unreadable"}: the rows no key of the ring opens stay as they are."""
        self.flush()
        current, resealed, unreadable = self.key.id, 0, 0
        for page in self.store.pages(size=batch):
            updates = []
            for row in page:
                if row["sealed"] is None or row["key_id"] == current:
                    continue
                aad = crypto.associated(row["project"], row["id"])
                try:
                    inner = self.key.open(row["sealed"], aad, row["key_id"])
                except GroundrulesError:
                    unreadable += 1
                    continue
                updates.append((row["project"], row["id"], row["key_id"], current, self.key.seal(inner, aad)))
            if updates:
                self.store.reseal(updates)
                resealed += len(updates)
        if resealed:
            self.store.forget()
        return {"resealed": resealed, "current": current, "unreadable": unreadable}

    # -- erasure --------------------------------------------------------------------------------
    def erase_copies(self, project: str, removed: list[dict]) -> "_Erasure":
        """The plan to erase every logged decision of `project` holding one of these personal values
        (one dict of field -> value per record a redaction clears), as a whole JSON string, or inside
        a longer one when the value is long enough (erasure.substring_min_chars): the data keys of
        those decisions, which the redaction destroys with its own, and `finish`, which then clears
        their rows, and those of decisions whose keys an earlier erasure destroyed without clearing
        them (its commit failed: this one completes it). Refuses (DECISION_UNREADABLE) before anything changed when a decision of the
        project does not open with the keys given (a retired key left out)."""
        needles = set()
        for fields in removed:
            for value in _strings(fields):
                quoted = json.dumps(value, ensure_ascii=False)
                needles.add(quoted)
                if len(value) >= self.masking.substring_min_chars:
                    needles.add(quoted[1:-1])
        hits, keys = [], []
        self.flush()
        for row in self.store.scan(projects=[project]):
            if row["sealed"] is None:
                continue
            text = self._plaintext(row)
            if text is None:                # its data key went with an erasure whose rows were not cleared: clear them
                hits.append(row["id"])
            elif needles and any(n in text for n in needles):
                hits.append(row["id"])
                key = crypto.data_key_of(self._inner(row))
                if key is not None:
                    keys.append(key)
        return _Erasure(self, project, hits, keys)


class _Erasure:
    """What a redaction erases of the decision log: `keys` to destroy with it, then `finish`."""

    def __init__(self, log: DecisionLog, project: str, hits: list[str], keys: list[str]):
        self.log, self.project, self.hits, self.keys = log, project, hits, keys

    def finish(self, redaction_id: str) -> dict:
        """Clear the rows (their data keys are gone already) and say where: {"decisions": ids}."""
        if self.hits:
            self.log.store.erase(self.project, self.hits, redaction_id)
            self.log.store.forget()
        return {"decisions": self.hits}


def _table(book: Any) -> Any:
    table = masking.of(book)
    if table is None:
        raise refused(book, codes.RULEBOOK_INCOMPLETE, "rulebook.no_decision_masking")
    return table


def _project(arguments: Any, projects: tuple) -> str:
    """The project a call is logged under: the one it names when the caller is granted it, else the
    caller's current one (a refused call is kept in the caller's partition, not the one it named)."""
    named = arguments.get("project") if arguments.__class__ is dict else None
    if named is not None and named != CURRENT_PROJECT and named in projects:
        return named
    return projects[0] if projects else ""


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        if value:
            yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif value is not None and not isinstance(value, bool):
        yield str(value)
