"""Benchmark (issue 19, items 1 and 5): no cheap argument costs super-linear time.

One caller's argument must never freeze the shared server, so the work of a call must grow no faster
than what the caller sent. For every tool in the registry, at every string position of its input
schema (the positions of tests/api/echo_corpus.py: the listed schema, the contracts its free-form
arguments name, every string of the tool's base call, every object as a place for a key) a growing
string, and at every array position a growing array (small distinct objects, small distinct strings,
and copies of the position's own item, numbered), each in an otherwise valid call, answered
in-process through `Service.call` (the path every transport takes), over SQLite ledgers. A second
verify_extraction base gives its schema inline, so the caller's schema is swept too. Each call is made
in a project of its own, holding only what its base call names (a finding and its rule proposal, the
message M-1), written before the clock starts: what it costs follows from what it was sent, not from
what the calls before it stored.

Each (position, fill) is called at 4 KB, 16 KB, 64 KB, 256 KB and 1 MiB of JSON (every body under the
wire cap), timed in this thread's CPU time with the garbage collector paused (it runs between calls:
a full collection scans the whole heap, and lands on whichever call crosses its threshold, a step
that looks like super-linear growth), in interleaved rounds (each round calls every case at every
size); the figure is the median per size. A case is flagged when its time grows super-linearly
(more than SUPERLINEAR times per 4x of size, where the larger time is past NOISE_S) or when a size up
to 256 KB costs more than SLOW_S. A sample past CAP_S is not repeated, and the case's larger sizes
are not run (marked '>cap'). Prints the flagged cases, then the slowest at 256 KB.

Run: .venv/bin/python tests/perf/bench_cost_sweep.py [--tiny] [--rounds N] [--only TOOL,...] [--fills F,...]
(--tiny: one round at 64, 256 and 1,024 bytes: proves every case is built and answered.)
"""
from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "api"))

import echo_corpus  # noqa: E402
from groundrules import Caller, EvidenceLedger, FindingLedger, Service  # noqa: E402
from groundrules.api import TOOLS  # noqa: E402
from groundrules.core import rulebook  # noqa: E402
from groundrules.core.schema_check import bundle  # noqa: E402
from groundrules.decision_log.crypto import DecisionKey  # noqa: E402
from groundrules.decision_log.log import DecisionLog  # noqa: E402
from groundrules.findings import SequentialIds, StepClock  # noqa: E402

SIZES = (4096, 16384, 65536, 262144, 1048576)
TINY_SIZES = (64, 256, 1024)
SUPERLINEAR = 6.0                 # time ratio per 4x of size: linear is 4
NOISE_S = 0.005                   # a ratio counts only where the larger time is past this
SLOW_S = 0.25                     # no size up to 256 KB may cost more
SLOW_UP_TO = 262144
CAP_S = 5.0                       # a sample past this is taken once, and larger sizes are not run
MIXED = "".join(echo_corpus.ALPHABETS)     # CJK, digits, paths, braces, NUL, newlines: what parts scan for
FILLS = ("string", "key", "objects", "strings", "items")
CALLER = Caller("bench", "reviewer", ("p1",))
INLINE = {"type": "object", "description": "结束时间不得早于原材料中的开始时间。",
          "properties": {"startTime": {"type": "string", "pattern": "^[0-9]{2}:[0-9]{2}$"},
                         "endTime": {"type": "string", "pattern": "^[0-9]{2}:[0-9]{2}$", "maxLength": 5,
                                     "enum": ["09:00", "10:00"]}},
          "required": ["startTime", "endTime"], "additionalProperties": False}


def example(part: str, name: str) -> Any:
    return json.loads((ROOT / "schemas" / "examples" / part / f"{name}.json").read_text(encoding="utf-8"))


def bases() -> dict[str, tuple[str, dict]]:
    """label -> (tool, a valid call): the echo corpus's, read_decisions', and verify with its schema inline."""
    out = {tool: (tool, call) for tool, call in echo_corpus.bases(example).items()}
    out["read_decisions"] = ("read_decisions", {"tool": "explain_support", "outcome": "ok", "limit": 5})
    inline = {k: v for k, v in example("verify", "end_time_only").items() if k != "instance"}
    out["verify_extraction(inline)"] = ("verify_extraction", dict(inline, schema=INLINE))
    return out


