"""The finding ledger (docs/spec/findings.md): every tool call runs in one transaction and answers once.

`FindingLedger.run(tool, arguments, project=..., principal=...)` returns `(data, warnings)` or
raises GroundrulesError; it is called by the tool registry (`groundrules.api`), which has already
checked the arguments against the tool's input schema, the caller's role and its project grants.
A write returns only after COMMIT; any refusal or failure rolls the whole call back, so nothing is
ever half-written. Retries carrying the same idempotency_key get the first answer back and create
nothing. The ledger holds no SQL: it talks to a store (SQLite by default; see groundrules.store).
"""
from __future__ import annotations

import copy
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..core import codes, rulebook as rulebooks
from ..core.errors import GroundrulesError, Problem, RulesError, did_you_mean
from ..core.messages import refused
if TYPE_CHECKING:                      # rulebook imports this part's compilers
    from ..core.rulebook import Rulebook
    from ..provenance.trust import TrustStore
    from ..store.lifecycle import Lifecycle
    from ..store.protocols import FindingStore, FindingTx
from . import proposals, tools
from .call import PROVENANCE_TABLE, ROLES_TABLE, STATES_TABLE, VOCABULARY_TABLE, Call
from .clock import Clock, Ids, RandomIds, SystemClock
from .idempotency import Retry

Handler = Callable[[Call, dict], tuple[dict, "dict | None"]]
HANDLERS: dict[str, Handler] = {**tools.READS, **tools.WRITES, **proposals.DECISIONS}
READS = frozenset(tools.READS)


class FindingLedger:
    """The finding ledger over one store, serving any number of projects.

    `clock` and `ids` are injected (SystemClock / RandomIds by default). Calls may come from
    several threads at once: the store serialises what it must (SQLite: one connection, one
    transaction at a time; PostgreSQL: a pool, one connection per call), and across threads,
    processes and hosts the version checks and the store's isolation keep calls apart.
    """

    def __init__(self, store: FindingStore | str | Path, *, rulebook: Rulebook | None = None,
                 clock: Clock | None = None, ids: Ids | None = None, rules_root: str | Path | None = None):
        if isinstance(store, (str, Path)):
            from ..store import open_finding_store
            self.store: FindingStore = open_finding_store(store)
        else:
            self.store = store
        self.book = rulebook or rulebooks.default()
        self.clock = clock or SystemClock()
        self.ids = ids or RandomIds()
        self.rules_root = None if rules_root is None else Path(rules_root)
        self.lifecycle: Lifecycle | None = None       # the call's, in a ledger made by within()
        _check_names(self.book)

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(HANDLERS)

    def run(self, tool: str, arguments: dict, *, project: str, principal: str, role: str = "",
            writer: dict | None = None, trust: TrustStore | None = None) -> tuple[dict, list]:
        """One checked call; (data, warnings) or a GroundrulesError (a StorageFailure for the store,
        which the registry words as it words every ledger's: api.storage_refusal). `role` is the
        caller's: a transition may be limited to some roles (rules/finding_states.yaml). `writer` is
        the stamp every link and event of the call gets (api.Caller.writer: principal, role, how
        it was authenticated); a library caller that gives none writes as a local operator. `trust`:
        the operator's trust store, against which a signed evidence item is verified."""
        handler = HANDLERS[tool]
        arguments = self._audited(arguments, principal)
        if tool in READS:
            with self.store.read() as tx:
                data, _ = handler(self._call(tx, tool, project, principal, role, writer, trust), arguments)
            return data, []
        calls: list[Call] = []

        def attempt(tx: FindingTx) -> tuple[dict, list]:
            # a store may re-run the call (a serialization failure): each attempt starts afresh,
            # and only the one that committed does its effects outside the database
            calls.append(self._call(tx, tool, project, principal, role, writer, trust))
            return self._write(calls[-1], arguments, handler)
        if self.lifecycle is None:            # a library call: no server watches it
            answer = self.store.run_write(attempt, appends_only=tool in tools.APPENDS)
        else:
            answer = self.store.run_write(attempt, appends_only=tool in tools.APPENDS, lifecycle=self.lifecycle)
        calls[-1].committed()
        return answer

    def _audited(self, arguments: dict, principal: str) -> dict:
        """A manual exception is its caller's: the approver recorded is the authenticated principal;
        one naming somebody else is refused (docs/spec/findings.md, principles: explicit and auditable)."""
        out = dict(arguments)
        for holder in (out, out.get("new")):
            if not isinstance(holder, dict):
                continue
            exception = holder.get("manual_exception")
            if not isinstance(exception, dict):
                continue
            if exception.get("approved_by", principal) != principal:
                vocab = self.book.table(VOCABULARY_TABLE)
                raise GroundrulesError(codes.PERMISSION_DENIED, vocab.message("approver_not_caller", principal=principal),
                                       field="manual_exception.approved_by")
            if holder is not out:             # the `new` object: copied, not the caller's changed
                out["new"] = holder = dict(holder)
            holder["manual_exception"] = {"approved_by": principal, "reason": exception["reason"]}
        return out

    def _call(self, tx: FindingTx, tool: str, project: str, principal: str, role: str = "",
              writer: dict | None = None, trust: TrustStore | None = None) -> Call:
        return Call(self.book, tx, tool, project, principal, self.clock(), self.ids, self.rules_root, role, writer,
                    trust)

    def _write(self, call: Call, arguments: dict, handler: Handler) -> tuple[dict, list]:
        retry = Retry(call, arguments)
        first = retry.first_answer()
        if first is not None:
            return first
        data, facts = handler(call, arguments)
        warnings = [{"code": f.code, "message": f.outputs.get("message", "")} for f in call.warning_rows(facts)]
        retry.remember(data, warnings)
        return data, warnings

    def ping(self) -> None:
        """Open and end one read transaction (a readiness check); raises when the store cannot."""
        with self.store.read():
            pass

    def with_rulebook(self, rulebook: Rulebook) -> "FindingLedger":
        """This ledger over the same store, deciding by `rulebook` (a rule reload)."""
        return FindingLedger(self.store, rulebook=rulebook, clock=self.clock, ids=self.ids, rules_root=self.rules_root)

    def within(self, lifecycle: Lifecycle) -> "FindingLedger":
        """This ledger for one call whose writes run under `lifecycle` (store/lifecycle.py: counted,
        and rolled back once its server abandons it)."""
        bound = copy.copy(self)
        bound.lifecycle = lifecycle
        return bound

    def close(self) -> None:
        self.store.close()


