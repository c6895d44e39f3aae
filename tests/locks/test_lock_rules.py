"""Context rules (drop / attempt), named sets and value groups: what an analyst writes, what the
engine does with it, and the load-time problems a broken rule gives (file:line, stable code)."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from groundrules import GroundrulesError, RulesError, load_rulebook, lock
from groundrules.core.examples import run_all
from groundrules.locks.scan import raw_candidates

ROOT = Path(__file__).resolve().parents[2]

# Two tables: a code table, and a "ticket" table whose rules read the codes and their surroundings.
CODES = """\
kind: lock_patterns
id: codes
timeout_ms: 100
invalid_reasons:
  bad_sum: the digits do not sum to a multiple of 3
patterns:
  - id: code
    kind: code
    regex: 'C[0-9]{3}(?:-[0-9]{3})+'
    counts_in: {roles: [user], states: [sent]}
    normalize: [{step: delete_chars, chars: "C-"}]
    validate: [{check: matches, regex: '(?:[0369]|[147][0369]*[258]|[258][0369]*[147])*', reason: bad_sum}]
    examples:
      - text: "C123-456"
        locks: [{quote: "C123-456", start: 0, end: 8, normalized_value: "123456", valid: true}]
      - text: "none"
        locks: []
"""

TICKETS = """\
kind: lock_patterns
id: tickets
timeout_ms: 100
context_chars: 6
sets:
  sep: " -"
  d: "0123456789"
invalid_reasons:
  too_short: fewer than 6 digits
patterns:
  - id: ticket
    kind: ticket
    regex: '(?<!{d})(?:(?P<hash>#){sep}?)?(?P<number>{d}{3}(?:{sep}?{d}{3})?)(?!{d})'
    value_group: number
    counts_in: {roles: [user], states: [sent]}
    normalize: [{step: delete_chars, chars: "{sep}"}]
    validate: [{check: length, min: 6, reason: too_short}]
    examples:
      - text: "票 #123 456"
        locks: [{quote: "#123 456", start: 2, end: 10, normalized_value: "123456", valid: true}]
      - text: "x"
        locks: []
drop:
  - id: inside_a_code
    when: {field: inside, any: {field: kind, eq: code}}
    examples:
      - text: "C123-456"
        given: [{kind: code, quote: "C123-456"}]
        locks: []
      - text: "123 456"
        locks: [{quote: "123 456", start: 0, end: 7, normalized_value: "123456", valid: true}]
attempt:
  - id: hash
    when: {field: groups.hash, exists: true}
    examples:
      - text: "#123"
        locks: [{quote: "#123", start: 0, end: 4, normalized_value: "123", valid: false, invalid_reason: too_short}]
      - text: "123"
        locks: []
  - id: label
    when: {field: before, matches: '票号{sep}*$'}
    examples:
      - text: "票号 123"
        locks: [{quote: "123", start: 3, end: 6, normalized_value: "123", valid: false, invalid_reason: too_short}]
      - text: "房间 123"
        locks: []
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def book(tmp_path: Path, tickets: str = TICKETS, codes: str | None = CODES):
    files = [write(tmp_path, "tickets", tickets)] + ([write(tmp_path, "codes", codes)] if codes else [])
    return load_rulebook(ROOT, files=files)


def quotes(text: str, b) -> list[tuple]:
    return [(c["kind"], c["quote"], c["normalized_value"], c["valid"]) for c in lock(
        {"id": "m", "role": "user", "content": text}, b)]


def test_the_demo_tables_pass_their_examples(tmp_path):
    outcomes = run_all(book(tmp_path))
    assert outcomes and all(o.ok for o in outcomes), [o for o in outcomes if not o.ok]
    assert {o.id for o in outcomes} >= {"tickets:drop.inside_a_code:1", "tickets:attempt.hash:2",
                                        "tickets:attempt.label:1"}