def text(size: int) -> str:
    """`size` bytes of mixed text (as UTF-8; its JSON escapes make it a little longer)."""
    chars = size * len(MIXED) // len(MIXED.encode("utf-8"))
    return (MIXED * (chars // len(MIXED) + 1))[:chars]


def numbered(item: Any, n: int) -> Any:
    """`item` made distinct by `n`: its first string (a key's value, or itself) suffixed."""
    if isinstance(item, str):
        return f"{item}{n}"
    if isinstance(item, dict):
        for key, value in item.items():
            if isinstance(value, str):
                return dict(item, **{key: f"{value}{n}"})
        return dict(item, n=n)
    return item


def array(fill: str, size: int, item: Any) -> list:
    """About `size` bytes of JSON array, of distinct items of the fill's kind."""
    make = {"objects": lambda n: {"k": f"v{n}"}, "strings": lambda n: f"s{n}",
            "items": lambda n: numbered(item, n)}[fill]
    out, used = [], 2
    for n in itertools.count():
        if used >= size:
            return out
        value = make(n)
        out.append(value)
        used += len(json.dumps(value, ensure_ascii=False).encode("utf-8")) + 1


class Case:
    """One (tool, position, fill): the walker that places a value, and how the value is grown."""

    def __init__(self, label: str, tool: str, walker: echo_corpus.Walker, path: tuple, fill: str):
        self.label, self.tool, self.walker, self.path, self.fill = label, tool, walker, path, fill
        self.id = f"{label}:{echo_corpus.shown(path)}" + ("{key}" if fill == "key" else "")
        self.item = None
        if fill == "items":
            found = self._base_at(path)
            node, root = walker.schema_at(path + (("item", 0),))
            self.item = found[0] if isinstance(found, list) and found else walker.smallest(node, root)

    def _base_at(self, path: tuple) -> Any:
        value = self.walker.base
        for step in path:
            if step[0] == "key":
                value = value.get(step[1]) if isinstance(value, dict) else None
            elif step[0] == "item":
                value = value[step[1]] if isinstance(value, list) and len(value) > step[1] else None
        return value

    def arguments(self, size: int) -> Any:
        if self.fill in ("string", "key"):
            return self.walker.place(self.path, text(size), as_key=self.fill == "key")
        return self.walker.place(self.path, array(self.fill, size, self.item))


def cases(service: Service, only: set[str], fills: set[str]) -> Iterator[Case]:
    """Every case, in a fixed order, each (label, position, fill) once."""
    bundled: dict[str, dict] = {}

    def contract(ref: str) -> dict:
        if ref not in bundled:
            bundled[ref] = bundle(service.book.schemas, ref)
        return bundled[ref]
    for label, (tool, base) in bases().items():
        if only and tool not in only and label not in only:
            continue
        walker = echo_corpus.Walker(service.listing(tool).input_schema, base, contract)
        seen: set[tuple] = set()
        positions = (("string", walker.strings()), ("string", walker.in_base()), ("key", walker.objects()),
                     *((fill, itertools.chain(walker.arrays(), walker.in_base(list)))
                       for fill in ("objects", "strings", "items")))
        for fill, paths in positions:
            for path in paths:
                case = Case(label, tool, walker, path, fill)
                if fill in fills and (case.id, fill) not in seen:
                    seen.add((case.id, fill))
                    yield case


class Ledgers:
    """A service over SQLite ledgers, and one with a decision log too (read_decisions only: the log
    records every call it answers). `fresh(tool)` gives a caller whose project is new and holds
    what the tool's base call names: F-000001 and RP-000001 (as whatever ids they got there), M-1."""

    def __init__(self, folder: Path, book):
        self.findings = FindingLedger(folder / "findings.db", rulebook=book, clock=StepClock(), ids=SequentialIds(),
                                      rules_root=folder)
        n = itertools.count()
        self.evidence = EvidenceLedger(folder / "evidence.db", ids=lambda: f"R-{next(n)}",
                                       clock=lambda: "2030-01-01T00:00:00Z", rulebook=book, project="p0")
        self.served = Service(book, findings=self.findings, evidence=self.evidence)
        self.log = DecisionLog(folder / "decisions.db", key=DecisionKey(os.urandom(32)), rulebook=book,
                               purge_every_s=None)
        self.logged = Service(book, decisions=self.log)
        self.projects = itertools.count(1)
        assert self.logged.call("explain_support", {"context": example("support_reason", "cq-shenlun-partial")},
                                CALLER)["ok"]

    def fresh(self, tool: str) -> tuple[Service, Caller, dict]:
        """(service, caller, the ids its base call's names stand for there)."""
        if tool == "read_decisions":
            return self.logged, CALLER, {}
        caller = Caller("bench", "reviewer", (f"p{next(self.projects)}",))
        named: dict[str, str] = {}
        ledger = TOOLS[tool].ledger
        if ledger == "evidence":
            assert self.served.call("append_evidence", {"record": echo_corpus.MESSAGE}, caller)["ok"]
        elif ledger == "findings":
            found = self.served.call("log_finding", echo_corpus.FINDING, caller)
            named["F-000001"] = found["data"]["finding_id"]
            proposed = self.served.call("propose_rule", {"finding_id": named["F-000001"], "rule_text": "- 先记录温度",
                                                         "target_path": "AGENTS.md", "rationale": "两次误判"}, caller)
            named["RP-000001"] = proposed["data"]["proposal_id"]
        return self.served, caller, named

    def close(self) -> None:
        for store in (self.findings, self.evidence, self.log):
            store.close()


def renamed(value: Any, named: dict[str, str]) -> Any:
    """`value` with each string that is a name of `named` replaced by what it stands for."""
    if isinstance(value, str):
        return named.get(value, value)
    if isinstance(value, dict):
        return {k: renamed(v, named) for k, v in value.items()}
    if isinstance(value, list):
        return [renamed(v, named) for v in value]
    return value


def timed(ledgers: Ledgers, tool: str, arguments: Any) -> tuple[float, str]:
    """CPU seconds of one call in this thread, in a fresh project, and what it answered (ok, or the
    error code)."""
    service, caller, named = ledgers.fresh(tool)
    if named:
        arguments = renamed(arguments, named)
    gc.disable()                  # collections run after the call, on the next allocations
    try:
        started = time.thread_time()
        envelope = service.call(tool, arguments, caller)
        spent = time.thread_time() - started
    finally:
        gc.enable()
    return spent, "ok" if envelope["ok"] else (envelope.get("error") or {}).get("code", "?")


def sweep(all_cases: list[Case], ledgers: Ledgers, sizes: tuple, rounds: int) -> dict[str, dict]:
    """case id + fill -> {size: [seconds...]}, and the codes answered, in interleaved rounds: each
    round calls every case at every size, the cases in a shuffled order (seeded per round)."""
    samples: dict[str, dict] = {}
    for r in range(rounds):
        order = list(all_cases)
        random.Random(f"sweep:{r}").shuffle(order)
        for done, case in enumerate(order):
            if done % 100 == 0:
                print(f"round {r + 1}/{rounds}: {done}/{len(order)} cases", file=sys.stderr, flush=True)
            key = f"{case.id} [{case.fill}]"
            got = samples.setdefault(key, {"case": case, "times": {}, "codes": {}, "capped": None})
            for size in sizes:
                if got["capped"] is not None and size >= got["capped"]:
                    break
                if size in got["times"] and got["times"][size][0] > CAP_S:
                    continue                        # taken once: past the cap
                spent, code = timed(ledgers, case.tool, case.arguments(size))
                got["times"].setdefault(size, []).append(spent)
                got["codes"][size] = code
                if spent > CAP_S:
                    got["capped"] = next((s for s in sizes if s > size), None) or sizes[-1] + 1
                    break
    return samples


def verdict(entry: dict, sizes: tuple) -> tuple[list[str], dict[int, float]]:
    """Why a case is flagged (empty: it is not), and its median time per size."""
    medians = {size: statistics.median(entry["times"][size]) for size in sizes if size in entry["times"]}
    why = []
    for small, large in zip(sizes, sizes[1:]):
        if small in medians and large in medians and medians[large] > NOISE_S:
            ratio = medians[large] / max(medians[small], 1e-6)
            if ratio > SUPERLINEAR * (large / small) / 4:
                why.append(f"x{ratio:.1f} from {words(small)} to {words(large)}")
    slow = [size for size, t in medians.items() if size <= SLOW_UP_TO and t > SLOW_S]
    if slow:
        why.append(f"{medians[slow[0]] * 1000:.0f} ms at {words(slow[0])}")
    if entry["capped"] is not None and entry["capped"] <= sizes[-1]:
        why.append(f"past {CAP_S:.0f} s before {words(entry['capped'])}")
    return why, medians


def words(size: int) -> str:
    return f"{size // 1048576} MiB" if size >= 1048576 else f"{size // 1024} KB" if size >= 1024 else f"{size} B"


def ms(value: float | None) -> str:
    return ">cap" if value is None else f"{value * 1000:.1f}"


def table(rows: list, sizes: tuple) -> str:
    head = "| case | fill | " + " | ".join(f"{words(s)} ms" for s in sizes) + " | answer | why |"
    lines = [head, "|" + "---|" * (len(sizes) + 4)]
    for key, entry, medians, why in rows:
        last = max(entry["codes"], default=None)
        lines.append(f"| {entry['case'].id} | {entry['case'].fill} | "
                     + " | ".join(ms(medians.get(s)) for s in sizes)
                     + f" | {entry['codes'].get(last, '-')} | {'; '.join(why) or '-'} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help="one round at tiny sizes")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="tools (or base labels), comma-separated")
    parser.add_argument("--fills", default=",".join(FILLS), help=f"of {', '.join(FILLS)}")
    parser.add_argument("--slowest", type=int, default=15, help="how many of the slowest cases to list")
    args = parser.parse_args()
    sizes, rounds = (TINY_SIZES, 1) if args.tiny else (SIZES, args.rounds)
    only = {t for t in args.only.split(",") if t}
    fills = {f for f in args.fills.split(",") if f}
    assert fills <= set(FILLS), f"fills are {FILLS}"
    book = rulebook.default()
    with tempfile.TemporaryDirectory(prefix="sweep.") as folder:
        ledgers = Ledgers(Path(folder), book)
        all_cases = list(cases(ledgers.served, only, fills))
        tools = {case.tool for case in all_cases}
        assert only or tools == set(TOOLS), "every tool of the registry is swept"
        gc.freeze()               # what is loaded now lives on: the collections between calls skip it
        started = time.perf_counter()
        samples = sweep(all_cases, ledgers, sizes, rounds)
        elapsed = time.perf_counter() - started
        ledgers.close()
    rows = []
    for key, entry in samples.items():
        why, medians = verdict(entry, sizes)
        rows.append((key, entry, medians, why))
    flagged = [row for row in rows if row[3]]
    print(f"cost sweep: {len(all_cases)} cases ({len(tools)} tools; fills {', '.join(sorted(fills))}), "
          f"sizes {', '.join(words(s) for s in sizes)}, {rounds} interleaved round(s), CPU time of the "
          f"calling thread, medians; {elapsed:.0f} s wall")
    print(f"flagged (x{SUPERLINEAR:g} per 4x of size past {NOISE_S * 1000:g} ms, or > {SLOW_S * 1000:g} ms "
          f"up to {words(SLOW_UP_TO)}): {len(flagged)}")
    if flagged:
        print(table(flagged, sizes))
    at = min(sizes[-2:], key=lambda s: abs(s - SLOW_UP_TO))
    slowest = sorted(rows, key=lambda row: -row[2].get(at, float("inf")))[:args.slowest]
    print(f"\nslowest at {words(at)}:")
    print(table(slowest, sizes))


if __name__ == "__main__":
    main()
