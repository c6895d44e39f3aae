"""The tool registry: every tool an agent or host may call, declared once, and the one path to it.

A tool is a name, its schema file `schemas/tools/<name>.schema.json` (description, `input`,
`data`) and a function. `Service.call(tool, arguments, caller) -> envelope` is the only way a
transport (CLI, MCP over stdio or HTTP, demo) reaches the library. In order, it checks that the
tool exists and the caller's role may call it (rules/roles.yaml), that an MCP session calling it
has enabled its toolset (rules/toolsets.yaml; the library has no session), the arguments against the tool's
input schema, the options only some roles may give, and the project against the caller's grants;
then it runs the tool and wraps its answer or refusal in the envelope. Transports add nothing, so
the same arguments give the same envelope through each.
"""
from __future__ import annotations

import copy
import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, TypeVar, cast

from .core import bounded_patterns, canonical, codes, json_bounds, limits
from .core import messages as catalogues
from .core import rulebook as rulebooks
from .access import RoleTable, TOOL_SCHEMAS, SUFFIX
from .toolsets import TABLE as TOOLSETS_TABLE, ToolsetTable
from .core.errors import GroundrulesError, StorageFailure, closest, echo, refusal, shown
from .core.rulebook import Rulebook
from .core.schema_check import Contract, bundle, of_schema

if TYPE_CHECKING:
    from .decision_log.log import DecisionLog
    from .evidence.ledger import EvidenceLedger
    from .findings.ledger import FindingLedger
    from .results import Envelope
    from .provenance.trust import TrustStore
    from .store.lifecycle import Lifecycle

L = TypeVar("L")

_faults = logging.getLogger("groundrules.faults")    # a bug's traceback, for the operator; never in an answer
ROLES_TABLE = "roles"
CURRENT_PROJECT = "current"
# the schema keyword a refused argument broke -> the message catalogue's words for it (rules/messages.yaml)
ARGUMENT_WORDS = {"minItems": "argument.min_items", "maxItems": "argument.max_items",
                  "minLength": "argument.min_length", "maxLength": "argument.max_length",
                  "minimum": "argument.minimum", "maximum": "argument.maximum", "uniqueItems": "argument.unique_items",
                  "minProperties": "argument.min_properties", "maxProperties": "argument.max_properties",
                  "pattern": "argument.pattern"}


@dataclass(frozen=True)
class Authentication:
    """How a caller proved who it is: `local` (the operator of the CLI or stdio, trusted as the
    machine's user), `token` (a static bearer token of the tokens file), `oauth` (a JWT of `issuer`
    about `subject`). Records name it beside the principal, so a reader can weigh a write by it."""

    method: str = "local"
    issuer: str = ""
    subject: str = ""

    def as_json(self) -> dict:
        return {"method": self.method, **({"issuer": self.issuer, "subject": self.subject} if self.method == "oauth"
                                          else {})}


LOCAL = Authentication()


@dataclass(frozen=True)
class Caller:
    """Who calls: an authenticated principal (a token's, or the operator named on the command line),
    its role in rules/roles.yaml, the projects it may use (the first is what "current" means), and
    how it was authenticated."""

    principal: str
    role: str
    projects: tuple[str, ...] = ()
    auth: Authentication = LOCAL

    def writer(self) -> dict:
        """The writer every record this caller appends is stamped with: set here, from the
        authenticated identity, never from a tool's arguments."""
        return {"principal": self.principal, "role": self.role, "auth": self.auth.as_json()}


@dataclass(frozen=True)
class Answer:
    """A tool's answer when it is more than data: a verification that fails is ok=false with an
    error and warnings, yet is a verdict, not a refusal."""

    ok: bool
    data: Any
    warnings: list = field(default_factory=list)
    error: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Tool:
    name: str
    ledger: str                        # '' | 'findings' | 'evidence' | 'decisions': the store the tool needs
    run: Callable[["Service", dict, str, Caller], Any]
    quick: bool = False                # only reads a ledger: a server may answer it without a worker thread