def test_the_value_comes_from_value_group_and_the_quote_keeps_the_prefix(tmp_path):
    assert quotes("票 #123-456", book(tmp_path)) == [("ticket", "#123-456", "123456", True)]


def test_a_fold_lets_ascii_regexes_read_fullwidth_digits_but_quotes_and_values_stay_raw(tmp_path):
    folded = TICKETS.replace("context_chars: 6", "context_chars: 6\nfold: [fullwidth_digits]")
    assert quotes("票 #１２３ ４５６", book(tmp_path, codes=None)) == []
    [found] = lock({"id": "m", "role": "user", "content": "票 #１２３ ４５６"}, book(tmp_path, tickets=folded, codes=None))
    assert (found["quote"], found["locator"]["start"], found["locator"]["end"], found["normalized_value"]) == \
        ("#１２３ ４５６", 2, 10, "１２３４５６")


@pytest.mark.parametrize("gate, text, found", [
    ("{chars: \"{d}\", run: 6}", "#123456", True), ("{chars: \"{d}\", run: 6}", "#123 456", False),
    ("{chars: \"{d}\", count: 6}", "#123 456", True), ("{chars: \"{d}\", count: 6}", "#123 45", False),
    ("{chars: \"{d}\", run: 3, count: 6}", "#123 45", False), ("{chars: \"{d}\", run: 3, count: 6}", "#123 456", True),
])
def test_prefilter_chars_skips_a_message_without_enough_characters_of_the_set(tmp_path, gate, text, found):
    gated = TICKETS.replace("    value_group: number\n", f"    value_group: number\n    prefilter_chars: {gate}\n")
    b = book(tmp_path, tickets=gated, codes=None)
    assert bool(lock({"id": "m", "role": "user", "content": text}, b)) is found
    assert lock({"id": "m", "role": "user", "content": text}, book(tmp_path, codes=None))   # ungated: found


@pytest.mark.parametrize("gate, text, found", [
    ("{chars: \"{d}\", run: 6}", "#１２３４５６", True), ("{chars: \"{d}\", run: 6}", "#１２３ ４５６", False),
    ("{chars: \"{d}\", count: 6}", "#１２３ 456", True), ("{chars: \"{d}\", count: 6}", "#１２３ 45", False),
    ("{chars: \"{d}\", run: 3, count: 6}", "#12３ ４５", False), ("{chars: \"{d}\", run: 3, count: 6}", "#12３ ４５6", True),
])
def test_prefilter_chars_counts_what_the_fold_reads_as_the_set(tmp_path, gate, text, found):
    """The gate reads the message as the table's fold does: a full-width digit is a digit."""
    folded = TICKETS.replace("context_chars: 6", "context_chars: 6\nfold: [fullwidth_digits]")
    gated = folded.replace("    value_group: number\n", f"    value_group: number\n    prefilter_chars: {gate}\n")
    b = book(tmp_path, tickets=gated, codes=None)
    assert bool(lock({"id": "m", "role": "user", "content": text}, b)) is found
    assert lock({"id": "m", "role": "user", "content": text}, book(tmp_path, tickets=folded, codes=None))


DIGIT = """\
kind: lock_patterns
id: digit
timeout_ms: 100
fold: [fullwidth_digits]
patterns:
  - id: any
    kind: digit
    regex: '[0-9]'
    prefilter_chars: {chars: "0123456789", GATE}
    counts_in: {roles: [user], states: [sent]}
    normalize: []
    validate: []
    examples:
      - text: "GIVEN"
        locks: WANTED
      - text: "x"
        locks: []
invalid_reasons: {}
"""


