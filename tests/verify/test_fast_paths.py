"""The verifier's fast paths answer what the plain ones do (issue 31's throughput target): a table's
pattern tried only where pattern_starts says a match may start finds every match a whole `regex`
scan finds, and a lexicon's scan (words.py) finds what a look at every position of the text finds.
Checked on the texts of the request corpus, the verify cases and the benchmark's chat, on texts
drawn from the patterns' own characters, and as whole verifications of every request corpus split."""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings, strategies as st

from budget import examples
from groundrules.verification import verify
from groundrules.verification.pattern_starts import _ASCII_FOLDS, starts_of
from groundrules.verification.patterns import Pattern
from groundrules.verification.words import Lexicon
from request_corpus import BLIND, EMPTY_SCHEMA, SPLITS, candidate_of, request_of, requests
from verify_support import all_cases

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "perf"))
from bench_verify import big_case  # noqa: E402


def patterns(book) -> list[Pattern]:
    phrases, heuristics = book.table("verify.prohibition_phrases"), book.table("verify.intent_heuristics")
    readings = [r.pattern for n in book.table("verify.value_derivations").normalizers for r in n.readings]
    return [p for p, _ in phrases.phrases] + list(phrases.corrections) + [h.pattern for h in heuristics.heuristics] \
        + readings


def lexicons(book, families: bool) -> dict[str, Lexicon]:
    """The lexicons a verification scans texts with (with `families`, each action family's too)."""
    phrases = book.table("verify.prohibition_phrases")
    out = {"actions": phrases.actions.words, "negation words": phrases.negations.words,
           "cue words": phrases.negations.cue_words}
    if families:
        out.update({f"family {f.id}": f.words for f in phrases.actions.families})
    return out


def _strings(value, out: list) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)


def texts(book) -> list[str]:
    """Every string of the seen request corpus splits, of the verify cases, of the patterns'
    examples, and the benchmark's 20 KB chat."""
    out: list = []
    for split in SPLITS:
        if split not in BLIND:                 # a blind split's sentences stay out of failure messages
            _strings(requests(split), out)
    _strings(all_cases(), out)
    for p in patterns(book):
        out += [ex["text"] for ex in p.examples]
    out.append(big_case()[0])
    return sorted(set(out))


def whole(p: Pattern, text: str) -> list:
    return [(m.start(), m.end(), m.groupdict()) for m in p.regex.finditer(text)]


def tried(p: Pattern, text: str) -> list:
    return [(s, e, m.groupdict()) for s, e, m in p.spans(text)]


def test_a_pattern_tried_where_a_match_may_start_finds_what_a_whole_scan_finds(vbook):
    found = patterns(vbook)
    assert any(p.starts is not None for p in found), "no table pattern has starts: nothing here is checked"
    for text in texts(vbook):
        for p in found:
            assert tried(p, text) == whole(p, text), (p.id, text)


# patterns with every construct the reading knows, over texts of their own characters
CONSTRUCTS = [r"[订买](?=[个下]|一[下间])", r"(?i)kelvin|(?i:s)t", r"a?b|c*d", r"(?:ab)+c|x{2,3}", r"(a)b\1",
              r"(?:(?=a))ab", r"(?=ab)a|(?=a)b", r"(?<=x)y|^z|\bw", r"(?>ab|a)c", r"(a)?(?(1)b|c)d",
              r"a{0,2}b{1}c", r"(?:a|)b", r"(?i)[a-c]x", r"(?:ab|cd)*?(?=x)x", r"(?i:i)\u0131|K",
              r"(?P<n>ab)|(?P<n>cd)|[(?P<x>]", r"(?<n>a)(?<=a)b"]
ALPHABET = "abcdikstwxyz订买个下一间 \nKSI\u212a\u017f\u0130\u0131"


@settings(max_examples=examples(2000), deadline=None)
@given(st.sampled_from(CONSTRUCTS), st.text(ALPHABET, max_size=24))
def test_the_starts_of_a_pattern_hold_every_match_it_has(source, text):
    p = Pattern("p", regex.compile(source), (), (), 1.0, starts_of(source))
    assert p.starts is not None
    assert tried(p, text) == whole(p, text)


