"""The ledger service: every tool call is validated, runs in one transaction, and answers one envelope.

`Ledger.call(tool, arguments)` never raises. A write returns only after COMMIT; any refusal or
failure rolls the whole call back, so nothing is ever half-written. Retries carrying the same
idempotency_key get the first answer back and create nothing. The tools themselves are in
tools.py; this module holds the pipeline and the helpers every tool shares.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .. import canonical
from .. import rulebook as rulebooks
from ..errors import did_you_mean
if TYPE_CHECKING:                      # rulebook imports this part's compilers
    from ..rulebook import Rulebook
from . import applicability
from .clock import Clock, Ids, RandomIds, SystemClock
from .search import grams
from .store import Store
from .validate import ArgumentChecker, shown

STATES_TABLE = "finding_states"
VOCABULARY_TABLE = "findings_vocabulary"
APPLICABILITY_TABLE = "applicability"
CHANGE_TABLE = "findings_material_change"
WARNINGS_TABLE = "findings_warnings"
CURRENT_PROJECT = "current"


class Refusal(Exception):
    """A refused call: one of the eight codes and a message rendered from the vocabulary."""

    def __init__(self, code: str, message: str, **details: Any):
        super().__init__(code)
        self.code, self.message, self.details = code, message, details

    def as_dict(self) -> dict:
        return {"code": self.code, "message": self.message, **self.details}


class Call:
    """What one tool call may use: its connection, tables, project, time and ids."""

    def __init__(self, ledger: "Ledger", conn: sqlite3.Connection, tool: str, project: str):
        self.conn, self.tool, self.project = conn, tool, project
        self.book = ledger.book
        self.vocab = ledger.book.table(VOCABULARY_TABLE)
        self.states = ledger.book.table(STATES_TABLE)
        self.ids = ledger.ids
        self.now = ledger.clock()
        self._warned: tuple | None = None
        self._undo: list[Callable[[], None]] = []

    def on_rollback(self, undo: Callable[[], None]) -> None:
        """Register how to undo an effect outside the database (a file write) if the transaction
        does not commit; undos run newest first."""
        self._undo.append(undo)

    def rolled_back(self) -> None:
        while self._undo:
            self._undo.pop()()

    def warning_rows(self, facts: dict | None) -> tuple:
        """The warnings table's fired rows for `facts` (evaluated once per call)."""
        if facts is None:
            return ()
        if self._warned is None or self._warned[0] is not facts:
            self._warned = (facts, self.book.table(WARNINGS_TABLE).evaluate(facts).fired)
        return self._warned[1]

    # -- refusals -------------------------------------------------------------------------
    def refuse(self, code: str, message: str, **params: Any) -> Refusal:
        return Refusal(code, self.vocab.message(message, **params))

    def invalid(self, field: str, problem: str) -> Refusal:
        return Refusal("INVALID_ARGUMENT", self.vocab.message("invalid_argument", field=field, problem=problem),
                       field=field)

    def choose(self, field: str, value: str, choices: dict | tuple) -> str:
        """`value` if it is one of `choices`, else INVALID_ARGUMENT naming the allowed values."""
        if value not in choices:
            hint = did_you_mean(value, choices)
            raise Refusal("INVALID_ARGUMENT", self.vocab.message(
                "unknown_value", field=field, choices=list(choices), hint=f"（{hint}）" if hint else ""),
                field=field)
        return value

    # -- records ------------------------------------------------------------------------
    def finding(self, finding_id: str) -> sqlite3.Row:
        """The finding row, refusing ids of other projects without saying anything about them."""
        row = self.conn.execute("SELECT * FROM findings WHERE id = ?", (finding_id,)).fetchone()
        if row is None:
            raise self.refuse("NOT_FOUND", "not_found", finding_id=finding_id)
        if row["project"] != self.project:
            raise self.refuse("PROJECT_SCOPE_MISMATCH", "record_in_other_project", what="finding",
                              ref=finding_id, project=self.project)
        return row

    def expect_version(self, row: sqlite3.Row, expected: int | None) -> None:
        if expected is not None and expected != row["version"]:
            raise Refusal("CONCURRENT_MODIFICATION", self.vocab.message(
                "version_conflict", finding_id=row["id"], actual=row["version"], expected=expected),
                current_version=row["version"])

    def bump(self, row: sqlite3.Row, **columns: Any) -> int:
        """Set `columns`, raise the version by one; the WHERE on the old version makes a lost update
        impossible even if a caller skipped expect_version."""
        version = row["version"] + 1
        sets = "".join(f", {name} = ?" for name in columns)
        done = self.conn.execute(f"UPDATE findings SET version = ?, updated_at = ?{sets} "
                                 "WHERE seq = ? AND version = ?",
                                 (version, self.now, *columns.values(), row["seq"], row["version"]))
        if done.rowcount != 1:
            raise self.refuse("CONCURRENT_MODIFICATION", "version_conflict", finding_id=row["id"],
                              actual="?", expected=row["version"])
        return version

    def event(self, finding_seq: int, kind: str, version: int, *, from_state: str | None = None,
              to_state: str | None = None, reason: str = "", payload: dict | None = None) -> None:
        self.conn.execute(
            "INSERT INTO finding_events (id, finding_seq, kind, tool, from_state, to_state, reason, payload_json, "
            "version, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self.ids.new("EV"), finding_seq, kind, self.tool, from_state, to_state, reason,
             _json(payload or {}), version, self.now))

    # -- state machines -------------------------------------------------------------------
    def check_move(self, machine: str, source: str, target: str, facts: dict) -> None:
        refusal = self.states.check(machine, source, target, facts, via=self.tool)
        if refusal is not None:
            raise Refusal(refusal.code, refusal.message, machine=machine, **(
                {"guard": refusal.guard} if refusal.guard else {}))

    def check_stay(self, machine: str, state: str, facts: dict) -> None:
        refusal = self.states.check_stay(machine, state, facts, via=self.tool)
        if refusal is not None:
            raise Refusal(refusal.code, refusal.message, machine=machine, guard=refusal.guard)

    def caller_context(self, arguments: dict) -> dict:
        """The caller's scope_context as dotted keys; a key given both nested and dotted is refused,
        since which value wins would depend on the order of the keys."""
        flat, twice = applicability.flatten(arguments.get("scope_context"))
        if twice:
            raise Refusal("INVALID_ARGUMENT", self.vocab.message("scope_context_duplicate",
                                                                 keys=[shown(k) for k in twice]),
                          field="scope_context")
        return flat

    def links(self, finding_seq: int) -> list[dict]:
        rows = self.conn.execute(
            "SELECT e.id, fe.relation, fe.method FROM finding_evidence fe JOIN evidence e ON e.seq = fe.evidence_seq "
            "WHERE fe.finding_seq = ? ORDER BY fe.created_at, e.seq, fe.relation", (finding_seq,))
        return [{"evidence_id": r[0], "relation": r[1], "method": r[2]} for r in rows]

    # -- evidence --------------------------------------------------------------------------
    def resolve_evidence(self, item: dict, field: str, default_relation: str | None = None,
                         required_relation: str | None = None) -> dict:
        """Validate one evidence item and find (not yet write) the evidence it names."""
        relation = item.get("relation", default_relation)
        if relation is None:
            raise self.invalid(f"{field}.relation", "missing required argument relation")
        self.choose(f"{field}.relation", relation, self.vocab.evidence_relations)
        if required_relation is not None and relation != required_relation:
            raise Refusal("INVALID_ARGUMENT", self.vocab.message("evidence_relation", field=field,
                                                                 required=required_relation), field=field)
        self.choose(f"{field}.method", item["method"], self.vocab.methods)
        link = {"relation": relation, "method": item["method"], "rationale": item.get("rationale", "")}
        if "evidence_id" in item:
            if any(k in item for k in ("source_kind", "source_ref", "locator", "revision", "excerpt", "content_hash")):
                raise Refusal("INVALID_ARGUMENT", self.vocab.message("evidence_identity", field=field), field=field)
            row = self.conn.execute("SELECT seq, id, project FROM evidence WHERE id = ?",
                                    (item["evidence_id"],)).fetchone()
            if row is None:
                raise self.refuse("NOT_FOUND", "evidence_not_found", evidence_id=item["evidence_id"])
            if row["project"] != self.project:
                raise self.refuse("PROJECT_SCOPE_MISMATCH", "record_in_other_project", what="evidence",
                                  ref=item["evidence_id"], project=self.project)
            return dict(link, evidence_seq=row["seq"], evidence_id=row["id"], reuse="reused")
        if "source_kind" not in item or "source_ref" not in item:
            raise Refusal("INVALID_ARGUMENT", self.vocab.message("evidence_identity", field=field), field=field)
        excerpt = item.get("excerpt", "")
        record = {"source_kind": item["source_kind"], "source_ref": item["source_ref"],
                  "locator": item.get("locator", ""), "revision": item.get("revision", ""),
                  "content_hash": item.get("content_hash") or content_hash(excerpt), "excerpt": excerpt}
        same, others = self._same_source(record)
        if same is not None:
            return dict(link, evidence_seq=same["seq"], evidence_id=same["id"], reuse="reused")
        return dict(link, record=record, reuse="conflict" if others else "new")

    def _same_source(self, record: dict) -> tuple[sqlite3.Row | None, bool]:
        """(the evidence with the same source, kind, revision and content hash, or None; whether
        evidence with the same source_ref and locator exists at all)."""
        same_ref = self.conn.execute(
            "SELECT seq, id, source_kind, revision, content_hash FROM evidence "
            "WHERE project = ? AND source_ref = ? AND locator = ? ORDER BY seq",
            (self.project, record["source_ref"], record["locator"])).fetchall()
        for row in same_ref:
            if (row["source_kind"], row["revision"], row["content_hash"]) == (
                    record["source_kind"], record["revision"], record["content_hash"]):
                return row, True
        return None, bool(same_ref)

    def attach(self, finding_seq: int, resolved: dict) -> dict:
        """Write the evidence (if new) and its link; returns the link with evidence_id and `linked`.
        Evidence resolved as new is looked up once more: an identical item earlier in the same call
        has written it by now, and is reused rather than duplicated."""
        if "record" in resolved:
            same, _ = self._same_source(resolved["record"])
            if same is not None:
                del resolved["record"]
                resolved.update(evidence_seq=same["seq"], evidence_id=same["id"], reuse="reused")
        if "record" in resolved:
            r = resolved.pop("record")
            evidence_id = self.ids.new("E")
            cur = self.conn.execute(
                "INSERT INTO evidence (id, project, source_kind, source_ref, locator, revision, content_hash, "
                "excerpt, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (evidence_id, self.project, r["source_kind"], r["source_ref"], r["locator"], r["revision"],
                 r["content_hash"], r["excerpt"], self.now))
            resolved.update(evidence_seq=cur.lastrowid, evidence_id=evidence_id)
        done = self.conn.execute(
            "INSERT OR IGNORE INTO finding_evidence (finding_seq, evidence_seq, relation, method, rationale, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (finding_seq, resolved["evidence_seq"], resolved["relation"], resolved["method"],
             resolved["rationale"], self.now))
        resolved["linked"] = done.rowcount == 1
        return resolved

    # -- findings ------------------------------------------------------------------------
    def check_body(self, body: dict, prefix: str = "") -> dict:
        """Validate a new finding's words against the vocabulary; returns it with defaults filled."""
        self.choose(f"{prefix}claim_kind", body["claim_kind"], self.vocab.claim_kinds)
        policy = body.get("retrieval_policy", self.vocab.default_retrieval_policy)
        self.choose(f"{prefix}retrieval_policy", policy, self.vocab.retrieval_policies)
        epistemic = self.states.machine("epistemic")
        state = body.get("epistemic_state", epistemic.initial)
        self.choose(f"{prefix}epistemic_state", state, epistemic.states)
        scope = self.check_scope(body.get("scope"), f"{prefix}scope")
        return dict(body, retrieval_policy=policy, epistemic_state=state, scope=scope,
                    tags=list(body.get("tags", [])), details=body.get("details", ""))

    def check_scope(self, scope: dict | None, field: str) -> dict:
        scope = scope or {}
        for trigger in scope.get("revalidate_on", []):
            self.choose(f"{field}.revalidate_on", trigger, self.vocab.revalidate_triggers)
        return {"match": dict(scope.get("match", {})), "context": dict(scope.get("context", {})),
                "revalidate_on": list(scope.get("revalidate_on", []))}

    def create(self, body: dict, evidence: list[dict], *, validated_at: str | None = None,
               event_payload: dict | None = None) -> tuple[int, str, list[dict]]:
        """Insert a finding in its requested state (checked as a move from the initial state, with
        the new evidence as basis), its tags, search terms, evidence links and 'created' event."""
        epistemic = self.states.machine("epistemic")
        lifecycle = self.states.machine("lifecycle")
        links = [{"relation": e["relation"], "method": e["method"], "evidence_id": e.get("evidence_id", "")}
                 for e in evidence]
        if body["epistemic_state"] != epistemic.initial:
            self.check_move("epistemic", epistemic.initial, body["epistemic_state"], {
                "finding": {"claim_kind": body["claim_kind"], "epistemic_state": epistemic.initial,
                            "lifecycle_state": lifecycle.initial},
                "basis": links, "links": links, "manual_exception": body.get("manual_exception"),
                "reason": ""})
        finding_id = self.ids.new("F")
        cur = self.conn.execute(
            "INSERT INTO findings (id, project, claim_kind, statement, details, epistemic_state, lifecycle_state, "
            "scope_json, retrieval_policy, version, created_at, updated_at, last_validated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
            (finding_id, self.project, body["claim_kind"], body["statement"], body["details"],
             body["epistemic_state"], lifecycle.initial, _json(body["scope"]), body["retrieval_policy"],
             self.now, self.now, validated_at))
        seq = cur.lastrowid
        self.conn.executemany("INSERT INTO finding_tags (finding_seq, tag) VALUES (?, ?)",
                              [(seq, tag) for tag in body["tags"]])
        self.conn.execute("INSERT INTO findings_search (rowid, grams) VALUES (?, ?)",
                          (seq, grams(body["statement"] + "\n" + body["details"])))
        attached = [self.attach(seq, e) for e in evidence]
        payload = {"evidence_ids": [e["evidence_id"] for e in attached]}
        if body.get("manual_exception"):
            payload["manual_exception"] = body["manual_exception"]
        self.event(seq, "created", 1, to_state=body["epistemic_state"], payload=dict(payload, **(event_payload or {})))
        return seq, finding_id, attached


