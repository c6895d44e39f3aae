"""The closed sets of normalisation steps and structural checks a lock table may name.

Behaviour as data: a table lists steps by name with their arguments; NORMALIZERS and VALIDATORS
are the one dispatch table each. A step's arguments are checked when the table compiles, so a
typo is a load error at file:line, never a surprise at scan time. Steps read only the text they
are given: no clock, locale or environment.
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any, Callable

import regex

from ..core import cpu_clock
from ..core.errors import Fault, did_you_mean
from .charsets import as_class
from .cost import clockless_match

FULLWIDTH_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")
# U+FF01..U+FF5E are the full-width forms of ASCII '!'..'~'; U+3000 is the ideographic space.
FULLWIDTH_ASCII = {**{cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)}, 0x3000: 0x20}
LABEL_EDGE = " \t\u3000:："   # what may sit around a field label: blanks and colons

# argument kind -> (accepts(value), words for the message)
ARG_KINDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "text": (lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "index": (lambda v: type(v) is int and v >= 0, "an integer ≥ 0"),
    "texts": (lambda v: isinstance(v, list) and bool(v) and all(isinstance(x, str) and x for x in v),
              "a non-empty list of non-empty strings"),
    "regex": (lambda v: isinstance(v, str) and v != "", "a regular expression"),
    "checks": (lambda v: isinstance(v, list) and bool(v) and all(isinstance(x, list) and x for x in v),
               "a non-empty list of non-empty check lists"),
    "charmap": (lambda v: isinstance(v, dict) and bool(v)
                and all(isinstance(k, str) and len(k) == 1 and isinstance(x, str) for k, x in v.items()),
                "the name of one of the table's maps (or a mapping of single characters to strings)"),
}


@dataclass(frozen=True)
class StepKind:
    """One named step: its required and optional arguments, and how to build it from them."""

    required: tuple
    optional: tuple
    build: Callable[[dict, float], Callable]   # (arguments, regex timeout in s)


# ---- normalisers: str -> str -------------------------------------------------------------

def _delete_chars(args: dict, timeout: float) -> Callable[[str], str]:
    """str.translate costs microseconds even on a short value; an ASCII value (most of them) only
    needs the set's ASCII characters removed, which str.replace does far faster."""
    table = str.maketrans("", "", args["chars"])
    ascii_chars = tuple(c for c in dict.fromkeys(args["chars"]) if c.isascii())

    def delete(s: str) -> str:
        if not s.isascii():
            return s.translate(table)
        for c in ascii_chars:
            if c in s:
                s = s.replace(c, "")
        return s
    return delete


def _translate_non_ascii(table: dict) -> Callable[[str], str]:
    """A map of non-ASCII characters: an ASCII value is returned as it is, without a translate."""
    return lambda s: s if s.isascii() else s.translate(table)


def _map_chars(args: dict, timeout: float) -> Callable[[str], str]:
    """Each character the map names becomes its string (the table's Chinese numerals their digits)."""
    table = str.maketrans(args["map"])
    if all(not c.isascii() for c in args["map"]):
        return _translate_non_ascii(table)
    return lambda s: s.translate(table)


def _strip_labels(args: dict, timeout: float) -> Callable[[str], str]:
    """Drop ONE leading label (longest first, ASCII case-insensitive) and the blanks/colons around it."""
    labels = sorted(args["labels"], key=lambda x: (-len(x), x))
    folded = [(label.casefold(), len(label)) for label in labels]

    def strip(s: str) -> str:
        rest = s.lstrip(LABEL_EDGE)
        head = rest.casefold()
        for label, size in folded:
            if head.startswith(label):
                return rest[size:].lstrip(LABEL_EDGE)
        return rest
    return strip


