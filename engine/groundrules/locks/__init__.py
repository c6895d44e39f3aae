"""Evidence locks (docs/spec/locks.md): mechanical candidates locked before any semantic judgement."""
from .compile import LockPattern, LockTable, compile_lock_patterns
from .messages import lock, lock_messages, lock_text
from .scan import lock_id

__all__ = ["LockPattern", "LockTable", "compile_lock_patterns", "lock", "lock_id", "lock_messages", "lock_text"]