@dataclass(frozen=True)
class Listing:
    """What a transport shows of a tool: its name, description and JSON Schemas. `output_schema`
    (what MCP lists) states the envelope's contract and carries the data's under `$defs/data`
    without referring to it: an MCP client validates every result against the listed schema (the
    SDK with pure-Python jsonschema, per call), and the deep walk of the data cost more client time
    than the server spent answering. `output_contract` is the whole contract, data included, that
    our tests hold every answer to."""

    name: str
    description: str
    input_schema: dict
    output_schema: dict
    output_contract: dict
    annotations: dict = field(default_factory=dict)   # the schema file's MCP hints (readOnlyHint, …)


# ----------------------------------------------------------------------------- the tools

def _configured(ledger: L | None) -> L:
    """The ledger a ledger tool runs on: Service._call refuses the call NOT_CONFIGURED without it."""
    assert ledger is not None, "Service._call checks the tool's ledger before running it"
    return ledger


def _explain(service: "Service", a: dict, project: str, caller: Caller) -> Any:
    from .support_reason import explain
    return explain(a["context"], service.book)


def _lock(service: "Service", a: dict, project: str, caller: Caller) -> Any:
    from .locks import lock, lock_messages
    locks = lock(a["message"], service.book) if "message" in a else lock_messages(a["messages"], service.book)
    return {"locks": locks}


def _fold(service: "Service", a: dict, project: str, caller: Caller) -> Any:
    from .evidence import fold
    return fold(a, service.book)


def _verify(service: "Service", a: dict, project: str, caller: Caller) -> Any:
    from .verification import verify
    report = verify(a["request"], a["instance"] if "instance" in a else a["schema"], a["candidate"], service.book)
    return Answer(report["ok"], report if a.get("report") else report["data"], report["warnings"], report["error"])


def _finding_tool(name: str) -> Callable:
    def run(service: "Service", a: dict, project: str, caller: Caller) -> Answer:
        data, warnings = _configured(service.findings).run(name, a, project=project, principal=caller.principal,
                                                           role=caller.role, trust=service.trust,
                                                           writer=caller.writer())
        return Answer(True, data, warnings)
    return run


def _append_evidence(service: "Service", a: dict, project: str, caller: Caller) -> Any:
    # a raw source is stored with the locks the engine finds in it; a lock record must be one of them.
    # Its writer is the caller, as authenticated; a signature is checked against the trust store.
    return {"records": _configured(service.evidence).append_all([a["record"]], project=project,
                                                                writer=caller.writer(), trust=service.trust)}


def _get_evidence(service: "Service", a: dict, project: str, caller: Caller) -> Any:
    if "record_id" in a:
        return {"records": [_configured(service.evidence).get(a["record_id"], project=project)]}
    return {"records": _configured(service.evidence).records(project=project)}


def _redact_evidence(service: "Service", a: dict, project: str, caller: Caller) -> Any:
    return _configured(service.evidence).erase(a["record_id"], by=caller.principal, reason=a["reason"],
                                               project=project)


def _fold_ledger(service: "Service", a: dict, project: str, caller: Caller) -> Any:
    return _configured(service.evidence).fold(a.get("interpretations"), a["now"], project=project,
                                              subject=a.get("subject"), scope_context=a.get("scope_context"),
                                              writer=caller.writer())


def _append_interpretation(service: "Service", a: dict, project: str, caller: Caller) -> Any:
    return _configured(service.evidence).append_interpretation(a["interpretation"], project=project,
                                                               writer=caller.writer())


def _draft_interpretation(service: "Service", a: dict, project: str, caller: Caller) -> Any:
    return _configured(service.evidence).draft_interpretation(a.get("message_id"), project=project)


def _draft_candidate(service: "Service", a: dict, project: str, caller: Caller) -> Any:
    from .verification import draft_candidate
    return draft_candidate(a["request"], a["instance"] if "instance" in a else a["schema"], service.book)


def _list_toolsets(service: "Service", a: dict, project: str, caller: Caller) -> Any:
    table, enabled = service.toolsets, service.enabled_toolsets
    if table is None:
        return {"toolsets": []}
    shown = []
    for toolset in table.toolsets.values():
        tools = [n for n in toolset.tools if service.roles.may_call(caller.role, n)]
        if tools:
            shown.append({"name": toolset.name, "description": toolset.description, "tools": tools,
                          "enabled": enabled is None or toolset.always or toolset.name in enabled})
    return {"toolsets": shown}


