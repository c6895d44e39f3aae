"""Benchmark: candidate verifications per second.

1. the seed's example (one field, one evidence quote, one root description check);
2. a 50-field schema with 50 exact-evidence quotes over a 20 KB Chinese chat input.
The baseline is a bare `str.find` pass over the same 50 quotes, measured in the same run; the
ratio says what the rest of verification (contract, selection, descriptions, phrase scans,
report) costs on top of grounding. Target: median <= 5 ms per 50-field verification.

3. accuracy on the labelled request corpus (tests/cases/verify_requests, issue 31): per family and
   split, the share of bad candidates refused and of good ones accepted (targets: train >= 0.99
   both; held-out >= 0.97 refused, >= 0.98 accepted).
Throughput against main's code: tests/perf/bench_verify_ab.py.

Run: .venv/bin/python tests/perf/bench_verify.py [--tiny]
(--tiny: a few verifications each: proves the script runs.)
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "verify"))

from groundrules.verification import verify  # noqa: E402
from verify_seed_examples import CANDIDATE, REQUEST, SCHEMA  # noqa: E402
from verify_support import load_verify_book  # noqa: E402

WORDS = ("订单", "发货", "客户", "备注", "延迟", "原因", "问题", "物流", "仓库", "退款", "地址", "电话",
         "周五", "上午", "下午", "确认", "已经", "还没", "我们", "您好", "麻烦", "看一下", "谢谢",
         "，", "。", "：", "？", "A-", "10:00", "2024年", "3月", "号")


def chat_text(min_bytes: int, rng: random.Random) -> str:
    lines = []
    while len("\n".join(lines).encode("utf-8")) < min_bytes:
        role = rng.choice(("用户", "客服"))
        lines.append(role + "：" + "".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30))))
    return "\n".join(lines)


def big_case(fields: int = 50, min_bytes: int = 20 * 1024):
    rng = random.Random(20240501)
    text = chat_text(min_bytes, rng)
    names = [f"f{i:02d}" for i in range(fields)]
    values = {}
    for i, name in enumerate(names):
        start = (len(text) - 30) * i // fields + rng.randint(0, 10)
        values[name] = text[start:start + rng.randint(6, 20)]
    schema = {"type": "object", "description": "所有字段都必须取自同一段会话。",
              "properties": {n: {"type": "string"} for n in names}, "required": names[:10],
              "additionalProperties": False}
    intent = {"input": text, "normalizedInput": text[:50], "primaryIntent": "整理会话",
              "requirements": [], "intents": [{"id": "i1", "action": "extract", "target": "会话字段",
                                               "requirements": [], "status": "ready"}],
              "prohibitions": []}
    extraction = {"data": values,
                  "evidence": [{"path": f"/data/{n}", "mode": "exact",
                                "sources": [{"sourceId": "input", "quote": values[n]}]} for n in names],
                  "descriptionChecks": [{"path": "/data", "verdict": "satisfied", "explanation": "均来自输入。",
                                         "sources": [{"sourceId": "input", "quote": values[names[0]]}]}],
                  "fieldResults": [{"path": f"/data/{n}", "status": "extracted", "explanation": "明确。"}
                                   for n in names],
                  "issues": []}
    return text, {"input": text}, schema, {"intent": intent, "extraction": extraction}, list(values.values())


def median_seconds(fn, repeat: int) -> float:
    fn()                                            # warm caches (compiled inline schema, validators)
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main(tiny: bool) -> None:
    scale = 100 if tiny else 1
    book = load_verify_book()
    assert verify(REQUEST, SCHEMA, CANDIDATE, book)["ok"]
    seed = median_seconds(lambda: verify(REQUEST, SCHEMA, CANDIDATE, book), 2000 // scale)
    print(f"seed example:           median {seed * 1e6:8.1f} µs/verification   {1 / seed:10.0f} verifications/s")

    text, request, schema, candidate, quotes = big_case()
    report = verify(request, schema, candidate, book)
    assert report["ok"], report["error"]
    assert all(g["start"] is not None for g in report["grounding"])
    big = median_seconds(lambda: verify(request, schema, candidate, book), max(1, 300 // scale))

    def bare():
        for q in quotes:
            text.find(q)
    base = median_seconds(bare, 3000 // scale)
    print(f"input: {len(text)} characters, {len(text.encode('utf-8'))} bytes UTF-8; "
          f"{len(quotes)} fields / {len(quotes)} quotes")
    print(f"50-field verification:  median {big * 1e3:8.3f} ms/verification   {1 / big:10.0f} verifications/s"
          f"   (target <= 5 ms: {'met' if big <= 0.005 else 'MISSED'})")
    print(f"bare str.find baseline: median {base * 1e6:8.1f} µs per 50 quotes    "
          f"{len(quotes) / base:10.0f} quotes/s")
    print(f"ratio verify / bare find: {big / base:.1f}x")
    accuracy(book)


def accuracy(book) -> None:
    from request_corpus import BLIND, SPLITS, score, totals       # here: bench_verify_ab imports this file's big_case alone
    for split in SPLITS:
        by_family, misses = score(split, book)
        print(f"request corpus, {split}:")
        for family, t in sorted(by_family.items()) + [("all", totals(by_family))]:
            (ref, nbad), (acc, ngood) = t["bad"], t["good"]
            print(f"  {family:20s} bad refused {ref:4d}/{nbad:<4d} {ref / nbad:6.3f}   "
                  f"good accepted {acc:4d}/{ngood:<4d} {acc / ngood:6.3f}")
        for m in misses:      # a blind split's misses by id only: whoever tunes the tables must not read them
            print(f"  missed {m[0]} ({m[1]})" + ("" if split in BLIND else f": {m[2]} [{m[3]}]"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help="a few small rounds, every check still made: proves the script runs")
    main(parser.parse_args().tiny)
