"""Context rules of a lock table: which raw candidates become locks.

A pattern's regex finds candidates; a careful reader then looks around them. The table says how,
in two lists of rows written in the shared condition grammar over a candidate's FACTS:
- `drop`: a candidate for which a row holds is no lock (a phone reading inside a bank card, a
  code glued to letters, an invalid reading right after an order number's label);
- `attempt`: an invalid candidate is recorded only when a row holds, i.e. when it looks like an
  attempt at this kind (a phone label nearby, a country code, a phone's grouping). A table with
  no attempt rows records every invalid candidate, as docs/spec/locks.md promises.

Rows read the RAW candidates of every pattern of every lock table (`inside`, `overlaps`), before
any row has dropped anything: a card-shaped run that is itself not recorded still shields the
phone reading inside it. Nothing here is iterative, so the outcome never depends on row order
across tables.
"""
from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from ..core.condgen import Gen
from ..core.conditions import Condition, compile_condition, path_parts
from ..core.errors import Fault, did_you_mean
from .charsets import expand_tree
from .cost import clockless_chars

if TYPE_CHECKING:
    from ..results import Lock

# fact -> what it holds; a row reading anything else is a load error
FACTS = {
    "quote": "the candidate's raw text",
    "value": "its normalized value",
    "valid": "true when every check passed",
    "reason": "its invalid_reason (missing when valid)",
    "before": "up to context_chars characters of the message before the candidate",
    "after": "up to context_chars characters of the message after the candidate",
    "prev": "the one character right before the candidate (empty at the start), a test cheaper than a regex on before",
    "next": "the one character right after it (empty at the end)",
    "groups": "the regex's named groups that took part in the match, by name",
    "inside": "every other raw candidate whose span strictly contains this one: [{kind, pattern, valid}]",
    "overlaps": "every other raw candidate whose span shares a character with this one: [{kind, pattern, valid}]",
}
NEIGHBOUR_FACTS = ("inside", "overlaps")
NEIGHBOUR_ITEM = ("kind", "pattern", "valid")
SECTIONS = ("drop", "attempt")


@dataclass(frozen=True)
class Row:
    id: str
    section: str              # drop | attempt
    patterns: frozenset       # full pattern ids (<table>.<pattern>) the row applies to
    when: Condition
    examples: tuple
    where: tuple


@dataclass(frozen=True, slots=True)
class Rules:
    """The rows one pattern obeys, in table order, compiled into one `verdict(facts) -> bool`
    (read per candidate, so no property is looked up there)."""

    verdict: Callable[..., bool] = bool   # no drop row holds, and an invalid candidate satisfies an attempt row
    context_chars: int = 0
    neighbours: bool = False  # a row reads inside / overlaps
    context: bool = False     # a row reads before / after / prev / next
    budget_s: float = 0.0     # a row's `matches` search may run this long (its table's CompileContext)


NO_RULES = Rules()


def compile_rows(data: dict, pattern_ids: list, names: dict, faults: list[Fault], budget_s: float) -> dict:
    """Both sections -> {section: (Row, ...)}; faults located at the row's keys; `budget_s` per
    `matches` search."""
    out: dict = {}
    seen: dict = {}
    for section in SECTIONS:
        rows = []
        for index, raw in enumerate(data.get(section, ())):
            where = (section, index)
            if raw["id"] in seen:
                faults.append(Fault("duplicate-rule-id", f"rule id '{raw['id']}' is used twice", where + ("id",),
                                    also=seen[raw["id"]] + ("id",)))
            seen.setdefault(raw["id"], where)
            row = _compile_row(data["id"], section, raw, where, pattern_ids, names, faults, budget_s)
            if row is not None:
                rows.append(row)
        out[section] = tuple(rows)
    return out


