"""The cost of bounding patterns (issue 13): the compiled check of get_finding's input (whose
finding_id has a `pattern`) built as for a caller's schema (bounded: `regex` with a timeout)
against the same check as for our own contracts (stdlib `re`), in paired, interleaved rounds;
medians and the ratio bounded / re. Why only callers' schemas are bounded.

    .venv/bin/python tests/perf/bench_patterns.py [--tiny]

(--tiny: 2 rounds of 100 calls: proves the script runs.)
"""
from __future__ import annotations

import argparse
import statistics
import time

from groundrules.core import rulebook, schema_check
from groundrules.access import SUFFIX, TOOL_SCHEMAS

ARGS = {"finding_id": "F-3f9a0c2b", "events_limit": 5}


def checker(book, plain: bool):
    schema = schema_check.bundle(book.schemas, f"{TOOL_SCHEMAS}get_finding{SUFFIX}#/$defs/input")
    return schema_check.compile_check(schema, bounded=not plain)


def per_call(check, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        check(ARGS)
    return (time.perf_counter() - start) / calls * 1e6


def main(tiny: bool) -> None:
    rounds, calls = (2, 100) if tiny else (15, 20_000)
    book = rulebook.default()
    bounded, plain = checker(book, False), checker(book, True)
    assert bounded(ARGS) and plain(ARGS)
    b, p = [], []
    for _ in range(rounds):
        p.append(per_call(plain, calls))
        b.append(per_call(bounded, calls))
    ratios = [x / y for x, y in zip(b, p)]
    print(f"get_finding argument check: re {statistics.median(p):.2f} µs, bounded {statistics.median(b):.2f} µs, "
          f"ratio bounded/re {statistics.median(ratios):.2f} (median of {rounds} paired rounds of {calls})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help="a few small rounds, every check still made: proves the script runs")
    main(parser.parse_args().tiny)
