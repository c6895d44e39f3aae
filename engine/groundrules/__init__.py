"""groundrules: the deterministic rules layer beside LLM agents.

The public API. Transports (the CLI, the MCP server, demo) reach the library only through the tool
registry, `Service.call(tool, arguments, caller)`; hosts may also call the parts directly.

Each name is imported on first use (PEP 562), so that a process using one part (a CLI command, say)
does not import the others; `from groundrules import X` works as usual.
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:                                  # what a type checker reads (re-exported explicitly)
    from .api import Authentication as Authentication, Caller as Caller, Service as Service
    from .core.errors import GroundrulesError as GroundrulesError, Problem as Problem, RulesError as RulesError
    from .evidence import EvidenceLedger as EvidenceLedger
    from .evidence.fold import fold as fold
    from .findings import FindingLedger as FindingLedger
    from .locks import lock as lock, lock_messages as lock_messages
    from .core.rulebook import Holder as Holder, Rulebook as Rulebook
    from .core.rulebook import default as default_rulebook, load as load_rulebook
    from .support_reason import contract_text as contract_text, explain as explain
    from .support_reason import explain_with_trace as explain_with_trace
    from .verification import draft_candidate as draft_candidate, repair_loop as repair_loop, verify as verify

# public name -> (module, its name there)
_EXPORTS = {
    "Authentication": (".api", "Authentication"), "Caller": (".api", "Caller"), "Service": (".api", "Service"),
    "GroundrulesError": (".core.errors", "GroundrulesError"), "Problem": (".core.errors", "Problem"),
    "RulesError": (".core.errors", "RulesError"),
    "EvidenceLedger": (".evidence", "EvidenceLedger"), "fold": (".evidence", "fold"),
    "FindingLedger": (".findings", "FindingLedger"),
    "lock": (".locks", "lock"), "lock_messages": (".locks", "lock_messages"),
    "Holder": (".core.rulebook", "Holder"), "Rulebook": (".core.rulebook", "Rulebook"),
    "default_rulebook": (".core.rulebook", "default"), "load_rulebook": (".core.rulebook", "load"),
    "contract_text": (".support_reason", "contract_text"), "explain": (".support_reason", "explain"),
    "explain_with_trace": (".support_reason", "explain_with_trace"),
    "repair_loop": (".verification", "repair_loop"), "verify": (".verification", "verify"),
    "draft_candidate": (".verification", "draft_candidate"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'groundrules' has no attribute '{name}'")
    module, attribute = _EXPORTS[name]
    value = getattr(import_module(module, __name__), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