@pytest.mark.parametrize("run, count", [(1, 0), (2, 0), (4, 0), (0, 1), (0, 3), (0, 7), (3, 5), (5, 5), (2, 9)])
def test_a_gate_passes_exactly_the_messages_with_count_characters_and_a_run(tmp_path, run, count):
    """The gate's two walks against their definition, on short strings of digits (ASCII and
    full-width, which the fold reads as digits), letters and separators: a message passes iff it
    holds `count` characters of the set and `run` of them in a row. One table holds all runs."""
    gate = ", ".join(f"{k}: {v}" for k, v in (("run", run), ("count", count)) if v)
    given = "1" * max(run, count)
    table = DIGIT.replace("GATE", gate).replace("GIVEN", given).replace(
        "WANTED", "[{quote: \"1\", start: 0, end: 1, normalized_value: \"1\", valid: true}]")
    b = load_rulebook(ROOT, files=[write(tmp_path, "digit", table)])
    rng = random.Random(run * 100 + count)
    for _ in range(400):
        text = "".join(rng.choice("1２a -\n") for _ in range(rng.randrange(0, 16)))
        digits = [c in "1２" for c in text]
        longest = max((len(r) for r in "".join("d" if d else " " for d in digits).split()), default=0)
        want = sum(digits) >= max(count, 1) and longest >= run
        assert bool(lock({"id": "m", "role": "user", "content": text}, b)) is want, (text, run, count)


@pytest.mark.parametrize("digits, padding, found", [(99, 0, False), (100, 0, True), (150, 50_000, True)])
def test_the_census_counts_as_far_as_the_largest_gate_may_ask(tmp_path, digits, padding, found):
    """The one walk that counts a set per message stops at the schema's largest count (100): a gate
    asking for 100 digits sees 99 as too few and 100 or 150 as enough, however long the text."""
    table = DIGIT.replace("GATE", "count: 100").replace("GIVEN", "1" * 100).replace(
        "WANTED", "[{quote: \"1\", start: 0, end: 1, normalized_value: \"1\", valid: true}]")
    b = load_rulebook(ROOT, files=[write(tmp_path, "digit", table)])
    text = "x" * padding + "a".join("1" * digits)
    assert bool(lock({"id": "m", "role": "user", "content": text}, b)) is found


@pytest.mark.parametrize("first, second", [("count: 4", "run: 6, count: 6"), ("run: 3", "count: 6"),
                                           ("run: 3", "run: 6, count: 6")])
def test_gates_of_several_patterns_on_one_set_agree_with_each_alone(tmp_path, first, second):
    """What one gate learned about a message (its census: how many digits, which runs) answers
    another pattern's gate on the same set, whichever asked first (a run-only gate counts nothing);
    each pattern still gets exactly the locks it gets alone."""
    two = TICKETS.replace("    value_group: number\n", f"    value_group: number\n    prefilter_chars: {{chars: \"{{d}}\", {first}}}\n", 1)
    two = two.replace("drop:", f"""  - id: long
    kind: ticket
    regex: '(?<!{{d}}){{d}}{{6}}(?!{{d}})'
    prefilter_chars: {{chars: "{{d}}", {second}}}
    counts_in: {{roles: [user], states: [sent]}}
    normalize: []
    validate: []
    examples:
      - text: "123456"
        locks: [{{quote: "123456", start: 0, end: 6, normalized_value: "123456", valid: true}}]
      - text: "12345"
        locks: []
drop:""", 1)
    b = book(tmp_path, tickets=two, codes=None)
    alone = []                         # each pattern with the other one switched off
    for name in ("long", "ticket"):
        (tmp_path / name).mkdir()
        off = two.replace(f"  - id: {name}\n", f"  - id: {name}\n    prefilter: [nowhere]\n", 1)
        alone.append(book(tmp_path / name, tickets=off, codes=None))
    for text in ("#123", "#12 34", "#123 4", "#123456", "#123 456", "#12 3456", "#1 2 3 4 5 6"):
        got = [c["pattern"] for c in lock({"id": "m", "role": "user", "content": text}, b)]
        each = sorted(c["pattern"] for one in alone for c in lock({"id": "m", "role": "user", "content": text}, one))
        assert sorted(got) == each, text


