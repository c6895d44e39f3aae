"""Compiling a `lock_patterns` table: sets, regexes, step lists, context rules and examples,
checked at load time.

A bad regex, an unknown step, check, set or fact, an undeclared invalid_reason: each is a Fault
located at its key, so the loader reports file:line:col and nothing half-compiled is ever
scanned with.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterator

import regex

from ..core.errors import Fault, GroundrulesError, did_you_mean
from ..core.examples import ExampleResult
from . import cost
from .charsets import as_class, expand, members, namespace
from .cost import clockless_chars
from .rules import NO_RULES, Raw, Row, Rules, compile_rows, row_fires, rules_for
from .scan import raw_scan, scan
from .steps import FOLDS, Fold, compile_checks, compile_normalizers

if TYPE_CHECKING:
    from ..core.tables import CompileContext

DEFAULT_ROLE, DEFAULT_STATE = "user", "sent"   # an example's message, unless it says otherwise
DEFAULT_CONTEXT_CHARS = 16


@dataclass(frozen=True, slots=True)
class LockPattern:
    id: str                  # "<table id>.<pattern id>": unique in a rulebook because table ids are
    kind: str
    regex: regex.Pattern
    prefilter: tuple         # the message must contain one of these, or () for "always scan"
    gate: tuple              # (key, run, count, run test, counted characters) the message must pass, or ()
    groups: tuple            # (number of start_group, of value_group, ((name, number), ...)); 0: none.
                             # The lock starts where start_group (in a lookbehind) starts, else at the
                             # match; the normalized value is value_group's text, else the whole quote
    roles: frozenset
    states: frozenset
    normalize: tuple         # str -> str steps, in order
    checks: tuple            # steps.Check, in order; the first failing one names invalid_reason
    timeout: float           # seconds, per scan of one message
    clockless: int           # the longest text scanned without the regex clock: the bound fits the budget
    fold: tuple              # (name, steps.Fold) the regex reads the message through, or ()
    examples: tuple
    where: tuple             # key path of the pattern inside its table
    rules: Rules = NO_RULES  # the table's context rows that apply to this pattern
    counts: frozenset = frozenset()   # "<role> <state>" for every role and state it counts in
    opening: tuple = ()      # ((first character, search), ...): every match opens with one of them


@dataclass(frozen=True)
class LockTable:
    kind: str
    id: str
    file: str
    timeout_ms: int
    invalid_reasons: dict
    patterns: tuple
    rows: tuple = ()         # rules.Row: drop rows, then attempt rows, in table order

    @property
    def pattern_ids(self) -> frozenset:
        return frozenset(p.id for p in self.patterns)

    def check_examples(self) -> Iterator[ExampleResult]:
        """Each example: exactly the listed locks of its pattern (of the whole table, for a rule's
        example) after this table's rules, in (start, end, pattern) order. A pattern needs a positive and a
        negative example; a rule needs an example where it holds and one where it does not."""
        for p in self.patterns:
            local = p.id[len(self.id) + 1:]
            if not any(ex["locks"] for ex in p.examples):
                yield ExampleResult(f"{self.id}:{local}", False, "pattern has no positive example",
                                    p.where + ("id",))
            if not any(not ex["locks"] for ex in p.examples):
                yield ExampleResult(f"{self.id}:{local}", False, "pattern has no negative example "
                                    "(text with locks: [])", p.where + ("id",))
            for n, ex in enumerate(p.examples, 1):
                yield self._check_example(ex, frozenset([p.id]), f"{self.id}:{local}:{n}",
                                          p.where + ("examples", n - 1))
        for row in self.rows:
            yield from self._check_row(row)

    def _check_row(self, row: Row) -> Iterator[ExampleResult]:
        test_id = f"{self.id}:{row.section}.{row.id}"
        holds = fails = False
        for n, ex in enumerate(row.examples, 1):
            yield self._check_example(ex, self.pattern_ids, f"{test_id}:{n}", row.where + ("examples", n - 1))
            raws = self._raws(ex)
            if raws is not None:
                h, f = row_fires(row, raws, ex["text"])
                holds, fails = holds or h, fails or f
        if not holds:
            yield ExampleResult(test_id, False, "no example has a candidate on which the rule holds",
                                row.where + ("id",))
        if not fails:
            yield ExampleResult(test_id, False, "no example has a candidate on which the rule does not hold",
                                row.where + ("id",))

    def _raws(self, ex: dict) -> list[Raw] | None:
        """Every raw candidate of this table on the example's text, plus its `given` ones."""
        role, state, text = ex.get("role", DEFAULT_ROLE), ex.get("state", DEFAULT_STATE), ex["text"]
        given = _given(ex)
        if given is None:
            return None
        try:
            return list(given) + raw_scan(self.patterns, "example", role, state, text)
        except TimeoutError:
            return None

    def _check_example(self, ex: dict, pattern_ids: frozenset, test_id: str, where: tuple) -> ExampleResult:
        text = ex["text"]
        for i, want in enumerate(ex["locks"]):
            if text[want["start"]:want["end"]] != want["quote"]:
                return ExampleResult(test_id, False, f"expected lock {i + 1}: quote {want['quote']!r} is not "
                                     f"text[{want['start']}:{want['end']}]", where + ("locks", i))
        given = _given(ex)
        if given is None:
            return ExampleResult(test_id, False, "a given quote does not occur in the text", where + ("given",))
        try:
            found = scan(self.patterns, "example", ex.get("role", DEFAULT_ROLE), ex.get("state", DEFAULT_STATE),
                       text, tuple(given))
        except GroundrulesError as exc:          # LOCK_TIMEOUT: a failed example, reported as such
            return ExampleResult(test_id, False, f"scan failed: {exc.code}", where)
        got = [{"quote": c["quote"], "start": c["locator"]["start"], "end": c["locator"]["end"],
                "normalized_value": c["normalized_value"], "valid": c["valid"],
                "invalid_reason": c["invalid_reason"]} for c in found if c["pattern"] in pattern_ids]
        wanted = [dict(w, invalid_reason=w.get("invalid_reason")) for w in ex["locks"]]
        if got == wanted:
            return ExampleResult(test_id, True, "", where)
        return ExampleResult(test_id, False, f"expected {_brief(wanted)}, got {_brief(got)}",
                             where + ("locks",))

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


