"""The silent mistakes `groundrules lint` looks for in tables that load: each a function of the
compiled rulebook yielding Problems at file:line:col, listed in CHECKS.

A table that loads can still be wrong in ways no single compiler sees: a regex that backtracks
without bound on hostile text, a transition whose `via` names no operation, a lock kind no slot
consumes, a row an earlier one always beats, an example that fails, `gt: "10"` (strings order
character by character), `eq: yes` (YAML 1.1 reads it as true).
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable, Iterator

import regex

from ..core.conditions import Condition
from .implication import conjuncts, implied
from ..core import messages
from ..core.errors import Problem, did_you_mean
from . import gate, references
from .regexprobe import BUDGET_S, probe
from ..access import tool_names
from ..claim_map import unknown_roles
from ..provenance.table import unknown_writer_roles
from ..core.tables import location
from ..core.yamlsrc import Source

if TYPE_CHECKING:
    from ..core.rulebook import Rulebook

ORDERING = ("lt", "le", "gt", "ge")
NUMBER_LIKE = regex.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def operation_names(book: "Rulebook") -> frozenset | None:
    """The operations a transition may name in `via`: the tool registry's tools, one schema file
    each under schemas/tools/; None when there are none."""
    return frozenset(tool_names(book.schemas)) or None


def _problem(source: Source, path: tuple, code: str, message: str, hint: str = "",
             severity: str = "error") -> Problem:
    line, col, key = location(source, path)
    return Problem(source.file, line, col, code, message, key, hint, severity)


def _sources(book: "Rulebook", kind: str | None = None) -> Iterator[tuple[str, Source]]:
    for table_id in sorted(book.tables):
        if kind is None or book.kinds.get(table_id) == kind:
            yield table_id, book.sources[table_id]


def _walk(value: Any, path: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    """Every (key path, mapping) in a table's data."""
    if isinstance(value, dict):
        yield path, value
        for key, item in value.items():
            yield from _walk(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, path + (index,))


def regex_backtracking(book: "Rulebook") -> Iterator[Problem]:
    """Every regex of every table (a lock pattern's `regex`, a check's, a condition's `matches`)
    probed on adversarial text under a small budget."""
    for _, source in _sources(book):
        for path, mapping in _walk(source.data):
            for key in ("regex", "matches"):
                text = mapping.get(key)
                if not isinstance(text, str):
                    continue
                slow = probe(text)
                if slow is not None:
                    yield _problem(
                        source, path + (key,), "regex-backtracking",
                        f"the regex backtracks without bound: on {slow.describe()} one search ran past "
                        f"{BUDGET_S * 1000:.0f} ms (at run time: a timeout for the whole call)",
                        "make the repeated parts unambiguous ((1|11)+ -> 1+, (a+)+ -> a+) or bound them "
                        "({1,20})")


def unknown_operations(book: "Rulebook") -> Iterator[Problem]:
    """A transition (or a transition example) whose `via` names an operation that does not exist
    can never be taken through it."""
    names = operation_names(book)
    if names is None:
        return
    for _, source in _sources(book, "transition_table"):
        data = source.data
        places: list[tuple[tuple, Any]] = [(("machines", m, "transitions", i, "via", j), op)
                  for m, machine in data.get("machines", {}).items()
                  for i, move in enumerate(machine.get("transitions", []))
                  for j, op in enumerate(move.get("via", []))]
        places += [(("examples", i, "via"), ex["via"]) for i, ex in enumerate(data.get("examples", []))
                   if "via" in ex]
        for path, op in places:
            if op not in names:
                yield _problem(source, path, "unknown-operation",
                               f"'{op}' is not a tool of the registry (no schemas/tools/{op}.schema.json)",
                               did_you_mean(op, names) or "operations: " + ", ".join(sorted(names)))


def unconsumed_lock_kinds(book: "Rulebook") -> Iterator[Problem]:
    """A lock kind that no merge-policy slot lists under `locks.kinds` is locked and then never
    used. Checked only when the rulebook has a merge policy."""
    policies = list(_sources(book, "merge_policy"))
    if not policies:
        return
    consumed = {kind for _, source in policies for slot in source.data.get("slots", {}).values()
                for kind in slot.get("locks", {}).get("kinds", [])}
    files = ", ".join(source.file for _, source in policies)
    for _, source in _sources(book, "lock_patterns"):
        for i, pattern in enumerate(source.data.get("patterns", [])):
            kind = pattern.get("kind")
            if kind not in consumed:
                yield _problem(source, ("patterns", i, "kind"), "unconsumed-lock-kind",
                               f"no slot of {files} lists lock kind '{kind}' in its locks.kinds: these locks "
                               "are never used", f"add '{kind}' to a slot's locks.kinds in {files}, or "
                               f"correct the kind{_close(kind, consumed)}")