def test_a_drop_rule_reads_other_tables_candidates(tmp_path):
    b = book(tmp_path)
    assert quotes("C123-456", b) == [("code", "C123-456", "123456", True)]
    assert quotes("C123-456", book(tmp_path, codes=None)) == [("ticket", "123-456", "123456", True)]


def test_a_drop_rule_reads_raw_candidates_even_when_they_are_not_locks(tmp_path):
    """The code C124-456 is invalid; even if its table recorded no invalid code, its span still
    shields the ticket reading inside it: rules read what every pattern found, before any rule."""
    silent = CODES.replace("patterns:", "attempt:\n  - id: never\n    when: {field: quote, eq: '-'}\n"
                           "    examples:\n      - {text: 'C124-456', locks: []}\n"
                           "      - {text: 'C123-456', locks: [{quote: 'C123-456', start: 0, end: 8, "
                           "normalized_value: '123456', valid: true}]}\npatterns:")
    assert quotes("C124-456", book(tmp_path, codes=silent)) == []
    assert quotes("C124-456", book(tmp_path)) == [("code", "C124-456", "124456", False)]


def test_an_invalid_candidate_is_kept_only_when_an_attempt_rule_holds(tmp_path):
    b = book(tmp_path)
    assert quotes("#123", b) == [("ticket", "#123", "123", False)]
    assert quotes("票号 123", b) == [("ticket", "123", "123", False)]
    assert quotes("房间 123", b) == []
    assert quotes("房间 123 456", b) == [("ticket", "123 456", "123456", True)]   # valid: no attempt needed


def test_context_chars_bound_what_before_reads(tmp_path):
    """context_chars: 6, so the label and its blanks must fit in the 6 characters before the candidate."""
    b = book(tmp_path)
    assert quotes("票号    123", b) == [("ticket", "123", "123", False)]
    assert quotes("票号     123", b) == []


def test_a_table_without_rules_keeps_every_invalid_candidate(tmp_path):
    assert quotes("C124-456", book(tmp_path)) == [("code", "C124-456", "124456", False)]


def test_a_rule_that_runs_out_of_time_is_a_lock_timeout(tmp_path):
    """A rule's regex has a budget too: past it the candidate's fate is unknown, so the call fails
    with LOCK_TIMEOUT naming the pattern, never a list missing that candidate."""
    slow = (TICKETS.replace("context_chars: 6", "context_chars: 200")
            .replace("when: {field: before, matches: '票号{sep}*$'}", "when: {field: before, matches: '(a|aa)+b'}"))
    b = book(tmp_path, tickets=slow, codes=None)
    assert quotes("a" * 5 + " 123", b) == []
    with pytest.raises(GroundrulesError) as exc:
        lock({"id": "m9", "role": "user", "content": "a" * 200 + " 123"}, b)
    assert exc.value.code == "LOCK_TIMEOUT" and exc.value.details["pattern"] == "tickets.ticket"


def problems(tmp_path: Path, text: str) -> list[tuple[str, int]]:
    path = write(tmp_path, "tickets", text)
    with pytest.raises(RulesError) as exc:
        load_rulebook(ROOT, files=[path])
    return [(p.code, p.line) for p in exc.value.problems]


def line_of(text: str, needle: str, nth: int = 1) -> int:
    return [i for i, line in enumerate(text.splitlines(), 1) if needle in line][nth - 1]