def _enable_toolset(service: "Service", a: dict, project: str, caller: Caller) -> Any:
    # what the toolset adds; a session (transports/mcp_tools.py) lists them once this answers ok
    if service.toolsets is None:
        raise GroundrulesError(codes.NOT_CONFIGURED, service.roles.message("not_configured", tool="enable_toolset"))
    toolset = service.toolsets.toolsets[a["toolset"]]
    return {"toolset": toolset.name, "tools": [n for n in toolset.tools if service.roles.may_call(caller.role, n)]}


def _read_decisions(service: "Service", a: dict, project: str, caller: Caller) -> Any:
    return _configured(service.decisions).read(a, project=project)


FINDING_TOOLS = ("log_finding", "query_findings", "get_finding", "add_evidence", "set_finding_state",
                 "refute_finding", "supersede_finding", "revalidate_finding", "link_finding", "propose_rule",
                 "approve_rule", "reject_rule")
FINDING_READS = ("query_findings", "get_finding")      # the finding tools that only read (findings.tools.READS)

TOOLS: dict[str, Tool] = {t.name: t for t in (
    *(Tool(name, "findings", _finding_tool(name), quick=name in FINDING_READS)
      for name in FINDING_TOOLS),
    Tool("append_evidence", "evidence", _append_evidence),
    Tool("get_evidence", "evidence", _get_evidence, quick=True),
    Tool("redact_evidence", "evidence", _redact_evidence),
    Tool("fold_ledger", "evidence", _fold_ledger),
    Tool("append_interpretation", "evidence", _append_interpretation),
    Tool("draft_interpretation", "evidence", _draft_interpretation, quick=True),
    Tool("explain_support", "", _explain),
    Tool("lock_message", "", _lock),
    Tool("fold_evidence", "", _fold),
    Tool("verify_extraction", "", _verify),
    Tool("draft_candidate", "", _draft_candidate),
    Tool("read_decisions", "decisions", _read_decisions),
    Tool("list_toolsets", "", _list_toolsets, quick=True),
    Tool("enable_toolset", "", _enable_toolset, quick=True),
)}


# ----------------------------------------------------------------------------- the one path

