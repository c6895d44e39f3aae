"""Provenance: who wrote a ledger record, and whether what they wrote may count.

`table` compiles rules/provenance.yaml (which writer may append which record, and the verdict);
`trust` loads the operator's trust store (signers, their public keys, what each may vouch for);
`signatures` signs a record and verifies a record's signature against the trust store.
"""