@pytest.mark.parametrize("old, new, code, at", [
    ("'(?<!{d})(?:(?P<hash>#){sep}?)?", "'(?<!{digit})(?:(?P<hash>#){sep}?)?", "unknown-set", "regex:"),
    ('chars: "{sep}"', 'chars: "{spaces}"', "unknown-set", '{spaces}'),
    ("matches: '票号{sep}*$'", "matches: '票号{seps}*$'", "unknown-set", "matches:"),
    ("value_group: number", "value_group: numbr", "unknown-group", "value_group:"),
    ("when: {field: groups.hash, exists: true}", "when: {field: group.hash, exists: true}", "unknown-fact",
     "group.hash"),
    ("when: {field: inside, any: {field: kind, eq: code}}", "when: {field: inside, any: {field: knd, eq: code}}",
     "unknown-fact", "knd"),
    ("when: {field: groups.hash, exists: true}", "when: {field: groups.hash, exist: true}", "unknown-operator",
     "exist: true"),
    ("  - id: hash\n", "  - id: hash\n    patterns: [tiket]\n", "unknown-pattern", "patterns: [tiket]"),
    ("  - id: label\n", "  - id: hash\n", "duplicate-rule-id", "- id: hash"),
    ("context_chars: 6", "context_chars: 0", "bad-value", "context_chars"),
    ("context_chars: 6", "context_chars: 6\nfold: [fullwidth_digit]", "unknown-fold", "fold:"),
    ("    value_group: number\n", "    value_group: number\n    prefilter_chars: {chars: \"{d}\"}\n",
     "missing-step-argument", "prefilter_chars"),
    ("    value_group: number\n", "    value_group: number\n    prefilter_chars: {chars: \"{digits}\", run: 3}\n",
     "unknown-set", "prefilter_chars"),
    ("  sep: \" -\"", "  Sep: \" -\"", "bad-value", "sets:"),
])
def test_a_broken_rule_fails_the_load_at_file_line(tmp_path, old, new, code, at):
    assert old in TICKETS
    text = TICKETS.replace(old, new, 1)
    nth = 2 if code == "duplicate-rule-id" else 1
    assert (code, line_of(text, at, nth)) in problems(tmp_path, text)


def test_a_gate_whose_characters_the_fold_maps_away_fails_the_load(tmp_path):
    """prefilter_chars of full-width digits under the fullwidth_digits fold: no message could pass."""
    text = TICKETS.replace("context_chars: 6", "context_chars: 6\nfold: [fullwidth_digits]").replace(
        "    value_group: number\n", "    value_group: number\n    prefilter_chars: {chars: \"０１２\", count: 3}\n", 1)
    assert ("gate-never-passes", line_of(text, "prefilter_chars")) in problems(tmp_path, text)


def test_a_rule_needs_examples_on_both_sides(tmp_path):
    """A rule whose examples never show it holding (or never show it failing) fails `groundrules test`
    at the rule's line: it is exercised neither way, so nobody knows it works."""
    data = yaml.safe_load(TICKETS)
    data["attempt"][0]["examples"] = data["attempt"][0]["examples"][:1]        # only where it holds
    data["attempt"][1]["examples"] = data["attempt"][1]["examples"][1:]        # only where it fails
    text = yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    path = write(tmp_path, "tickets", text)
    failed = [o for o in run_all(load_rulebook(ROOT, files=[path])) if not o.ok]
    assert sorted((o.id, o.message) for o in failed) == [
        ("tickets:attempt.hash", "no example has a candidate on which the rule does not hold"),
        ("tickets:attempt.label", "no example has a candidate on which the rule holds")]
    assert failed[0].where.startswith(f"{path.as_posix()}:{line_of(text, '- id: hash')}:")


def test_a_rule_without_examples_is_refused(tmp_path):
    text = TICKETS.replace("  - id: hash\n    when: {field: groups.hash, exists: true}\n    examples:\n",
                           "  - id: hash\n    when: {field: groups.hash, exists: true}\n    examplez:\n")
    assert ("unknown-key", line_of(text, "examplez")) in problems(tmp_path, text)


def test_a_given_quote_missing_from_its_text_fails_the_example(tmp_path):
    text = TICKETS.replace('given: [{kind: code, quote: "C123-456"}]', 'given: [{kind: code, quote: "C999"}]')
    failed = [o for o in run_all(book(tmp_path, tickets=text)) if not o.ok]
    assert [(o.id, o.message) for o in failed] == [
        ("tickets:drop.inside_a_code:1", "a given quote does not occur in the text"),
        ("tickets:drop.inside_a_code", "no example has a candidate on which the rule holds")]