# name -> StepKind(required args, optional args, builder). Behaviour as data: one dispatch table.
NORMALIZERS: dict[str, StepKind] = {
    "delete_chars": StepKind(("chars",), (), _delete_chars),        # delete every character in `chars`
    "fullwidth_digits": StepKind((), (), lambda a, t: _translate_non_ascii(FULLWIDTH_DIGITS)),
    "fullwidth_ascii": StepKind((), (), lambda a, t: _translate_non_ascii(FULLWIDTH_ASCII)),
    "strip_labels": StepKind(("labels",), (), _strip_labels),       # drop one leading label of `labels`
    "map_chars": StepKind(("map",), (), _map_chars),                # each character of `map` to its string
    "lowercase": StepKind((), (), lambda a, t: str.lower),
    "uppercase": StepKind((), (), lambda a, t: str.upper),
}
NORMALIZER_ARGS = {"chars": "text", "labels": "texts", "map": "charmap"}


# ---- folds: what a table's regexes read instead of the raw text ---------------------------------

@dataclass(frozen=True)
class Fold:
    """A one-character-for-one-character map, so offsets into the folded text are offsets into the
    raw text. Applied only to a message holding one of `chars` (one `in` per character), since
    translating every message would cost more than all the scans."""

    chars: str
    table: dict
    _runs: Any = field(init=False, repr=False, compare=False)         # a `regex` pattern
    _each: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _wide: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_runs", regex.compile(as_class(self.chars) + "+"))
        object.__setattr__(self, "_each", tuple(dict.fromkeys(self.chars)))
        object.__setattr__(self, "_wide", not any(c.isascii() for c in self.chars))

    def __call__(self, text: str) -> str:
        if self._wide and text.isascii():
            return text
        for c in self._each:          # `in` finds one character many times faster than a regex
            if c in text:
                break
        else:
            return text
        # only the runs are translated: str.translate over a whole long text costs ~15 MB/s
        return self._runs.sub(lambda m: m.group().translate(self.table), text)


# name -> Fold. A table lists folds by name; regexes then need only the folded characters, which
# keeps their first character a literal the scanner finds fast.
FOLDS: dict[str, Fold] = {
    "fullwidth_digits": Fold("０１２３４５６７８９", FULLWIDTH_DIGITS),
    "fullwidth_at": Fold("＠", {0xFF20: 0x40}),                   # ＠ -> @
}


# ---- validators: str -> bool ----------------------------------------------------------------

def _length(args: dict, timeout: float) -> Callable[[str], bool]:
    lo = args.get("equals", args.get("min", 0))
    hi = args.get("equals", args.get("max", 1 << 62))
    return lambda s: lo <= len(s) <= hi


def _char_at(args: dict, timeout: float) -> Callable[[str], bool]:
    index, allowed = args["index"], frozenset(args["in"])
    return lambda s: len(s) > index and s[index] in allowed


def _prefix_in(args: dict, timeout: float) -> Callable[[str], bool]:
    prefixes = tuple(args["values"])
    return lambda s: s.startswith(prefixes)


def _matches(args: dict, timeout: float) -> Callable[[str], bool]:
    """A whole-value match, within the budget; without the clock when the pattern's bound fits it
    whatever the value (cost.py: one anchored attempt of a bounded pattern)."""
    pattern = regex.compile(args["regex"])
    if clockless_match(args["regex"], timeout):
        return lambda s: pattern.fullmatch(s) is not None
    return lambda s: cpu_clock.fullmatch(pattern, s, timeout) is not None


def _date(args: dict, timeout: float) -> Callable[[str], bool]:
    """A real Gregorian date YYYYMMDD at `start`, its year in [min_year, max_year]."""
    start = args["start"]
    lo, hi = args.get("min_year", 1), args.get("max_year", 9999)

    def ok(s: str) -> bool:
        part = s[start:start + 8]
        if len(part) != 8 or not (part.isascii() and part.isdigit()):
            return False
        year, month, day = int(part[:4]), int(part[4:6]), int(part[6:])
        if not lo <= year <= hi:
            return False
        try:
            datetime.date(year, month, day)
        except ValueError:
            return False
        return True
    return ok


GB11643_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
GB11643_CHECK = "10X98765432"


