"""The opt-in decision log: every call a host answers, kept encrypted, masked by a table, for a set
number of days, readable by reviewers, and replayable under a candidate rulebook (docs/decision-log.md).

log       DecisionLog: the collaborator Service.call hands each answered call to (off the call's path)
crypto    the key (from a file or the environment, never the database) and AES-GCM sealing
masking   the decision_masking table kind: never kept, personal, retention, placeholders
replay    logged calls of the stateless tools re-run under a candidate rulebook, compared
promote   a logged call written as a corpus case, its personal values replaced by placeholders
"""