def test_a_rule_example_given_may_name_the_pattern_a_row_reads(tmp_path):
    """A row reading `pattern` in `inside` can be shown by an example whose given candidate names
    its pattern (issue 36, item 4); without it, the given candidate has no pattern to match."""
    text = TICKETS.replace("when: {field: inside, any: {field: kind, eq: code}}",
                           "when: {field: inside, any: {field: pattern, eq: codes.code}}")
    named = text.replace('given: [{kind: code, quote: "C123-456"}]',
                         'given: [{kind: code, quote: "C123-456", pattern: codes.code}]')
    (tmp_path / "named").mkdir()
    (tmp_path / "unnamed").mkdir()
    assert all(o.ok for o in run_all(book(tmp_path / "named", tickets=named)))
    failed = [o.id for o in run_all(book(tmp_path / "unnamed", tickets=text)) if not o.ok]
    assert "tickets:drop.inside_a_code:1" in failed


# ---- the bundled tables: their examples hold with every lock table loaded ------------------------

def _bundled_examples():
    out = []
    for path in sorted((ROOT / "locks").glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for p in data["patterns"]:
            out += [(f"{data['id']}:{p['id']}:{n}", ex, {f"{data['id']}.{p['id']}"})
                    for n, ex in enumerate(p.get("examples", ()), 1)]
        for section in ("drop", "attempt"):
            for row in data.get(section, ()):
                everyone = {f"{data['id']}.{p['id']}" for p in data["patterns"]}
                out += [(f"{data['id']}:{section}.{row['id']}:{n}", ex, everyone)
                        for n, ex in enumerate(row["examples"], 1)]
    return out


EXAMPLES = _bundled_examples()


@pytest.mark.parametrize("test_id, example, patterns", EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_every_table_example_holds_with_all_lock_tables_loaded(lock_book, test_id, example, patterns):
    """`groundrules test` checks an example against its own table (plus its `given`); here the whole
    lock rulebook reads it, so another table's rule can never silently contradict it."""
    message = {"id": "m", "role": example.get("role", "user"), "content": example["text"],
               "state": example.get("state", "sent")}
    got = [{"quote": c["quote"], "start": c["locator"]["start"], "end": c["locator"]["end"],
            "normalized_value": c["normalized_value"], "valid": c["valid"], "invalid_reason": c["invalid_reason"]}
           for c in lock(message, lock_book) if c["pattern"] in patterns]
    assert got == [dict(w, invalid_reason=w.get("invalid_reason")) for w in example["locks"]]


GIVEN = [(test_id, ex, g) for test_id, ex, _ in EXAMPLES for g in ex.get("given", ())]


@pytest.mark.parametrize("test_id, example, given", GIVEN, ids=[f"{g[0]}:{g[2]['kind']}" for g in GIVEN])
def test_every_given_candidate_is_what_the_other_tables_find(lock_book, test_id, example, given):
    text = example["text"]
    start = text.index(given["quote"])
    found = [(r.kind, r.start, r.end, r.valid) for t in lock_book.of_kind("lock_patterns") for p in t.patterns
             for r in raw_candidates(p, "m", example.get("role", "user"), example.get("state", "sent"), text)]
    assert (given["kind"], start, start + len(given["quote"]), given.get("valid", True)) in found
    if "pattern" in given:                      # and the pattern it names is the one that finds it
        patterns = [r.pattern for t in lock_book.of_kind("lock_patterns") for p in t.patterns
                    for r in raw_candidates(p, "m", example.get("role", "user"), example.get("state", "sent"), text)
                    if (r.kind, r.start, r.end) == (given["kind"], start, start + len(given["quote"]))]
        assert given["pattern"] in patterns