def _gb11643(args: dict, timeout: float) -> Callable[[str], bool]:
    """GB 11643-1999 ISO 7064 MOD 11-2: the 18th character is the check of the first 17 digits."""
    def ok(s: str) -> bool:
        if len(s) != 18 or not (s[:17].isascii() and s[:17].isdigit()):
            return False
        total = sum(int(c) * w for c, w in zip(s, GB11643_WEIGHTS))
        return s[17] == GB11643_CHECK[total % 11]
    return ok


def _luhn(args: dict, timeout: float) -> Callable[[str], bool]:
    """ISO/IEC 7812 (Luhn) mod-10: the last digit checks the others, as every payment card's does."""
    def ok(s: str) -> bool:
        if not s or not (s.isascii() and s.isdigit()):
            return False
        total = 0
        for i, c in enumerate(reversed(s)):
            d = ord(c) - 48
            if i % 2:
                d = d * 2 - 9 if d > 4 else d * 2
            total += d
        return total % 10 == 0
    return ok


EMAIL_LOCAL = regex.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")
EMAIL_LABEL = regex.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def _email_shape(args: dict, timeout: float) -> Callable[[str], bool]:
    """local@domain: dot-atom local part ≤ 64, ≥ 2 domain labels of ≤ 63, alphabetic TLD ≥ 2, ≤ 254."""
    def ok(s: str) -> bool:
        local, at, domain = s.rpartition("@")
        if not at or len(s) > 254 or not 0 < len(local) <= 64:
            return False
        if EMAIL_LOCAL.fullmatch(local) is None:
            return False
        labels = domain.split(".")
        if len(labels) < 2 or not all(EMAIL_LABEL.fullmatch(x) for x in labels):
            return False
        tld = labels[-1]
        return len(tld) >= 2 and tld.isascii() and tld.isalpha()
    return ok


VALIDATORS: dict[str, StepKind] = {
    "length": StepKind((), ("equals", "min", "max"), _length),     # len == equals, or min <= len <= max
    "digits_only": StepKind((), (), lambda a, t: (lambda s: s != "" and s.isascii() and s.isdigit())),
    "char_at": StepKind(("index", "in"), (), _char_at),            # value[index] is one of `in`
    "prefix_in": StepKind(("values",), (), _prefix_in),            # starts with one of `values`
    "matches": StepKind(("regex",), (), _matches),                 # the whole value matches `regex`
    "date": StepKind(("start",), ("min_year", "max_year"), _date),  # real YYYYMMDD at `start`
    "gb11643_check_digit": StepKind((), (), _gb11643),             # resident ID MOD 11-2 check character
    "email_shape": StepKind((), (), _email_shape),                 # local@domain.tld
    "luhn": StepKind((), (), _luhn),                               # payment card mod-10 check digit
    "any_of": StepKind(("of",), (), lambda a, t: a["of"]),         # one of the check lists `of` passes
}
VALIDATOR_ARGS = {"equals": "index", "min": "index", "max": "index", "index": "index", "in": "text",
                  "values": "texts", "regex": "regex", "start": "index", "min_year": "index",
                  "max_year": "index", "of": "checks"}


# ---- compiling steps from table data ----------------------------------------------------------

@dataclass(frozen=True)
class Check:
    name: str
    reason: str
    test: Callable[[str], bool]


def _any_of(branches: tuple[tuple[Callable[[str], bool], ...], ...]) -> Callable[[str], bool]:
    """A test that holds when every test of some branch holds."""
    return lambda s: any(all(t(s) for t in b) for b in branches)


def compile_normalizers(steps: list, where: tuple, faults: list[Fault]) -> tuple | None:
    out = []
    for i, node in enumerate(steps):
        fn = _compile_step(node, where + (i,), faults, "step", NORMALIZERS, NORMALIZER_ARGS, 0.0)
        if fn is not None:
            out.append(fn)
    return tuple(out) if len(out) == len(steps) else None


