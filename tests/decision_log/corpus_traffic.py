"""The case corpora of the stateless tools as the calls an agent would make: the traffic the
replay tests log and replay."""
from __future__ import annotations

import json
from pathlib import Path

CASES = Path(__file__).resolve().parents[1] / "cases"


def traffic() -> list[tuple[str, dict]]:
    """Every case of the stateless tools' corpora, as the call an agent would make."""
    calls = [("explain_support", {"context": json.loads(p.read_text(encoding="utf-8"))})
             for p in sorted((CASES / "support_reason").glob("*.json"))]
    calls += [("lock_message", {"messages": json.loads(p.read_text(encoding="utf-8"))["messages"]})
              for p in sorted((CASES / "locks").rglob("*.json"))]
    for p in sorted((CASES / "fold").glob("*.json")):
        calls += [("fold_evidence", payload) for payload in json.loads(p.read_text(encoding="utf-8")).values()]
    calls += [("verify_extraction", json.loads(p.read_text(encoding="utf-8")))
              for p in sorted((CASES / "verify").rglob("*.json"))]
    return calls