def _compile_row(data_id: str, section: str, raw: dict, where: tuple, pattern_ids: list, names: dict,
                 faults: list[Fault], budget_s: float) -> Row | None:
    before = len(faults)
    applies = raw.get("patterns", pattern_ids)
    for i, pid in enumerate(applies):
        if pid not in pattern_ids:
            faults.append(Fault("unknown-pattern", f"'{pid}' is no pattern of this table",
                                where + ("patterns", i), did_you_mean(pid, pattern_ids)))
    node = expand_tree(raw["when"], names, where + ("when",), faults)
    cond = compile_condition(node, where + ("when",), faults, budget_s=budget_s)
    if cond is not None:
        _check_fields(cond, faults)
    if cond is None or len(faults) != before:     # (no condition only ever comes with a fault)
        return None
    full = frozenset(f"{data_id}.{pid}" for pid in applies)
    return Row(raw["id"], section, full, cond, tuple(raw.get("examples", ())), where)


def _check_fields(cond: Condition, faults: list[Fault]) -> None:
    for path, at in cond.fields():
        head, _, rest = path.partition(".")
        head = head.removesuffix("[]")
        if head not in FACTS:
            faults.append(Fault("unknown-fact", f"a rule reads '{head}', which a candidate does not have", at,
                                did_you_mean(head, FACTS) or "facts: " + ", ".join(FACTS)))
        elif head in NEIGHBOUR_FACTS and rest:
            item = rest.partition(".")[0]
            if item not in NEIGHBOUR_ITEM:
                faults.append(Fault("unknown-fact", f"an item of '{head}' has no '{item}'", at,
                                    did_you_mean(item, NEIGHBOUR_ITEM) or "items hold: " + ", ".join(NEIGHBOUR_ITEM)))


def rules_for(pattern_id: str, rows: dict, context_chars: int, budget_s: float) -> Rules:
    drop = tuple(r for r in rows["drop"] if pattern_id in r.patterns)
    attempt = tuple(r for r in rows["attempt"] if pattern_id in r.patterns)
    if not drop and not attempt:
        return NO_RULES
    reads = {path.partition(".")[0].removesuffix("[]") for r in drop + attempt for path, _ in r.when.fields()}
    return Rules(_verdict(drop, attempt, context_chars, pattern_id), context_chars,
                 bool(reads & set(NEIGHBOUR_FACTS)), bool(reads & {"before", "after", "prev", "next"}), budget_s)


class _Verdict(Gen):
    """condgen's code, with one change: a `matches` on a fact whose length the table bounds (the
    context, `prev`, `next`) runs without the regex clock when cost.py proves that the pattern
    cannot outrun its budget (the table's, per search) on a text that long, as a scan does (the clock's system call
    and `regex`'s keyword parsing cost more than most of these searches)."""

    def __init__(self, widths: dict):
        super().__init__(share_reads=True)
        self.widths = widths

    def test(self, c: Condition, var: str) -> str:
        width = self.widths.get(c.field) if var == "v" and c.op == "matches" and not c.ref else None
        if width is None or clockless_chars(c.arg, c.budget_s) < width:
            return super().test(c, var)
        t = self.fresh()
        return (f"((({t} := {self.get(var, path_parts(c.field))}).__class__ is str) and "
                f"{self.const(c.pattern.search)}({t}) is not None)")


def _verdict(drop: tuple, attempt: tuple, context_chars: int, pattern_id: str) -> Callable[..., bool]:
    """`verdict(facts) -> bool`, generated: the drop rows in order (the first that holds drops the
    candidate), then, for an invalid candidate, the attempt rows (the first that holds keeps it);
    every fact read once. The same tests, in the same order, as each row's own `when`."""
    gen = _Verdict({"before": context_chars, "after": context_chars, "prev": 1, "next": 1})
    body = [f"    if {gen.expr(row.when, 'v')}:\n        return False\n" for row in drop]
    if attempt:
        body.append("    if v['valid']:\n        return True\n")
        body += [f"    if {gen.expr(row.when, 'v')}:\n        return True\n" for row in attempt]
        body.append("    return False\n")
    else:
        body.append("    return True\n")
    source = "def verdict(v, n=None):\n" + "".join(gen.reads + body)
    return gen.build_module(source, f"lock rules of {pattern_id}")["verdict"]


# ---- applying the rules to the raw candidates of one message --------------------------------

