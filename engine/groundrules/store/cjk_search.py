"""Keyword search that finds Chinese text, two-character words included.

FTS5's trigram tokenizer cannot match a term shorter than three characters, and unicode61 keeps a
whole run of Han characters as one token, so neither finds 漂移 inside 温度漂移导致误差. We index
our own expansion instead: every CJK run becomes its overlapping bigrams followed by its last
character (漂移导致 -> 漂移 移导 导致 致), other words stay words; unicode61 then only splits on the
spaces we put in. A query goes through the same expansion: a CJK term of two or more characters
is the phrase of its bigrams (consecutive tokens, so exact substring semantics), a single CJK
character is a prefix query (every character starts some token), and a term's last Latin word is
a prefix of a word (`exhaust` finds `exhausted`; earlier words of a term match whole words).
Searching stays an index lookup at any size: no LIKE scan.
"""
from __future__ import annotations

import regex

_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}"
_RUNS = regex.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>[[\p{{L}}\p{{N}}]--[{_CJK}]]+)", regex.V1)


def _runs(text: str) -> list[tuple[str, str]]:
    return [("cjk", m.group("cjk")) if m.group("cjk") else ("word", m.group("word").lower())
            for m in _RUNS.finditer(text)]


def grams(text: str) -> str:
    """The indexed form of `text`: space-separated tokens as described above."""
    out: list[str] = []
    for kind, run in _runs(text):
        if kind == "word":
            out.append(run)
            continue
        out.extend(run[i:i + 2] for i in range(len(run) - 1))
        out.append(run[-1])
    return " ".join(out)


def phrases(keyword: str) -> list[tuple[list[str], bool]]:
    """The phrases `keyword` asks for (whitespace-separated terms, all required): each a list of
    consecutive tokens and whether its last token is a prefix. Shared by the SQLite and PostgreSQL
    stores, so both search the same way."""
    out: list[tuple[list[str], bool]] = []
    for term in keyword.split():
        runs = _runs(term)
        tokens: list[str] = []
        for n, (kind, run) in enumerate(runs):
            last = n == len(runs) - 1
            if kind == "word":
                tokens.append(run)
            elif len(run) == 1 and last:
                tokens.append(run)   # a lone final character matches as a prefix of a token
            else:
                tokens.extend(run[i:i + 2] for i in range(len(run) - 1))
                if not last:
                    tokens.append(run[-1])   # the indexed run ends with its last character
        if tokens:
            kind, run = runs[-1]
            out.append((tokens, kind == "word" or len(run) == 1))
    return out


def match_expression(keyword: str) -> str | None:
    """FTS5 MATCH text for `keyword`; None if it has no searchable characters."""
    found = [_phrase(tokens, prefix) for tokens, prefix in phrases(keyword)]
    return " AND ".join(found) if found else None


def _phrase(tokens: list[str], prefix: bool) -> str:
    # tokens hold letters and digits only, so quoting cannot be escaped
    return '"' + " ".join(tokens) + '"' + (" *" if prefix else "")
