"""Fold cost per event at 1k, 10k and 100k events (median of several runs), with the ratio of the
per-event cost to the 1k baseline measured in the same run: a ratio near 1 means linear.

    .venv/bin/python tests/perf/bench_fold.py [--tiny]

(--tiny: 100 and 200 events, one run each: proves the script runs.)
"""
from __future__ import annotations

import argparse
import gc
import statistics
import time
from pathlib import Path

from groundrules import fold, load_rulebook

ROOT = Path(__file__).resolve().parents[2]
SIZES = ((1_000, 7), (10_000, 5), (100_000, 3))
TINY = ((100, 1), (200, 1))
SLOTS = ("region", "company_region", "delivery_region", "contact_name")


def payload(n: int) -> dict:
    """n events over a conversation: values, corrections, declines, locked phones, new scopes."""
    records, events, dispositions = [], [], []
    for i in range(n):
        mid = f"m{i}"
        if i % 10 == 3:
            number = f"139{i % 100_000_000:08d}"
            content = f"我的手机是 {number[:3]} {number[3:7]}-{number[7:]}，白天都在"
            start = content.index(number[:3])
            quote = content[start:start + 13]
            records.append({"id": mid, "type": "message", "role": "user", "state": "sent", "content": content})
            records.append({"id": f"L{i}", "type": "lock", "lock": {
                "id": f"L{i}", "pattern": "cn_mobile.mobile", "kind": "phone", "quote": quote,
                "locator": {"message_id": mid, "start": start, "end": start + 13},
                "normalized_value": number, "valid": True, "invalid_reason": None}})
            dispositions.append({"lock": f"L{i}", "slot": "phone"})
            events.append({"id": f"e{i}", "type": "set", "slot": "phone", "value": number, "evidence": [f"L{i}"]})
            continue
        content = f"第 {i} 轮：地区是 R{i % 7}"
        records.append({"id": mid, "type": "message", "role": "user", "state": "sent", "content": content,
                        "observed_at": "2024-05-01T10:00:00+08:00"})
        slot = SLOTS[i % len(SLOTS)]
        if i % 500 == 499:
            events.append({"id": f"e{i}", "type": "new_scope", "scope": f"demand_{i}", "evidence": [mid]})
        elif i % 10 == 7:
            events.append({"id": f"e{i}", "type": "decline", "slot": "contact_name", "evidence": [mid]})
        elif i % 10 == 5:
            events.append({"id": f"e{i}", "type": "correct", "slot": slot, "value": f"R{i % 7}", "evidence": [mid]})
        else:
            quote = f"R{i % 7}"
            start = content.index(quote)
            events.append({"id": f"e{i}", "type": "set", "slot": slot, "value": quote,
                           "evidence": [{"message_id": mid, "start": start, "end": start + len(quote), "quote": quote}]})
    return {"now": "2024-05-02T00:00:00+08:00", "records": records,
            "interpretations": [{"id": "I1", "events": events, "dispositions": dispositions}]}


def _median(data: dict, book, runs: int, collect: bool) -> float:
    """Median seconds per fold; with collect=False the cyclic GC is paused around each run, to
    separate the fold's own cost from the collector's, which grows with the live heap."""
    times = []
    for _ in range(runs):
        if not collect:
            gc.disable()
        try:
            start = time.perf_counter()
            fold(data, book)
            times.append(time.perf_counter() - start)
        finally:
            gc.enable()
    return statistics.median(times)


def main(tiny: bool = False) -> None:
    book = load_rulebook(ROOT)
    fold(payload(100), book)                                  # warm caches and compiled validators
    base_on = base_off = None
    print(f"{'events':>8} {'runs':>4} {'median s':>10} {'µs/event':>9} {'ratio vs 1k':>11}"
          f" {'µs/event, GC paused':>20} {'ratio vs 1k':>11}")
    for n, runs in TINY if tiny else SIZES:
        data = payload(n)
        on = _median(data, book, runs, True) / n * 1e6
        off = _median(data, book, runs, False) / n * 1e6
        base_on, base_off = base_on or on, base_off or off
        print(f"{n:>8} {runs:>4} {on * n / 1e6:>10.3f} {on:>9.1f} {on / base_on:>11.2f}"
              f" {off:>20.1f} {off / base_off:>11.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help="a few small rounds, every check still made: proves the script runs")
    main(parser.parse_args().tiny)