def _check_names(book: Rulebook) -> None:
    """The states the vocabulary's `acts_on` names must be states of their machines (a check across
    two tables, so it runs once the rulebook is whole)."""
    if proposals.TARGETS_TABLE not in book.tables:
        raise refused(book, codes.RULEBOOK_INCOMPLETE, "rulebook.no_rule_targets")
    if PROVENANCE_TABLE not in book.tables:
        raise refused(book, codes.RULEBOOK_INCOMPLETE, "rulebook.no_finding_provenance")
    vocab, states = book.table(VOCABULARY_TABLE), book.table(STATES_TABLE)
    problems = _provenance_names(book, vocab)
    for key, machine in (("refute_state", "epistemic"), ("supersede_state", "lifecycle"),
                         ("revalidation_replaced_state", "lifecycle")):
        name = vocab.acts_on[key]
        if name not in states.machine(machine).states:
            line, col = book.sources[vocab.id].where(("acts_on", key))
            problems.append(Problem(vocab.file, line, col, "unknown-state",
                                    f"acts_on.{key} '{name}' is not a state of machine '{machine}' "
                                    f"in {states.file}", f"acts_on.{key}"))
    machine = states.machine(proposals.MACHINE)
    for tool in proposals.DECISIONS:
        targets = proposals.targets_via(states, tool)
        if len(targets) != 1:
            line, col = book.sources[states.id].where(machine.where + ("transitions",))
            problems.append(Problem(states.file, line, col, "decision-target",
                                    f"{tool} must move a proposal to exactly one state; the transitions of "
                                    f"machine '{proposals.MACHINE}' naming it under 'via' lead to "
                                    f"{', '.join(targets) or 'none'}", f"machines.{proposals.MACHINE}.transitions",
                                    f"name {tool} under 'via' of one transition"))
    if problems:
        raise RulesError(problems)


def _provenance_names(book: Rulebook, vocab) -> list[Problem]:
    """The roles, methods and relations rules/finding_provenance.yaml names must be those of the role
    table and the vocabulary: a misspelt method would refuse every link of it, silently."""
    table = book.table(PROVENANCE_TABLE)
    roles = book.table(ROLES_TABLE).roles if ROLES_TABLE in book.tables else None
    problems = []

    def unknown(where: tuple, what: str, name: str, known) -> None:
        line, col = book.sources[table.id].where(where)
        problems.append(Problem(table.file, line, col, "unknown-name", f"{what} '{name}' is not defined",
                                ".".join(map(str, where)), did_you_mean(name, known)))
    for writer in table.writers.values():
        if roles is not None and writer.role not in roles:
            unknown(writer.where + ("role",), "role (rules/roles.yaml)", writer.role, roles)
        for i, method in enumerate(writer.methods):
            if method not in vocab.methods:
                unknown(writer.where + ("methods", i), "method (findings_vocabulary.yaml methods)", method,
                        vocab.methods)
        for i, relation in enumerate(writer.relations):
            if relation not in vocab.evidence_relations:
                unknown(writer.where + ("relations", i), "relation (findings_vocabulary.yaml evidence_relations)",
                        relation, vocab.evidence_relations)
    for i, method in enumerate(table.checked_methods):
        if method not in vocab.methods:
            unknown(("source_checks", "methods", i), "method (findings_vocabulary.yaml methods)", method,
                    vocab.methods)
    return problems
