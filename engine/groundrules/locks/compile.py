"""Compiling a `lock_patterns` table: regexes, step lists and examples, checked at load time.

A bad regex, an unknown step or check, an undeclared invalid_reason: each is a Fault located at
its key, so the loader reports file:line:col and nothing half-compiled is ever scanned with.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import regex

from ..errors import Fault, did_you_mean
from ..examples import ExampleResult
from .scan import candidates
from .steps import compile_checks, compile_normalizers

DEFAULT_ROLE, DEFAULT_STATE = "user", "sent"   # an example's message, unless it says otherwise


@dataclass(frozen=True)
class LockPattern:
    id: str                  # "<table id>.<pattern id>": unique in a rulebook because table ids are
    kind: str
    regex: regex.Pattern
    prefilter: tuple         # the message must contain one of these, or () for "always scan"
    start_group: str | None  # a named group (in a lookbehind) where the lock starts, else the match start
    roles: frozenset
    states: frozenset
    normalize: tuple         # str -> str steps, in order
    checks: tuple            # steps.Check, in order; the first failing one names invalid_reason
    timeout: float           # seconds, per scan of one message
    examples: tuple
    where: tuple             # key path of the pattern inside its table


@dataclass(frozen=True)
class LockTable:
    kind: str
    id: str
    file: str
    timeout_ms: int
    invalid_reasons: dict
    patterns: tuple

    def check_examples(self) -> Iterator[ExampleResult]:
        """Each example: exactly the listed candidates of this pattern, in order. A pattern needs at
        least one positive (non-empty `locks`) and one negative (`locks: []`) example."""
        for p in self.patterns:
            local = p.id[len(self.id) + 1:]
            if not any(ex["locks"] for ex in p.examples):
                yield ExampleResult(f"{self.id}:{local}", False, "pattern has no positive example",
                                    p.where + ("id",))
            if not any(not ex["locks"] for ex in p.examples):
                yield ExampleResult(f"{self.id}:{local}", False, "pattern has no negative example "
                                    "(text with locks: [])", p.where + ("id",))
            for n, ex in enumerate(p.examples, 1):
                yield _check_example(p, ex, f"{self.id}:{local}:{n}", p.where + ("examples", n - 1))

    def lint_faults(self) -> list[Fault]:
        out = []
        for p in self.patterns:
            kinds = {bool(ex["locks"]) for ex in p.examples}
            missing = [w for w, flag in (("positive", True), ("negative", False)) if flag not in kinds]
            if missing:
                out.append(Fault("missing-example", f"pattern '{p.id}' has no {' or '.join(missing)} example",
                                 p.where + ("id",), "add examples: [{text: ..., locks: [...]}, "
                                 "{text: ..., locks: []}] under the pattern"))
        used = {c.reason for p in self.patterns for c in p.checks}
        for reason in self.invalid_reasons:
            if reason not in used:
                out.append(Fault("unused-invalid-reason", f"invalid_reason '{reason}' is given by no check",
                                 ("invalid_reasons", reason), "remove it, or name it in a check",
                                 "warning"))
        return out


def _check_example(p: LockPattern, ex: dict, test_id: str, where: tuple) -> ExampleResult:
    text = ex["text"]
    for i, want in enumerate(ex["locks"]):
        if text[want["start"]:want["end"]] != want["quote"]:
            return ExampleResult(test_id, False, f"expected lock {i + 1}: quote {want['quote']!r} is not "
                                 f"text[{want['start']}:{want['end']}]", where + ("locks", i))
    role, state = ex.get("role", DEFAULT_ROLE), ex.get("state", DEFAULT_STATE)
    try:
        got = candidates(p, "example", role, state, text)
    except TimeoutError:
        return ExampleResult(test_id, False, "scan timed out", where)
    got = [{"quote": c["quote"], "start": c["locator"]["start"], "end": c["locator"]["end"],
            "normalized_value": c["normalized_value"], "valid": c["valid"],
            "invalid_reason": c["invalid_reason"]} for c in got]
    wanted = [dict(w, invalid_reason=w.get("invalid_reason")) for w in ex["locks"]]
    if got == wanted:
        return ExampleResult(test_id, True, "", where)
    return ExampleResult(test_id, False, f"expected {_brief(wanted)}, got {_brief(got)}",
                         where + ("locks",))


def _brief(locks: list) -> str:
    if not locks:
        return "no lock"
    return "; ".join(f"{c['quote']!r} [{c['start']}:{c['end']}] -> {c['normalized_value']!r} "
                     + ("valid" if c["valid"] else f"invalid ({c['invalid_reason']})") for c in locks)


def compile_lock_patterns(data: dict, ctx) -> LockTable | None:
    faults: list[Fault] = ctx.faults
    before = len(faults)
    reasons = dict(data["invalid_reasons"])
    timeout = data["timeout_ms"] / 1000
    patterns = []
    seen: set = set()
    for index, raw in enumerate(data["patterns"]):
        where = ("patterns", index)
        if raw["id"] in seen:
            faults.append(Fault("duplicate-pattern-id", f"pattern id '{raw['id']}' is used twice",
                                where + ("id",)))
        seen.add(raw["id"])
        pattern = _compile_pattern(data["id"], raw, where, reasons, timeout, faults)
        if pattern is not None:
            patterns.append(pattern)
    if any(f.severity == "error" for f in faults[before:]):
        return None
    return LockTable("lock_patterns", data["id"], ctx.source.file, data["timeout_ms"], reasons,
                     tuple(patterns))


def _compile_pattern(table_id: str, raw: dict, where: tuple, reasons: dict, timeout: float,
                     faults: list[Fault]) -> LockPattern | None:
    before = len(faults)
    try:
        compiled = regex.compile(raw["regex"])
    except regex.error as exc:
        faults.append(Fault("bad-regex", f"regular expression does not compile: {exc}", where + ("regex",)))
        compiled = None
    if compiled is not None and compiled.search("") is not None:
        faults.append(Fault("regex-matches-empty", "the regex matches the empty string", where + ("regex",),
                            "a lock needs at least one character: use + instead of *"))
    lead = raw.get("start_group")
    if compiled is not None and lead is not None and lead not in compiled.groupindex:
        faults.append(Fault("unknown-group", f"start_group '{lead}' is not a named group of the regex",
                            where + ("start_group",), did_you_mean(lead, compiled.groupindex)
                            or "name it in the regex: (?P<" + lead + ">...)"))
    normalize = compile_normalizers(raw["normalize"], where + ("normalize",), faults)
    checks = compile_checks(raw["validate"], where + ("validate",), faults, reasons, timeout)
    for n, ex in enumerate(raw.get("examples", ())):
        for i, want in enumerate(ex["locks"]):
            reason = want.get("invalid_reason")
            at = where + ("examples", n, "locks", i, "invalid_reason")
            if reason is not None and reason not in reasons:
                faults.append(Fault("unknown-invalid-reason", f"reason '{reason}' is not in invalid_reasons",
                                    at, did_you_mean(reason, reasons)))
    if len(faults) != before:
        return None
    return LockPattern(f"{table_id}.{raw['id']}", raw["kind"], compiled, tuple(raw.get("prefilter", ())),
                       lead,
                       frozenset(raw["counts_in"]["roles"]), frozenset(raw["counts_in"]["states"]),
                       normalize, checks, timeout, tuple(raw.get("examples", ())), where)