class Service:
    """The rulebook and the ledgers one host serves; `call` answers every tool."""

    # the toolsets an MCP session has enabled, for one call (`call`'s `toolsets`); None: no session,
    # every tool the role may call is answered
    enabled_toolsets: frozenset[str] | None = None

    def __init__(self, rulebook: Rulebook | None = None, *, findings: FindingLedger | None = None,
                 evidence: EvidenceLedger | None = None, decisions: DecisionLog | None = None,
                 trust: TrustStore | None = None, lang: str | None = None):
        self.book = rulebook or rulebooks.default()
        self.findings, self.evidence = findings, evidence
        # the operator's trust store (signers whose signature makes a relayed record count); none by default
        self._trust = trust
        # the decision log (groundrules.decision_log.DecisionLog), opt-in: handed every answered call;
        # a redaction of evidence also erases the log's copies of it
        self.decisions = decisions
        if decisions is not None and evidence is not None:
            evidence.on_redaction(decisions.erase_copies)
        if ROLES_TABLE not in self.book.tables:
            raise catalogues.refused(self.book, codes.RULEBOOK_INCOMPLETE, "rulebook.no_roles")
        self.roles: RoleTable = self.book.table(ROLES_TABLE)
        if catalogues.TABLE not in self.book.tables:
            raise refusal(codes.RULEBOOK_INCOMPLETE, "rulebook.no_catalogue")     # no catalogue words it
        self.messages: catalogues.MessageCatalogue = self.book.table(catalogues.TABLE)
        # the toolsets a session lists (rules/toolsets.yaml); without that table a session lists every tool
        self.toolsets: ToolsetTable | None = self.book.table(TOOLSETS_TABLE) if TOOLSETS_TABLE in self.book.tables \
            else None
        # the language of an answer whose call names none (serve --lang); the catalogue's first by default
        self.lang = lang or self.messages.default
        if self.lang not in self.messages.languages:
            raise GroundrulesError(codes.USAGE, self.messages.message("lang_unknown", lang=echo(self.lang),
                                                                      languages=list(self.messages.languages)))
        self._speakers: dict[str, Service] = {}
        self._speaks = self.messages.default          # the language its rulebook's tables are bound to
        self._base: Service = self                     # the service whose rulebook is bound to none
        table = limits.of(self.book)
        self.pattern_budget_ms = table.pattern_budget_ms if table else bounded_patterns.DEFAULT_BUDGET_MS

    @property
    def trust(self) -> TrustStore:
        """The trust store, the empty one when none was given (imported when first asked: a command
        that appends nothing, `explain` or `lock`, pays for no provenance part)."""
        if self._trust is None:
            from .provenance.trust import EMPTY
            self._trust = EMPTY
        return self._trust

    def with_rulebook(self, rulebook: Rulebook) -> "Service":
        """The same ledgers and decision log (their stores shared) deciding by `rulebook`: what a
        live rule reload swaps in; calls already running keep the service they started on (and
        their decisions the masking table they were answered under). Refuses a rulebook the
        ledgers or the log cannot run on, as opening them would."""
        return Service(rulebook, findings=self.findings and self.findings.with_rulebook(rulebook),
                       evidence=self.evidence and self.evidence.with_rulebook(rulebook),
                       decisions=self.decisions and self.decisions.with_rulebook(rulebook), trust=self._trust,
                       lang=self.lang)

    def with_trust(self, trust: TrustStore) -> "Service":
        """The same service judging signatures by `trust` (a trust store reload)."""
        return Service(self.book, findings=self.findings, evidence=self.evidence, decisions=self.decisions, trust=trust,
                       lang=self.lang)

    def speaking(self, lang: str | None) -> "Service":
        """The service that answers in `lang` (None: this server's language): the same ledgers,
        decision log and trust store, deciding by the rulebook's view in that language, so its
        answers differ from this one's in their sentences only. Refuses a language the catalogue
        does not declare (INVALID_ARGUMENT)."""
        lang = self.lang if lang is None else lang
        if lang == self._speaks:
            return self
        base = self._base
        if lang == base._speaks:
            return base
        if lang not in self.messages.languages:
            raise GroundrulesError(codes.INVALID_ARGUMENT, self.messages.message(
                "lang_unknown", lang=echo(lang), languages=list(self.messages.languages)), field="(lang)")
        speaker = base._speakers.get(lang)
        if speaker is None:
            book = base.book.speaking(lang)
            speaker = Service(book, findings=base.findings and base.findings.with_rulebook(book),
                              evidence=base.evidence and base.evidence.with_rulebook(book), decisions=base.decisions,
                              trust=base._trust, lang=lang)
            speaker._speaks, speaker._base = lang, base
            base._speakers[lang] = speaker
        return speaker

    def call(self, tool: str, arguments: Any, caller: Caller, *, decoded: bool = False,
             lang: str | None = None, lifecycle: Lifecycle | None = None,
             toolsets: frozenset[str] | None = None) -> "Envelope":
        """The envelope {ok, data, warnings, error, rulebook} of one call; never raises. With a
        decision log, the envelope also names the decision it is logged under (`decision`): the
        log is handed the JSON texts the checks made anyway, and writes them off this path.
        `decoded`: the arguments are what a JSON decoder returned (the transports'), so only their
        nesting and integers are left to check, and those are read off their JSON text. `lang`: the
        language of the answer's sentences (rules/messages.yaml languages; None: the server's).
        `lifecycle`: a server's for this call (store/lifecycle.py), handed to the ledger's writes.
        `toolsets`: the toolsets an MCP session has enabled (rules/toolsets.yaml): a tool of another
        is refused with TOOLSET_NOT_ENABLED naming its toolset; None (the library): none is."""
        if (self.lang if lang is None else lang) != self._speaks:
            try:
                speaker = self.speaking(lang)
            except GroundrulesError as exc:
                return self._refusal(exc.as_dict())[0]
            return speaker.call(tool, arguments, caller, decoded=decoded, lifecycle=lifecycle, toolsets=toolsets)
        service = self if lifecycle is None else self._within(lifecycle)
        if toolsets is not None:
            service = copy.copy(service)
            service.enabled_toolsets = frozenset(toolsets)
        log = self.decisions
        if log is None:
            return service._answer(tool, arguments, caller, None, decoded)[0]
        started = log.timer()
        arguments_text = canonical.json_text(arguments)
        envelope, text = service._answer(tool, arguments, caller, arguments_text, decoded)
        envelope["decision"] = log.record(tool, arguments, arguments_text, caller, envelope, text, started)
        return envelope

    def _within(self, lifecycle: Lifecycle) -> "Service":
        """This service for one call: its ledgers write under `lifecycle`; all else is shared."""
        bound = copy.copy(self)
        bound.findings = self.findings and self.findings.within(lifecycle)
        bound.evidence = self.evidence and self.evidence.within(lifecycle)
        return bound

    def call_text(self, tool: str, arguments_text: str, caller: Caller) -> tuple[Envelope, str]:
        """`call` for arguments given as the JSON text `call` made of them (a decision log keeps it):
        the envelope and its JSON text, not logged. Replay answers thousands of logged calls a
        second through this: the text is decoded strictly (canonical.decoded), which proves what
        `call` proves by encoding the arguments, and this rulebook's limits are read off the text
        where a bound proves them; every other check runs as in `call`, so the answer is the one
        `call` gives, refusals included."""
        try:
            arguments = canonical.decoded(arguments_text)
        except ValueError:                                  # not proven JSON: every check, as `call` runs them
            return self._answer(tool, json.loads(arguments_text), caller, None)
        return self._answer(tool, arguments, caller, arguments_text, decoded=True)

    def answer(self, tool: str, arguments: Any, caller: Caller, *, decoded: bool = False) -> tuple[Envelope, str]:
        """`call` unlogged, with the envelope's JSON text too: a batch writes that text, and the
        envelope is made into text once, here, as `call` makes it. `decoded` as in `call`."""
        return self._answer(tool, arguments, caller, None, decoded)

    def _answer(self, tool: str, arguments: Any, caller: Caller, arguments_text: str | None,
                decoded: bool = False) -> tuple[Envelope, str]:
        """The envelope and its JSON text."""
        try:
            with bounded_patterns.budget(self.pattern_budget_ms):
                answer = self._call(tool, arguments, caller, arguments_text, decoded)
        except StorageFailure as exc:
            return self._refusal(storage_refusal(self.book, exc).as_dict())
        except GroundrulesError as exc:                     # in this call's language (core/messages.worded)
            return self._refusal(catalogues.worded(exc, self.messages).as_dict())
        except Exception as exc:  # noqa: BLE001 - a bug must still answer with an envelope
            _faults.error("%s failed inside", echo(tool), exc_info=True)
            return self._refusal(self._internal(exc))
        if not isinstance(answer, Answer):
            answer = Answer(True, answer)
        envelope = cast("Envelope", canonical.envelope(ok=answer.ok, data=answer.data, warnings=answer.warnings,
                                                       error=answer.error, rulebook=self.book.version))
        text = canonical.json_text(envelope)
        if text is None:                                    # never an answer a transport cannot send
            return self._refusal(self._internal(ValueError()))
        return envelope, text

    def _internal(self, exc: BaseException) -> dict:
        """A bug's refusal: what kind of failure it was and nothing of its text (it may hold a path)."""
        return {"code": codes.INTERNAL_ERROR,
                "message": self.messages.code_message(codes.INTERNAL_ERROR, kind=type(exc).__name__)}

    def _refusal(self, error: dict) -> tuple[Envelope, str]:
        envelope = cast("Envelope", canonical.envelope(ok=False, error=error, rulebook=self.book.version))
        text = canonical.json_text(envelope)
        assert text is not None, "a refusal is plain JSON (its code and message are strings)"
        return envelope, text

    def listings(self, caller: Caller, *, compact: bool = False) -> list[Listing]:
        """The tools this caller's role may call, with their schemas (for list_tools); `compact`:
        each tool's first sentence and no descriptions inside its input schema, for hosts that
        count every token (the schema is otherwise the one enforced)."""
        return [self.compact_listing(name) if compact else self.listing(name)
                for name in TOOLS if self.roles.may_call(caller.role, name)]

    def compact_listing(self, name: str) -> Listing:
        from .listing import compact, first_sentence
        full = self.listing(name)
        return self.book.memoized(("compact listing", name), lambda: Listing(
            name, first_sentence(full.description), compact(full.input_schema), full.output_schema,
            full.output_contract, full.annotations))

    def listing(self, name: str) -> Listing:
        def build() -> Listing:
            ref = f"{TOOL_SCHEMAS}{name}{SUFFIX}"
            document = self.book.schemas.get(ref)
            envelope = bundle(self.book.schemas, "envelope.v1.schema.json#/$defs/envelope")
            data = bundle(self.book.schemas, f"{ref}#/$defs/data")
            defs = {**envelope.pop("$defs", {}), **data.pop("$defs", {})}
            contract = dict(envelope, properties=dict(envelope["properties"], data={"anyOf": [{"type": "null"}, data]}),
                            **{"$defs": defs})
            described = dict(envelope["properties"]["data"])
            described["description"] += f"; its contract when ok is #/$defs/data ({ref}#/$defs/data)"
            listed = dict(envelope, properties=dict(envelope["properties"], data=described),
                          **{"$defs": {**defs, "data": data}})
            assert document is not None, "bundle() above has read the tool's schema file"
            return Listing(name, document.get("description", ""), self.input_schema(name), listed, contract,
                           dict(document.get("annotations", {})))
        return self.book.memoized(("listing", name), build)

    def input_schema(self, name: str) -> dict:
        """The input schema `name` lists, and the one its arguments are checked against (listing/)."""
        from .listing import input_schema
        return self.book.memoized(("input", name), lambda: input_schema(
            self.book, bundle(self.book.schemas, f"{TOOL_SCHEMAS}{name}{SUFFIX}#/$defs/input")))

    def input_contract(self, name: str) -> Contract:
        """The checker of `name`'s arguments: of exactly the schema `input_schema` lists."""
        return self.book.memoized(("input contract", name), lambda: of_schema(
            self.input_schema(name), self.book.schemas.validator, self.roles.limits["argument_depth"],
            canonical.MAX_INT_BITS))

    # -- the checks, in order -------------------------------------------------------------------
    def _call(self, name: str, arguments: Any, caller: Caller, arguments_text: str | None = None,
              decoded: bool = False) -> Any:
        roles = self.roles
        tool = TOOLS.get(name) if isinstance(name, str) else None
        if tool is None or not roles.may_call(caller.role, name):
            if tool is None:
                raise self.unknown_tool(name, [t for t in TOOLS if roles.may_call(caller.role, t)])
            raise GroundrulesError(codes.PERMISSION_DENIED, roles.message("permission_denied", role=caller.role,
                                                                      tool=name), field="tool")
        if self.enabled_toolsets is not None and self.toolsets is not None \
                and not self.toolsets.listed(name, self.enabled_toolsets):
            toolset = self.toolsets.of_tool(name).name
            raise GroundrulesError(codes.TOOLSET_NOT_ENABLED, self.messages.message(
                "toolset_not_enabled", tool=name, toolset=toolset), field="tool")
        if not isinstance(arguments, dict):
            raise GroundrulesError(codes.INVALID_ARGUMENT, roles.message("not_an_object"), field="(arguments)")
        self._check_arguments(name, arguments, arguments_text, decoded)
        denied = roles.denied_option(caller.role, name, arguments)
        if denied is not None:
            raise GroundrulesError(codes.PERMISSION_DENIED, roles.message(
                "option_denied", role=caller.role, tool=name, option=denied[0], roles=list(denied[1])),
                field=denied[0])
        project = ""
        if tool.ledger:
            project = self._project(arguments.get("project", CURRENT_PROJECT), caller)
            if getattr(self, tool.ledger) is None:
                specific = f"not_configured_{tool.ledger}"      # a store the table names its own remedy for
                raise GroundrulesError(codes.NOT_CONFIGURED, roles.message(
                    specific if specific in roles.messages else "not_configured", tool=name))
        return tool.run(self, arguments, project, caller)

    def unknown_tool(self, name: Any, visible: list[str]) -> GroundrulesError:
        """The refusal of a tool name that is not among `visible` (what the caller may call)."""
        close = closest(name, visible)
        return GroundrulesError(codes.UNKNOWN_TOOL, self.roles.message("unknown_tool", tool=echo(name), tools=visible),
                                field="tool",
                                hint=self.messages.message("hint.did_you_mean", closest=close) if close else None)

    def _check_arguments(self, name: str, arguments: dict, arguments_text: str | None = None,
                         decoded: bool = False) -> None:
        """`arguments_text`: their JSON text when the caller already made it, so that only the
        limits are left to check; `decoded`: the arguments were decoded from JSON (a transport's,
        or call_text's), so the limits may be read off that text."""
        checker = self.input_contract(name)
        if decoded:
            arguments_text = arguments_text if arguments_text is not None else canonical.json_text(arguments)
        depth, bits = checker.max_depth, checker.max_int_bits
        if (decoded and arguments_text is not None and depth is not None and bits is not None
                and json_bounds.within(arguments_text.encode("utf-8"), depth, json_bounds.digits_within(bits))):
            found = None
        elif arguments_text is None:
            found = checker.not_json(arguments)
        else:
            found = canonical.beyond_limits(arguments, checker.max_depth, checker.max_int_bits)
        if found is not None:
            path, problem = found
            self._invalid(_path(path), problem)
        errors = checker.errors(arguments)
        if errors:
            where, words, params = _describe(errors[0])
            self._invalid(where, self.messages.message(words, **params))

    def _invalid(self, field_path: str, problem: str) -> None:
        field_path = field_path or "(arguments)"
        raise GroundrulesError(codes.INVALID_ARGUMENT, self.roles.message("invalid_argument", field=field_path,
                                                                      problem=problem), field=field_path)

    def _project(self, project: str, caller: Caller) -> str:
        if project == CURRENT_PROJECT and caller.projects:
            return caller.projects[0]
        if project not in caller.projects:
            raise GroundrulesError(codes.PROJECT_SCOPE_MISMATCH,
                                   self.roles.message("project_denied", project=echo(project)), field="project")
        return project