@settings(max_examples=examples(1000), deadline=None)
@given(st.data())
def test_a_table_pattern_finds_what_a_whole_scan_finds_in_texts_of_its_own_characters(vbook, data):
    p = data.draw(st.sampled_from([p for p in patterns(vbook) if p.starts is not None]))
    text = data.draw(st.text(sorted(set(p.regex.pattern) | set(" ，。A\n")), max_size=30))
    assert tried(p, text) == whole(p, text)


@pytest.mark.parametrize("source", [r"\p{Han}a", r"[[:alpha:]]a", r"(?:ab){e<=1}", r"(?P<x>a)(?P=x)",
                                    r"a*", r"(?=a)", r".a", r"[^a]b", r"\da"])
def test_a_pattern_the_stdlib_reads_otherwise_or_that_may_start_anywhere_has_no_starts(source):
    assert starts_of(source) is None


def test_the_characters_regex_matches_to_an_ascii_letter_ignoring_case_are_all_known():
    letter = regex.compile(r"(?i)[a-z]")
    folds = {chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c < 0xE000 and letter.fullmatch(chr(c))}
    assert folds == set(_ASCII_FOLDS.values())


def plain_scan(lex: Lexicon, text: str) -> dict:
    """What a lexicon finds, by looking up every position of the text (no starts, no pairs)."""
    guards = {w: g for entries in lex.at_one.values() for w, _, _, g in entries}
    guards.update({w: g for entries in lex.at_two.values() for w, _, _, g in entries})
    hits: dict = {}
    for i in range(len(text)):
        claimed: set = set()
        for key in (text[i:i + 2], text[i]):
            for word, tags in lex.cjk.get(key, ()):
                ahead, around = guards[word] or ((), ())
                if text.startswith(word, i) and not any(text.startswith(w, i) for w in ahead) and not any(
                        i >= off and text[i - off:i - off + n] in longer for off, n, longer in around):
                    for tag in (t for t in tags if t not in claimed):
                        hits.setdefault(tag, []).append((i, i + len(word), word))
                        claimed.add(tag)
    tokens = lex._tokens(text)
    for k, (s, _, tok) in enumerate(tokens):
        claimed = set()
        for words, word, tags in lex.latin.get(tok, ()):
            end = lex._phrase_end(text, tokens, k, words, lex.parts)
            for tag in (t for t in tags if end is not None and t not in claimed):
                hits.setdefault(tag, []).append((s, end, word))
                claimed.add(tag)
    return {tag: sorted(found) for tag, found in hits.items()}


@pytest.mark.parametrize("families", [False, pytest.param(True, marks=pytest.mark.extended)],
                         ids=["scans", "with-families"])
def test_a_lexicon_finds_what_a_look_at_every_position_finds(vbook, families):
    for text in texts(vbook):
        for name, lex in lexicons(vbook, families).items():
            assert lex.scan(text) == plain_scan(lex, text), (name, text)


def digests(book) -> dict[str, str]:
    """split -> a digest of every verification report of its candidates."""
    out = {}
    for split in SPLITS:
        reports = []
        for item in requests(split):
            for c in item["good"] + item["bad"]:
                reports.append(verify(request_of(item), EMPTY_SCHEMA, candidate_of(item, c), book))
        out[split] = hashlib.sha256(json.dumps(reports, ensure_ascii=False).encode()).hexdigest()
    return out


@pytest.mark.extended
def test_every_request_corpus_split_is_answered_as_the_plain_paths_answer_it(vbook, monkeypatch):
    """Whole verifications, blind splits too (compared by digest, so no sentence is shown): 7 s."""
    fast = digests(vbook)
    monkeypatch.setattr(Pattern, "_spans", lambda self, text, timeout: [
        (m.start(), m.end(), m) for m in self.regex.finditer(text, timeout=timeout)])
    monkeypatch.setattr(Lexicon, "scan", plain_scan)
    plain = digests(vbook)
    assert [s for s in SPLITS if fast[s] != plain[s]] == []