def _given(ex: dict) -> list[Raw] | None:
    """An example's assumed candidates of other tables, at the first occurrence of each quote."""
    out = []
    for g in ex.get("given", ()):
        start = ex["text"].find(g["quote"])
        if start < 0:
            return None
        out.append(Raw(g["kind"], g.get("pattern", "given"), start, start + len(g["quote"]), g.get("valid", True), {}))
    return out


def _brief(locks: list) -> str:
    if not locks:
        return "no lock"
    return "; ".join(f"{c['quote']!r} [{c['start']}:{c['end']}] -> {c['normalized_value']!r} "
                     + ("valid" if c["valid"] else f"invalid ({c['invalid_reason']})") for c in locks)


def compile_lock_patterns(data: dict, ctx: CompileContext) -> LockTable | None:
    faults: list[Fault] = ctx.faults
    before = len(faults)
    reasons = dict(data["invalid_reasons"])
    names = namespace(data, faults)
    timeout = data["timeout_ms"] / 1000
    fold = _fold(data.get("fold", ()), faults)
    patterns = []
    seen: dict = {}
    for index, raw in enumerate(data["patterns"]):
        where = ("patterns", index)
        if raw["id"] in seen:
            faults.append(Fault("duplicate-pattern-id", f"pattern id '{raw['id']}' is used twice",
                                where + ("id",), also=("patterns", seen[raw["id"]], "id")))
        seen.setdefault(raw["id"], index)
        pattern = _compile_pattern(data["id"], raw, where, reasons, names, data.get("maps", {}), timeout, fold,
                                   faults)
        if pattern is not None:
            patterns.append(pattern)
    rows = compile_rows(data, [p["id"] for p in data["patterns"]], names, faults, ctx.table_budget_s)
    for section in ("drop", "attempt"):
        for index, row in enumerate(data.get(section, ())):
            _check_example_reasons(row.get("examples", ()), (section, index), reasons, faults)
    if any(f.severity == "error" for f in faults[before:]):
        return None
    context_chars = data.get("context_chars", DEFAULT_CONTEXT_CHARS)
    patterns = [replace(p, rules=rules_for(p.id, rows, context_chars, ctx.table_budget_s),
                        counts=frozenset(f"{r} {st}" for r in p.roles for st in p.states)) for p in patterns]
    return LockTable("lock_patterns", data["id"], ctx.source.file, data["timeout_ms"], reasons,
                     tuple(patterns), rows["drop"] + rows["attempt"])