def _close(word: str, choices) -> str:
    hint = did_you_mean(word, choices)
    return f" ({hint})" if hint else ""


def _said(cond: Condition) -> str:
    """A condition in a few words (`current.status in [filled, conflicting]`)."""
    if cond.kind == "test":
        arg = cond.source.get(cond.op)
        return f"{cond.field} {cond.op} {json.dumps(arg, ensure_ascii=False)}"
    return json.dumps(cond.source, ensure_ascii=False)


def shadowed_rows(book: "Rulebook") -> Iterator[Problem]:
    """A row whose tests imply every test of an earlier row fires only when that row does (`eq:
    filled` lies within `in: [filled, conflicting]`, `gt: 7` within `gt: 5`: implication.py):
    under `first` (or `output_order`, for two rows of one code) it can never fire; under `unique`
    the two match together, which is HIT_POLICY_VIOLATION at run time."""
    for table, source, prefix in book.decision_tables():
        rows = sorted(table.rows, key=lambda r: r.index)
        for j, later in enumerate(rows):
            given = conjuncts(later.when)
            for earlier in rows[:j]:
                if implied(given, earlier.when) is None:
                    continue
                line = location(source, prefix + earlier.where)[0]
                why = _why(given, earlier.when)
                if table.hit_policy == "first" or (table.hit_policy == "output_order"
                                                   and earlier.code == later.code):
                    yield _problem(source, prefix + later.where + ("when",), "shadowed-row",
                                   f"row '{later.id}' can never fire: row '{earlier.id}' (line {line}) matches "
                                   f"whenever it does{why}, and comes first under hit policy {table.hit_policy}",
                                   f"make '{later.id}' come first, or narrow '{earlier.id}'")
                    break
                if table.hit_policy == "unique":
                    yield _problem(source, prefix + later.where + ("when",), "overlapping-rows",
                                   f"rows '{earlier.id}' (line {line}) and '{later.id}' both match whenever "
                                   f"'{later.id}' does{why}: hit policy unique refuses that (HIT_POLICY_VIOLATION)",
                                   f"add a test to '{earlier.id}' that excludes '{later.id}'s case")
                    break


def _why(given: list, earlier: Condition) -> str:
    """`(a within b)` for the first test of the earlier row that is not written the same way in
    the later one, '' when the later row simply repeats it."""
    for cond in conjuncts(earlier):
        by = implied(given, cond)
        if by is not None and _said(by) != _said(cond):
            return f" ({_said(by)} lies within {_said(cond)})"
    return ""


def negative_examples(book: "Rulebook") -> Iterator[Problem]:
    """A row whose examples all fire shows when it holds, never that it stays quiet."""
    for table, source, prefix in book.decision_tables():
        for row in sorted(table.rows, key=lambda r: r.index):
            if row.examples and all(ex.get("fires") is True for ex in row.examples):
                yield _problem(source, prefix + row.where + ("id",), "missing-negative-example",
                               f"row '{row.id}' of {table.id} has no example where it does not fire",
                               "add {given: <a near miss>, fires: false} under its examples", "warning")


def failing_examples(book: "Rulebook") -> Iterator[Problem]:
    """What `groundrules test` reports, here too."""
    for outcome in gate.run(book):
        if not outcome.ok:
            yield Problem(outcome.file, outcome.line, outcome.column, outcome.code,
                          f"{outcome.id}: {outcome.message}", outcome.key, "run `groundrules test` for the details")


def number_like_strings(book: "Rulebook") -> Iterator[Problem]:
    """`{field: x, gt: "10"}`: strings order character by character, so "9" > "10"."""
    for _, source in _sources(book):
        for path, mapping in _walk(source.data):
            if "field" not in mapping:
                continue
            for op in ORDERING:
                value = mapping.get(op)
                if isinstance(value, str) and NUMBER_LIKE.fullmatch(value.strip()):
                    yield _problem(source, path + (op,), "number-as-string",
                                   f"'{op}' compares '{mapping['field']}' with the string \"{value}\": strings "
                                   "order character by character (\"9\" > \"10\")",
                                   f"write the number without quotes ({op}: {value.strip()}), or compare with "
                                   "a field that holds numbers")


