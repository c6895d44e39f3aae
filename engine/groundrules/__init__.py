"""groundrules: the deterministic rules layer beside LLM agents.

The public API; the CLI and the MCP server import only from here.
"""
from .errors import GroundrulesError, Problem, RulesError
from .evidence import MemoryLedger, SqliteLedger, fold
from .findings import Ledger as FindingLedger
from .rulebook import Holder, Rulebook, default as default_rulebook, load as load_rulebook
from .locks import lock, lock_messages
from .support_reason import contract_text, explain, explain_with_trace
from .verification import repair_loop, verify, verify_envelope

__all__ = [
    "GroundrulesError", "Holder", "Problem", "Rulebook", "RulesError", "contract_text",
    "default_rulebook", "explain", "explain_with_trace", "fold", "MemoryLedger", "SqliteLedger", "load_rulebook", "lock", "lock_messages",
    "repair_loop", "verify", "verify_envelope", "FindingLedger",
]