def _expand_args(steps: list, key: str, names: dict, where: tuple, faults: list[Fault], literal: bool) -> list:
    """Steps with `{name}` expanded in every `key` argument (also inside any_of branches)."""
    def walk(node, at):
        if isinstance(node, dict):
            out = {}
            for k, v in node.items():
                if k == key and isinstance(v, str):
                    expanded = expand(v, names, at + (k,), faults, literal)
                    out[k] = v if expanded is None else expanded
                else:
                    out[k] = walk(v, at + (k,))
            return out
        if isinstance(node, list):
            return [walk(item, at + (i,)) for i, item in enumerate(node)]
        return node
    return walk(steps, where)


def _named_maps(steps: list, maps: dict, where: tuple, faults: list[Fault]) -> list:
    """Steps with a `map: <name>` argument given the table's map of that name."""
    out = []
    for i, node in enumerate(steps):
        name = node.get("map") if isinstance(node, dict) else None
        if isinstance(name, str):
            if name not in maps:
                faults.append(Fault("unknown-map", f"'{name}' is no map of this table", where + (i, "map"),
                                    did_you_mean(name, maps) or "define it under maps: {" + name + ": {...}}"))
            else:
                node = dict(node, map=maps[name])
        out.append(node)
    return out


def _check_example_reasons(examples, where: tuple, reasons: dict, faults: list[Fault]) -> None:
    for n, ex in enumerate(examples):
        for i, want in enumerate(ex["locks"]):
            reason = want.get("invalid_reason")
            at = where + ("examples", n, "locks", i, "invalid_reason")
            if reason is not None and reason not in reasons:
                faults.append(Fault("unknown-invalid-reason", f"reason '{reason}' is not in invalid_reasons",
                                    at, did_you_mean(reason, reasons)))


def _prefilter(items: list, names: dict, where: tuple, faults: list[Fault]) -> tuple:
    """The prefilter's words: an item that is just `{name}` stands for every word of a word list
    (or every character of a set or map), so a pattern kept only beside a label is skipped for a
    message holding none of the labels its rules read; any other item is literal."""
    return tuple(dict.fromkeys(members(items, names, where, faults)))


def _gate(spec: dict | None, names: dict, where: tuple, faults: list[Fault], fold: tuple, source: str | None) -> tuple:
    """prefilter_chars {chars, run?, count?} -> (key, run, count, run test, counted): the message
    holds `run` consecutive characters of the set, and at least `count` of them in all. It is
    tested on the RAW content, so a message that fails it is never folded: `counted` is the set
    widened by every character the table's fold maps into it (gates.py counts them). `count` is
    the table's, or more when every match of the regex reads more of the set (cost.least: the
    Chinese-numeral reading needs ten numerals, though its table asks only for a run of three), so
    a message that could give no candidate is not scanned. The run test is an anchored possessive
    walk the engine writes itself, linear, so it runs without a timeout, in the standard library's
    `re`, which walks a class about twice as fast as `regex`; it is asked only when the count
    passes. The key (the set) lets the patterns of every table share one census."""
    if spec is None:
        return ()
    if "run" not in spec and "count" not in spec:
        faults.append(Fault("missing-step-argument", "prefilter_chars needs 'run' and/or 'count'", where,
                            "add run: N (N characters in a row) or count: N (N in the whole message)"))
        return ()
    chars = expand(spec["chars"], names, where + ("chars",), faults, literal=True)
    if chars is None:
        return ()
    least = cost.least(source, chars) if source is not None else 0
    if fold:
        chars = _unfolded(chars, fold)
        if not chars:
            faults.append(Fault("gate-never-passes", "the table's fold maps every character of prefilter_chars "
                                "to another one, so no message would pass and the pattern would never run",
                                where + ("chars",), "name the characters the fold maps them to"))
            return ()
    cls = as_class(chars)
    run, count = spec.get("run", 0), max(spec.get("count", 0), least)
    other = "[^" + cls[1:]
    # a run of `run`: skip the shorter runs whole (possessive, so a failing pass costs one walk)
    shorter = f"(?:{cls}{{1,{run - 1}}}+{other}++)*+" if run > 1 else ""
    run_test = re.compile(rf"\A{other}*+{shorter}{cls}{{{run}}}").match if run else None
    return (cls, run, count, run_test, "".join(dict.fromkeys(chars)))


def _unfolded(chars, fold: tuple) -> str:
    """The raw characters that read as one of `chars` through the fold."""
    table = fold[1].table
    return "".join(c for c in chars if ord(c) not in table) + "".join(
        chr(raw) for raw, folded in table.items() if (folded if isinstance(folded, str) else chr(folded)) in chars)