def yaml11_booleans(book: "Rulebook") -> Iterator[Problem]:
    """`eq: yes` reads as `eq: true` (YAML 1.1): ask which was meant."""
    for _, source in _sources(book):
        for path, text in source.yaml11_booleans:
            yield _problem(source, path, "yaml-boolean",
                           f"{text} is read as {'true' if text.lower() in ('yes', 'y', 'on') else 'false'} "
                           "(a YAML 1.1 boolean), not as the word",
                           f"write {'true' if text.lower() in ('yes', 'y', 'on') else 'false'} for the "
                           f"boolean, or quote it ('{text}') for the word")


def dangling_references(book: "Rulebook") -> Iterator[Problem]:
    """A name one table uses for what another defines (a slot's lock kind, a drop rule's kind, a
    guard's state, a resolve row's slot) that nothing defines any more: references.py."""
    for table_id, source in _sources(book):
        kind = book.kinds.get(table_id, "")
        schema = book.schemas.kind_schema(kind)
        if schema is not None:
            yield from _dangling(book, source, references.in_data(source.data, schema, book.schemas,
                                                                  f"kinds/{kind}.schema.json"))
    for table, source, prefix in book.decision_tables():
        shapes = references.contract_shapes(book.schemas, table.input)
        if not shapes:
            continue
        places = [(prefix + at, v, n) for row in table.rows for at, v, n in references.in_condition(row.when, shapes)]
        places += [(prefix + at, v, n) for b in table.bindings.values() if b.where_cond is not None
                   for at, v, n in references.in_condition(b.where_cond, shapes, b.source["from"] + "[].")]
        data = source.data.get(prefix[0]) if prefix else source.data
        places += list(references.examples_given(data, shapes, prefix))
        yield from _dangling(book, source, places)
    for table_id, source in _sources(book, "transition_table"):
        shapes = references.contract_shapes(book.schemas, source.data.get("input", ""))
        guards = book.tables[table_id].guards.values()
        yield from _dangling(book, source, [p for g in guards for p in references.in_condition(g.when, shapes)]
                             + list(references.examples_given(source.data, shapes)))
    for table_id, source in _sources(book, "lock_patterns"):
        lookup = references.LOCK_FACT_NAMES.get
        yield from _dangling(book, source, [p for row in book.tables[table_id].rows
                                            for p in references.in_condition(row.when, lookup)])


def _dangling(book: "Rulebook", source: Source, places) -> Iterator[Problem]:
    for path, value, names in places:
        found = references.known(book, names)
        if found is not None and value not in found[1]:
            text, hint = references.message(value, *found)
            yield _problem(source, path, "dangling-reference", text, hint)


PLACEHOLDER = regex.compile(r"\{\s*[\w.-]+\s*(?:\|[^{}]*)?\}")


def label_placeholders(book: "Rulebook") -> Iterator[Problem]:
    """A `label` is plain text, shipped as written: `{gaps|count}` in one is no template (its filter
    is never checked, its name never read) and reaches the caller with the braces."""
    for _, source in _sources(book):
        for path, mapping in _walk(source.data):
            text = mapping.get("label")
            if isinstance(text, str) and (found := PLACEHOLDER.search(text)):
                yield _problem(source, path + ("label",), "label-placeholder",
                               f"a label is plain text: '{found.group()}' would be shipped as written, braces and all",
                               "write the label as plain words; a value read from the input belongs in a row's "
                               "output template (detail: ...{name|filter}...)")


# A context regex of an attempt row reads the text next to the candidate: `before` must end at the
# candidate ($), `after` start at it (^), and neither may reach across digits, or every digit run
# near a label of anything (a membership card, an order) turns into an invalid phone.
CONTEXT_ANCHOR = {"before": regex.compile(r"(?:\$|\\Z)\)*$"), "after": regex.compile(r"^(?:\(\?[a-zA-Z]+\))?\(*(?:\^|\\A)")}
LITERAL_WORDS = regex.compile(r"(?<![\\])[\p{Han}A-Za-z]{2,}")


