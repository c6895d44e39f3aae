"""Evidence locks (seed 003 §3): mechanical candidates locked before any semantic judgement."""
from .compile import LockPattern, LockTable, compile_lock_patterns
from .scan import lock, lock_document, lock_id, lock_messages

__all__ = ["LockPattern", "LockTable", "compile_lock_patterns", "lock", "lock_document", "lock_id", "lock_messages"]