class ScanTimeout(TimeoutError):
    """A lock pattern's scan, check or rule ran out of time: its candidates' fate is unknown (LOCK_TIMEOUT;
    not core.bounded_patterns.PatternTimeout, a caller-supplied pattern's refusal)."""

    def __init__(self, pattern: str, seconds: float):
        super().__init__(pattern)
        self.pattern, self.seconds = pattern, seconds


@dataclass(slots=True)
class Raw:
    """One regex match before the rules: its lock (None for an example's `given` candidate)."""

    kind: str
    pattern: str
    start: int
    end: int
    valid: bool
    groups: dict
    rules: Rules = NO_RULES
    lock: Lock | None = None


def facts(raw: Raw, content: str, neighbours: "Neighbours | None") -> dict:
    """The facts the candidate's rules read (the others are left out, not computed)."""
    c, rules = raw.lock, raw.rules
    assert c is not None, "callers pass only candidates with a lock (a given candidate never is one)"
    out: dict[str, Any] = {"quote": c["quote"], "value": c["normalized_value"], "valid": c["valid"],
                           "groups": raw.groups}
    if rules.context:
        width, start, end = rules.context_chars, raw.start, raw.end
        out["before"] = content[max(0, start - width):start]
        out["after"] = content[end:end + width]
        out["prev"] = content[start - 1:start] if start else ""
        out["next"] = content[end:end + 1]
    if c["invalid_reason"] is not None:
        out["reason"] = c["invalid_reason"]
    if rules.neighbours and neighbours is not None:
        out["inside"], out["overlaps"] = neighbours.around(raw)
    return out


class Neighbours:
    """The raw candidates of one message by start, to find those around a given one."""

    def __init__(self, raws: list[Raw]):
        self.raws = raws
        if len(raws) > 1:                   # a lone candidate (most messages) has no neighbours
            self.raws = sorted(raws, key=_span)
            self.starts = [r.start for r in self.raws]
            self.longest = max(r.end - r.start for r in raws)

    def around(self, raw: Raw) -> tuple[list, list]:
        inside: list = []
        overlaps: list = []
        raws = self.raws
        if len(raws) < 2:
            return inside, overlaps
        for i in range(bisect_left(self.starts, raw.start - self.longest), len(raws)):
            other = raws[i]
            if other.start >= raw.end:
                break
            if other is raw or other.end <= raw.start:
                continue
            item = {"kind": other.kind, "pattern": other.pattern, "valid": other.valid}
            overlaps.append(item)
            if other.start <= raw.start and raw.end <= other.end and (other.start, other.end) != (raw.start, raw.end):
                inside.append(item)
        return inside, overlaps


def _span(raw: Raw) -> tuple[int, int]:
    return raw.start, raw.end


def resolve(raws: list[Raw], content: str) -> list[Lock]:
    """The locks of the raw candidates that the rules keep (given candidates never are locks)."""
    out: list[Lock] = []
    neighbours = None                       # made for the first candidate whose rules read them
    for r in raws:
        lock = r.lock
        if lock is None:
            continue
        rules = r.rules
        if rules is NO_RULES:
            out.append(lock)
            continue
        if rules.neighbours and neighbours is None:
            neighbours = Neighbours(raws)
        try:
            if rules.verdict(facts(r, content, neighbours)):
                out.append(lock)
        except TimeoutError:
            raise ScanTimeout(r.pattern, r.rules.budget_s) from None
    return out


def row_fires(row: Row, raws: list[Raw], content: str) -> tuple[bool, bool]:
    """(the row holds on some candidate of its patterns, fails on some) in one message: an
    example's evidence that the row is exercised both ways."""
    neighbours = Neighbours(raws)
    holds = fails = False
    for r in raws:
        if r.lock is None or r.pattern not in row.patterns:
            continue
        fact = facts(r, content, neighbours)
        if row.section == "attempt" and fact["valid"]:
            continue                  # attempt rows only ever read invalid candidates
        if row.when.test(fact):
            holds = True
        else:
            fails = True
    return holds, fails
