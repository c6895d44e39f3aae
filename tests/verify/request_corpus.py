"""The labelled request corpus (tests/cases/verify_requests/{train,heldout,heldout2,heldout3,heldout4,
heldout5,heldout6}.yaml, issue 31 items 2 and 3): each request with good candidates verification must accept and
bad ones it must refuse, scored per family. Used by tests/verify/test_request_corpus.py and tests/perf/bench_verify.py."""
from __future__ import annotations

from pathlib import Path

import yaml

from groundrules.verification import verify

CORPUS = Path(__file__).resolve().parents[1] / "cases" / "verify_requests"
SPLITS = ("train", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6")
# splits still held out: never tuned on, so tools print their figures but not their sentences
BLIND = ("heldout5", "heldout6")
EMPTY_SCHEMA = {"type": "object", "properties": {}}
NO_EXTRACTION = {"data": {}, "evidence": [], "descriptionChecks": [], "fieldResults": [], "issues": []}


def requests(split: str) -> list[dict]:
    return yaml.safe_load((CORPUS / f"{split}.yaml").read_text(encoding="utf-8"))["requests"]


def request_of(item: dict) -> dict:
    req = {"input": item["input"], "fields": []}
    if item.get("context"):
        req["context"] = [{"role": role, "content": content} for role, content in item["context"]]
    return req


def candidate_of(item: dict, c: dict) -> dict:
    intents = [{"id": f"i{n}", "action": a, "target": t, "requirements": [], "status": "ready"}
               for n, (a, t) in enumerate(c["intents"], 1)]
    return {"intent": {"input": item["input"], "normalizedInput": item["input"], "primaryIntent": "",
                       "requirements": list(c.get("requirements", ())), "intents": intents,
                       "prohibitions": list(c.get("prohibitions", ()))},
            "extraction": NO_EXTRACTION}


def score(split: str, book) -> tuple[dict, list]:
    """({family: {"good": [accepted, total], "bad": [refused, total]}}, [misses]) over a split."""
    by_family: dict = {}
    misses = []
    for item in requests(split):
        tally = by_family.setdefault(item["family"], {"good": [0, 0], "bad": [0, 0]})
        req = request_of(item)
        for label in ("good", "bad"):
            for c in item[label]:
                report = verify(req, EMPTY_SCHEMA, candidate_of(item, c), book)
                right = report["ok"] is (label == "good")
                tally[label][0] += right
                tally[label][1] += 1
                if not right:
                    issues = [i["code"] for i in (report["error"] or {}).get("issues", [])]
                    misses.append((item["id"], label, item["input"], c.get("why", ""), issues))
    return by_family, misses


def totals(by_family: dict) -> dict:
    out = {"good": [0, 0], "bad": [0, 0]}
    for tally in by_family.values():
        for label in out:
            out[label][0] += tally[label][0]
            out[label][1] += tally[label][1]
    return out
