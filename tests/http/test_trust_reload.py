"""The trust store under a running server (issue 30, item 3): SIGHUP's reload takes up a signer added
to the trust file, and a trust file that no longer loads keeps the signers in force; over HTTP on
loopback, as an agent's token calls. The record written also names the token's principal."""
from __future__ import annotations

import itertools
from pathlib import Path

from joserfc.jwk import OKPKey

from groundrules import EvidenceLedger, Service, load_rulebook
from groundrules.provenance import table as provenance
from groundrules.provenance.signatures import sign
from groundrules.provenance.trust import load_trust
from groundrules.transports.mcp_http import GrantsVerifier, Reloader
from http_support import CALLERS, serving, write_tokens
from wire import Wire, envelope

ROOT = Path(__file__).resolve().parents[2]


def trust_text(signers: dict) -> str:
    lines = ["signers:"]
    for name, (jwk, cls) in signers.items():
        flow = ", ".join(f"{k}: {v}" for k, v in jwk.items())
        lines += [f"  {name}:", f"    keys: [{{{flow}}}]", f"    records: [{cls}]"]
    return "\n".join(lines) + "\n"


def test_sighup_rereads_the_trust_store_and_a_bad_one_keeps_the_signers(tmp_path):
    book = load_rulebook()
    cls = provenance.of(book).class_of({"type": "tool_receipt"})
    old, new = (OKPKey.generate_key("Ed25519", parameters={"kid": kid}) for kid in ("old-1", "new-1"))
    trust_file = tmp_path / "trust.yaml"
    trust_file.write_text(trust_text({"old-tool": (old.as_dict(private=False), cls)}), encoding="utf-8")
    ids = itertools.count(1)
    ledger = EvidenceLedger(str(tmp_path / "e.db"), ids=lambda: f"R{next(ids)}",
                            clock=lambda: "2025-03-01T08:00:00Z", rulebook=book)
    service = Service(book, evidence=ledger, trust=load_trust(trust_file))

    def receipt(n: int, key) -> dict:
        return sign({"id": f"q{n}", "type": "tool_receipt", "tool": "crm", "request_id": f"r{n}", "body": "{}"},
                    key.as_dict(private=True))
    try:
        with serving(service, write_tokens(tmp_path / "tokens.yaml", CALLERS)) as (url, served):
            reloader = Reloader(served, GrantsVerifier(tmp_path / "tokens.yaml", book.table("roles").roles), None)
            wire = Wire(url, "tok-alpha")
            stored = envelope(wire.call(None, "append_evidence", {"record": receipt(1, old)}))
            assert stored["data"]["records"][0]["writer"] == {
                "principal": CALLERS["tok-alpha"][0], "role": "agent", "auth": {"method": "token"}, "signer": "old-tool"}
            refused = envelope(wire.call(None, "append_evidence", {"record": receipt(2, new)}))
            assert refused["error"]["code"] == "SIGNER_UNKNOWN"
            trust_file.write_text(trust_text({"old-tool": (old.as_dict(private=False), cls),
                                              "new-tool": (new.as_dict(private=False), cls)}), encoding="utf-8")
            reloader.reload()
            taken = envelope(wire.call(None, "append_evidence", {"record": receipt(3, new)}))
            assert taken["ok"] and taken["data"]["records"][0]["writer"]["signer"] == "new-tool"
            trust_file.write_text("signers: [not, a, mapping]\n", encoding="utf-8")
            reloader.reload()
            kept = envelope(wire.call(None, "append_evidence", {"record": receipt(4, new)}))
            assert kept["ok"], "a trust file that does not load keeps the signers in force"
    finally:
        ledger.close()