def storage_refusal(book: Rulebook, exc: StorageFailure) -> GroundrulesError:
    """A store's failure as its caller reads it, whichever ledger's store failed: one sentence, the
    role table's `storage_error`, in the language of the server's tables."""
    return GroundrulesError(exc.code, book.table(ROLES_TABLE).message("storage_error", kind=exc.kind))


def _path(parts) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + shown(part)
    return out


def _describe(error) -> tuple[str, str, dict]:
    """(argument path, the catalogue's message for what is wrong, its parameters) from jsonschema's
    structured fields; keys a caller invented are echoed only when they look like identifiers."""
    from jsonschema.exceptions import best_match
    if error.validator in ("anyOf", "oneOf") and error.context:
        return _describe(best_match(_closest_branch(error.context)))
    where = _path(error.absolute_path)
    v, value, instance = error.validator, error.validator_value, error.instance
    if v == "required":
        missing = [k for k in value if isinstance(instance, dict) and k not in instance]
        return where, "argument.required", {"names": missing}
    if v == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(shown(k) for k in instance if k not in allowed)[:3]
        return where, "argument.unknown", {"names": extra, "allowed": allowed}
    if v == "oneOf" and all(set(alt) == {"required"} for alt in value):
        return where, "argument.one_of", {"names": [k for alt in value for k in alt["required"]]}
    if v == "type":
        return where, "argument.type", {"types": value if isinstance(value, list) else [str(value)]}
    if v in ("enum", "const"):
        choices = [str(c) for c in (value if v == "enum" else [value])]
        close = closest(instance, choices) if isinstance(instance, str) else ""
        return where, "argument.enum_close" if close else "argument.enum", {"choices": choices, "closest": close}
    if v in ARGUMENT_WORDS:
        return where, ARGUMENT_WORDS[v], {"value": value}
    return where, "argument.keyword", {"keyword": v}


def _closest_branch(errors) -> list:
    """The errors of the branch of a choice that the value came closest to (fewest errors; the
    first such branch): a message record with a bad content is told about its content, not that it
    lacks a tool receipt's keys."""
    branches: dict = {}
    for error in errors:
        branches.setdefault(error.schema_path[0] if error.schema_path else 0, []).append(error)
    return min(branches.values(), key=len)
