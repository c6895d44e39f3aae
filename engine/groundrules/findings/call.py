"""What one tool call may use: its transaction, tables, project, caller, time and ids, the
refusals worded by the vocabulary, and the effects that wait for the commit.

The steps the tools share are functions of a Call, each in a module named for its concern:
arguments and contexts (checking what the caller gave), finding_rows and events (a finding's
version and history), moves (the state machines), evidence_items and evidence_links (evidence
resolved, then written), new_finding, write_warnings. All of it is domain: it reads the tables
and asks the store (one transaction, `tx`) to find and keep rows; which SQL, which database, is
the store's business.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..core.errors import GroundrulesError
from ..provenance.trust import EMPTY as EMPTY_TRUST
if TYPE_CHECKING:                      # rulebook imports this part's compilers
    from ..core.rulebook import Rulebook
    from ..provenance.trust import TrustStore
    from ..store.protocols import FindingTx
from .clock import Ids
from .independence import Judge
from .write_warnings import WarningRows

STATES_TABLE = "finding_states"
PROVENANCE_TABLE = "finding_provenance"
ROLES_TABLE = "roles"                  # rules/roles.yaml: the roles finding_provenance.yaml may name
VOCABULARY_TABLE = "findings_vocabulary"


class Call:
    """One tool call: its transaction, tables, project, caller, time and ids."""

    def __init__(self, book: Rulebook, tx: FindingTx, tool: str, project: str, principal: str, now: str, ids: Ids,
                 rules_root: Path | None = None, role: str = "", writer: dict | None = None,
                 trust: TrustStore | None = None):
        self.tx, self.tool, self.project, self.principal = tx, tool, project, principal
        self.role = role                  # the caller's, as Service.call authenticated it: moves may need one
        # what every link and event this call writes is stamped with: the authenticated caller's
        # (api.Caller.writer), never anything from the arguments
        self.writer = writer if writer is not None else {"principal": principal, "role": role or None,
                                                         "auth": {"method": "local"}}
        self.rules_root = rules_root      # the project root rule documents live under (approve_rule)
        self.trust = trust or EMPTY_TRUST  # the signers a signed evidence item may be made by
        self.book = book
        self.vocab = book.table(VOCABULARY_TABLE)
        self.states = book.table(STATES_TABLE)
        self.names = self.vocab.acts_on
        self.ids = ids
        self.now = now
        self.judge = Judge(book)           # which links count as independent support, judged once a call
        self.warning_rows = WarningRows(book, self.judge)
        self._after: list[Callable[[], None]] = []

    def refuse(self, code: str, message: str, *, field: str | None = None, **params: Any) -> GroundrulesError:
        """The refusal `code` worded by the vocabulary's message `message` (which may name {field})."""
        return GroundrulesError(code, self.vocab.message(message, field=field, **params), field=field)

    def after_commit(self, effect: Callable[[], None]) -> None:
        """Register an effect outside the database (writing an approved rule) to run once the
        transaction has committed: the decision is recorded first, the effect is idempotent."""
        self._after.append(effect)

    def committed(self) -> None:
        """Run the registered effects, in order; the ledger calls it after the commit only."""
        while self._after:
            self._after.pop(0)()