def needs(call: Call, facts: dict) -> list[str]:
    """What the warnings table says a new finding still lacks (log_finding's `needs`)."""
    return [f.outputs["need"] for f in call.warning_rows(facts) if f.outputs.get("need")]


def content_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


Handler = Callable[[Call, dict], tuple[dict, "dict | None"]]


class Ledger:
    """The finding ledger of one SQLite file, serving one project.

    `clock` and `ids` are injected (SystemClock / RandomIds by default). Calls are serialised
    within the process; across processes SQLite's write lock and the version checks do it.
    """

    def __init__(self, store: Store | str | Path, *, project: str = "default", rulebook: Rulebook | None = None,
                 clock: Clock | None = None, ids: Ids | None = None):
        from . import proposals, tools
        self.store = store if isinstance(store, Store) else Store(store)
        self.project = project
        self.book = rulebook or rulebooks.default()
        self.clock = clock or SystemClock()
        self.ids = ids or RandomIds()
        self.checker = ArgumentChecker(self.book.schemas,
                                       self.book.table(VOCABULARY_TABLE).limits["argument_depth"])
        self._lock = threading.Lock()
        self._reads: dict[str, Handler] = tools.READS
        self._writes: dict[str, Handler] = tools.WRITES
        self._people: dict[str, Handler] = proposals.PEOPLE

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(self._writes) + tuple(self._reads)

    def call(self, tool: str, arguments: Any) -> dict:
        """Run one agent tool; the answer is always an envelope {ok, data, warnings, error, rulebook}."""
        return self._answer(tool, arguments, self._writes)

    def decide_rule(self, tool: str, arguments: Any) -> dict:
        """approve_rule / reject_rule: for people (the CLI), never served to agents."""
        return self._answer(tool, arguments, self._people)

    def _answer(self, tool: str, arguments: Any, writes: dict) -> dict:
        try:
            with self._lock:
                data, warnings = self._run(tool, arguments, writes)
            return canonical.envelope(ok=True, data=data, warnings=warnings, rulebook=self.book.version)
        except Refusal as refusal:
            return self._refused(refusal.as_dict())
        except sqlite3.Error as exc:
            kind = getattr(exc, "sqlite_errorname", type(exc).__name__)
            return self._refused({"code": "STORAGE_ERROR", "message": self._storage_message(kind)})
        except Exception as exc:  # noqa: BLE001 - a bug must still answer with one of the eight codes
            return self._refused({"code": "STORAGE_ERROR",
                                  "message": self._storage_message(f"internal {type(exc).__name__}")})

    def _refused(self, error: dict) -> dict:
        return canonical.envelope(ok=False, data=None, error=error, rulebook=self.book.version)

    def _storage_message(self, kind: str) -> str:
        return self.book.table(VOCABULARY_TABLE).message("storage_error", kind=kind)

    def _run(self, tool: str, arguments: Any, writes: dict) -> tuple[dict, list]:
        vocab = self.book.table(VOCABULARY_TABLE)
        reads = self._reads if writes is self._writes else {}
        if tool not in reads and tool not in writes:
            raise Refusal("INVALID_ARGUMENT", vocab.message("unknown_value", field="tool",
                                                            choices=list(writes) + list(reads), hint=""),
                          field="tool")
        problem = self.checker.problem(tool, arguments)
        if problem is not None:
            field, text = problem
            raise Refusal("INVALID_ARGUMENT", vocab.message("invalid_argument", field=field, problem=text),
                          field=field)
        project = arguments.get("project", CURRENT_PROJECT)
        if project not in (CURRENT_PROJECT, self.project):
            raise Refusal("PROJECT_SCOPE_MISMATCH", vocab.message("project_not_served", project=self.project))
        if tool in reads:
            with self.store.read() as conn:
                data, _ = reads[tool](Call(self, conn, tool, self.project), arguments)
            return data, []
        call: Call | None = None
        try:
            with self.store.write() as conn:
                call = Call(self, conn, tool, self.project)
                return self._write(call, arguments, writes[tool])
        except BaseException:
            if call is not None:
                call.rolled_back()
            raise

    def _write(self, call: Call, arguments: dict, handler: Handler) -> tuple[dict, list]:
        key = arguments.get("idempotency_key")
        if key is not None:
            payload = canonical.digest({k: v for k, v in arguments.items()
                                        if k not in ("idempotency_key", "project")})
            row = call.conn.execute("SELECT tool, payload_hash, response FROM idempotency_keys "
                                    "WHERE project = ? AND key = ?", (call.project, key)).fetchone()
            if row is not None:
                if (row["tool"], row["payload_hash"]) != (call.tool, payload):
                    raise Refusal("INVALID_ARGUMENT", call.vocab.message("idempotency_reused"),
                                  field="idempotency_key")
                first = json.loads(row["response"])
                return first["data"], first["warnings"]
        data, facts = handler(call, arguments)
        warnings = [{"code": f.code, "message": f.outputs.get("message", "")} for f in call.warning_rows(facts)]
        if key is not None:
            call.conn.execute("INSERT INTO idempotency_keys (project, key, tool, payload_hash, response, created_at) "
                              "VALUES (?, ?, ?, ?, ?, ?)",
                              (call.project, key, call.tool, payload, _json({"data": data, "warnings": warnings}),
                               call.now))
        return data, warnings

    def close(self) -> None:
        self.store.close()