def compile_checks(checks: list, where: tuple, faults: list[Fault], reasons: dict, timeout: float,
                   need_reason: bool = True) -> tuple | None:
    """Each check -> Check(name, reason, test); an undeclared reason is a fault."""
    out = []
    for i, node in enumerate(checks):
        at = where + (i,)
        if not isinstance(node, dict):
            faults.append(Fault("bad-step", "a check must be a mapping {check: <name>, reason: ...}", at))
            continue
        reason = node.get("reason")
        if need_reason and not isinstance(reason, str):
            faults.append(Fault("missing-key", "a check needs 'reason': the invalid_reason it gives",
                                at, "add 'reason: <code from invalid_reasons>'"))
            continue
        if need_reason and reason not in reasons:
            faults.append(Fault("unknown-invalid-reason", f"reason '{reason}' is not in invalid_reasons",
                                at + ("reason",), did_you_mean(reason, reasons)
                                or "declare it under invalid_reasons with what it means"))
            continue
        args = {k: v for k, v in node.items() if k != "reason"} if need_reason else node
        test = _compile_step(args, at, faults, "check", VALIDATORS, VALIDATOR_ARGS, timeout)
        if test is None:
            continue
        if node.get("check") == "any_of":
            branches: list[tuple[Callable[[str], bool], ...]] = []
            for b, branch in enumerate(node["of"]):     # any_of's step returns its `of`, checked above
                compiled = compile_checks(branch, at + ("of", b), faults, reasons, timeout, need_reason=False)
                if compiled is None:
                    break
                branches.append(tuple(c.test for c in compiled))
            else:
                frozen = tuple(branches)
                out.append(Check("any_of", reason or "", _any_of(frozen)))
            continue
        out.append(Check(node["check"], reason or "", test))
    return tuple(out) if len(out) == len(checks) else None


def _compile_step(node: Any, where: tuple, faults: list[Fault], key: str, kinds: dict,
                  arg_kinds: dict, timeout: float) -> Callable | None:
    if not isinstance(node, dict) or not isinstance(node.get(key), str):
        faults.append(Fault("bad-step", f"a step must be a mapping naming its '{key}'", where,
                            f"write e.g. {{{key}: {next(iter(kinds))}}}"))
        return None
    name = node[key]
    spec = kinds.get(name)
    if spec is None:
        code = "unknown-normalizer" if key == "step" else "unknown-validator"
        faults.append(Fault(code, f"unknown {'normalisation step' if key == 'step' else 'check'} '{name}'",
                            where + (key,), did_you_mean(name, kinds) or "one of: " + ", ".join(kinds)))
        return None
    args = {k: v for k, v in node.items() if k != key}
    ok = True
    for arg in spec.required:
        if arg not in args:
            faults.append(Fault("missing-step-argument", f"'{name}' needs '{arg}'", where,
                                f"add '{arg}:' ({ARG_KINDS[arg_kinds[arg]][1]})"))
            ok = False
    for arg, value in args.items():
        takes = spec.required + spec.optional
        if arg not in takes:
            faults.append(Fault("unknown-step-argument", f"'{name}' takes no argument '{arg}'",
                                where + (arg,), did_you_mean(arg, takes)
                                or f"'{name}' takes: " + (", ".join(takes) or "nothing")))
            ok = False
            continue
        accepts, words = ARG_KINDS[arg_kinds[arg]]
        if not accepts(value):
            faults.append(Fault("bad-step-argument", f"'{name}' argument '{arg}' must be {words}",
                                where + (arg,)))
            ok = False
        elif arg_kinds[arg] == "regex":
            try:
                regex.compile(value)
            except regex.error as exc:
                faults.append(Fault("bad-regex", f"regular expression does not compile: {exc}", where + (arg,)))
                ok = False
    if name == "length" and ok and not ({"equals", "min", "max"} & set(args)):
        faults.append(Fault("missing-step-argument", "'length' needs 'equals', or 'min' and/or 'max'", where))
        ok = False
    return spec.build(args, timeout) if ok else None
