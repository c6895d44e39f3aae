"""groundrules: the deterministic rules layer beside LLM agents.

The public API. Transports (the CLI, the MCP server, demo) reach the library only through the tool
registry, `Service.call(tool, arguments, caller)`; hosts may also call the parts directly.
"""
from .api import Caller, Service
from .errors import GroundrulesError, Problem, RulesError
from .evidence import EvidenceLedger, fold
from .findings import FindingLedger
from .locks import lock, lock_messages
from .rulebook import Holder, Rulebook, default as default_rulebook, load as load_rulebook
from .support_reason import contract_text, explain, explain_with_trace
from .verification import repair_loop, verify

__all__ = [
    "Caller", "EvidenceLedger", "FindingLedger", "GroundrulesError", "Holder", "Problem", "Rulebook",
    "RulesError", "Service", "contract_text", "default_rulebook", "explain", "explain_with_trace", "fold",
    "load_rulebook", "lock", "lock_messages", "repair_loop", "verify",
]