def attempt_context_regexes(book: "Rulebook") -> Iterator[Problem]:
    """An attempt row's `matches` on `before` / `after` that is not anchored at the candidate, or
    that holds with a digit between its words and the candidate."""
    for table in book.of_kind("lock_patterns"):
        source = book.sources[table.id]
        for row in table.rows:
            if row.section != "attempt":
                continue
            for cond in _tests(row.when):
                if cond.op != "matches" or cond.field not in CONTEXT_ANCHOR or cond.pattern is None:
                    continue
                text = cond.pattern.pattern
                side = "end" if cond.field == "before" else "start"
                if not CONTEXT_ANCHOR[cond.field].search(text):
                    yield _problem(source, cond.where + ("matches",), "unanchored-context",
                                   f"attempt row '{row.id}' reads '{cond.field}' without anchoring at the candidate: "
                                   f"its words may stand anywhere in the context, far from the number",
                                   f"{'end the regex with $' if side == 'end' else 'start the regex with ^'} and "
                                   f"say what may stand between ([^0-9]{{0,6}})")
                    continue
                probe = _digit_probe(cond.pattern, cond.field)
                if probe is not None:
                    yield _problem(source, cond.where + ("matches",), "context-admits-digits",
                                   f"attempt row '{row.id}' holds when digits stand between its words and the "
                                   f"candidate ({cond.field} {json.dumps(probe, ensure_ascii=False)} matches): any "
                                   "number near such a word is recorded as an attempt at this kind",
                                   "exclude digits between the words and the candidate ([^0-9]{0,6})")


def _digit_probe(pattern: Any, field: str) -> str | None:
    """A context with a digit right next to the candidate that `pattern` matches, or None."""
    words = LITERAL_WORDS.findall(pattern.pattern)[:40] or [""]
    for word in words:
        for gap in ("", " ", "：", "号 "):
            text = f"{word}{gap}0" if field == "before" else f"0{gap}{word}"
            try:
                if pattern.search(text, timeout=BUDGET_S):
                    return text
            except TimeoutError:
                return None
    return None


def _tests(cond: Condition) -> Iterator[Condition]:
    """Every test of a condition, inside combinators and list quantifiers."""
    if cond.kind == "test":
        yield cond
        if isinstance(cond.arg, Condition):
            yield from _tests(cond.arg)
    for child in cond.children:
        yield from _tests(child)


def message_languages(book: "Rulebook") -> Iterator[Problem]:
    """Every message of every table is written in the catalogue's languages, the default first (a
    table's messages speak their first language when no language is asked for), and the metaschema
    of a message (common.schema.json#/$defs/message) requires exactly those languages."""
    catalogue = messages.of(book)
    if catalogue is None:
        return
    languages = catalogue.languages
    declared = ((book.schemas.get("kinds/common.schema.json") or {}).get("$defs", {}).get("message", {})
                .get("required", []))
    if tuple(declared) != languages:
        yield _problem(book.sources[messages.TABLE], ("languages",), "languages-differ",
                       f"the catalogue declares {', '.join(languages)}, but a message's metaschema "
                       f"(schemas/kinds/common.schema.json $defs/message) requires {', '.join(declared) or 'none'}",
                       "list the same languages in both, in the same order")
    for table_id, source in _sources(book):
        for path, mapping in _walk(source.data):
            if set(mapping) == set(languages) and all(isinstance(v, str) for v in mapping.values()) \
                    and tuple(mapping) != languages:
                yield _problem(source, path, "languages-order",
                               f"the message is written in {', '.join(mapping)}, not in the catalogue's "
                               f"order {', '.join(languages)}",
                               f"write {languages[0]} first: it is what the table says when no language is asked for")


CHECKS: tuple[Callable[["Rulebook"], Iterator[Problem]], ...] = (
    failing_examples, negative_examples, shadowed_rows, unknown_operations, unconsumed_lock_kinds,
    number_like_strings, yaml11_booleans, regex_backtracking, unknown_roles, unknown_writer_roles,
    attempt_context_regexes, label_placeholders,
)
# checks that need every table: a name another table defines is missing from a partial load
WHOLE_BOOK_CHECKS: tuple[Callable[["Rulebook"], Iterator[Problem]], ...] = (dangling_references, message_languages)