OPENING_LEADS = 4     # an opening is looked for only when so few characters can start it


def _opening(source: str | None, fold: tuple) -> tuple:
    """((first character, search), ...) for the fixed opening every match of the regex reads
    (cost.head: the Chinese-numeral reading starts with 一 or 幺 and two more numerals), searched
    in the RAW message (each set widened through the fold) with the standard library's `re`, which
    finds a literal first character fast: a message with none of them cannot give a candidate.
    () when the opening is one character long (the words already look for it) or may start with
    many."""
    sets = [_unfolded(s, fold) if fold else "".join(s) for s in (cost.head(source) if source else ())]
    if len(sets) < 2 or len(sets[0]) > OPENING_LEADS:
        return ()
    rest = "".join(as_class(s) for s in sets[1:])
    return tuple((c, re.compile(re.escape(c) + rest).search) for c in sorted(sets[0]))


def _fold(names: list, faults: list[Fault]) -> tuple:
    """A table's folds, composed in order into one; unknown names are faults."""
    folds = []
    for i, name in enumerate(names):
        if name not in FOLDS:
            faults.append(Fault("unknown-fold", f"unknown fold '{name}'", ("fold", i),
                                did_you_mean(name, FOLDS) or "folds: " + ", ".join(FOLDS)))
        else:
            folds.append(FOLDS[name])
    if not folds:
        return ()
    if len(folds) == 1:
        return (names[0], folds[0])
    chars = "".join(f.chars for f in folds)
    table: dict = {}
    for f in folds:
        table.update(f.table)
    return ("+".join(names), Fold(chars, table))


def _compile_pattern(table_id: str, raw: dict, where: tuple, reasons: dict, names: dict, maps: dict,
                     timeout: float, fold: tuple, faults: list[Fault]) -> LockPattern | None:
    before = len(faults)
    source = expand(raw["regex"], names, where + ("regex",), faults)
    compiled = None
    if source is not None:
        try:
            compiled = regex.compile(source)
        except regex.error as exc:
            faults.append(Fault("bad-regex", f"regular expression does not compile: {exc}", where + ("regex",)))
    if compiled is not None and compiled.search("") is not None:
        faults.append(Fault("regex-matches-empty", "the regex matches the empty string", where + ("regex",),
                            "a lock needs at least one character: use + instead of *"))
    for key in ("start_group", "value_group"):
        group = raw.get(key)
        if compiled is not None and group is not None and group not in compiled.groupindex:
            faults.append(Fault("unknown-group", f"{key} '{group}' is not a named group of the regex",
                                where + (key,), did_you_mean(group, compiled.groupindex)
                                or "name it in the regex: (?P<" + group + ">...)"))
    prefilter = _prefilter(raw.get("prefilter", ()), names, where + ("prefilter",), faults)
    gate = _gate(raw.get("prefilter_chars"), names, where + ("prefilter_chars",), faults, fold, source)
    steps = _expand_args(raw["normalize"], "chars", names, where + ("normalize",), faults, True)
    normalize = compile_normalizers(_named_maps(steps, maps, where + ("normalize",), faults),
                                    where + ("normalize",), faults)
    validate = _expand_args(raw["validate"], "in", names, where + ("validate",), faults, True)
    checks = compile_checks(_expand_args(validate, "regex", names, where + ("validate",), faults, False),
                            where + ("validate",), faults, reasons, timeout)
    _check_example_reasons(raw.get("examples", ()), where, reasons, faults)
    if source is None or normalize is None or checks is None or len(faults) != before:
        return None                   # (each None above only ever comes with a fault)
    return LockPattern(f"{table_id}.{raw['id']}", raw["kind"], compiled, prefilter, gate,
                       _group_numbers(compiled, raw.get("start_group"), raw.get("value_group")),
                       frozenset(raw["counts_in"]["roles"]), frozenset(raw["counts_in"]["states"]),
                       normalize, checks, timeout, clockless_chars(source, timeout), fold,
                       tuple(raw.get("examples", ())), where, opening=_opening(source, fold) if gate else ())


def _group_numbers(compiled: regex.Pattern, start_group: str | None, value_group: str | None) -> tuple:
    """The groups the scan reads of each match, by number (by name costs ten times more), worked
    out once here, not per scan."""
    index = compiled.groupindex
    return (index[start_group] if start_group is not None else 0,
            index[value_group] if value_group is not None else 0, tuple(index.items()))
