"""The prohibition lock (`rules/prohibition_phrases.yaml`): the action words, the negations over
them (negation.py: prohibitions and withdrawals the candidate must keep, an error when dropped), and
the restriction phrases (先只…, 只需…) its prohibitions or requirements should reflect.

A phrase's reflection is deliberately lenient (a shared run of `min_shared` characters with the
phrase's object) and only ever warns: the wording of a restriction may vary, and a reviewer decides.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from ..core.examples import ExampleResult
from .actions import ActionWords, compile_actions
from .negation import Negation, Negations, compile_negations
from .patterns import compile_pattern, duplicate_ids
from .spans import Spans

if TYPE_CHECKING:
    from ..core.tables import CompileContext

KIND = "prohibition_phrases"


@dataclass(frozen=True)
class PhraseMatch:
    id: str
    kind: str                  # prohibition | withdrawal | restriction
    start: int                 # code-point offsets into the input, end exclusive
    end: int
    phrase: str
    object: str


@dataclass(frozen=True)
class ProhibitionPhrases:
    kind: str
    id: str
    file: str
    min_shared: int
    phrases: tuple             # (Pattern, phrase kind)
    actions: ActionWords
    negations: Negations
    corrections: tuple = ()    # Pattern with groups old and new (不是要改地址，是要改电话)

    def scan(self, text: str, negations: tuple | list = ()) -> list[PhraseMatch]:
        """Every phrase in `text` outside `negations` (one constraint is read once, as the
        negation), by position; of overlapping matches the earlier, then the longer, one is kept,
        so one phrase is never reported twice by two patterns."""
        found = []
        outside = Spans((n.start, n.end) for n in negations)
        for pattern, kind in self.phrases:
            for start, end, m in pattern.spans(text):
                if not outside.overlaps(start, end):
                    found.append(PhraseMatch(pattern.id, kind, start, end, m.group(0),
                                             m.group("object") or m.group(0)))
        found.sort(key=lambda p: (p.start, -p.end, p.id))
        kept: list[PhraseMatch] = []
        for p in found:
            if not kept or p.start >= kept[-1].end:
                kept.append(p)
        return kept

    def reflected(self, match: PhraseMatch, statements: list[str]) -> bool:
        """Whether some statement shares `min_shared` consecutive characters with the object."""
        return self.names(match.object.strip(), statements, empty=True)

    def names(self, part: str, statements: list[str], empty: bool = False) -> bool:
        """Whether some statement shares `min_shared` consecutive characters with `part` (all of
        it, when it is shorter); `empty` is the answer for an empty part."""
        k = min(self.min_shared, len(part))
        if k == 0:
            return empty
        grams = {part[i:i + k] for i in range(len(part) - k + 1)}
        return any(g in s for s in statements for g in grams)

    def shares(self, text: str, statements: list[str]) -> bool:
        """Whether some statement shares `min_shared` consecutive characters (not blanks) with `text`."""
        k = self.min_shared
        runs = {text[i:i + k] for i in range(len(text) - k + 1) if text[i:i + k].strip() == text[i:i + k]}
        return any(r in s for r in runs for s in statements)

    def corrected(self, text: str) -> list[tuple[str, str]]:
        """(old, new) of each correction in `text`, only the parts that differ: 改收货地址 and
        改收货人电话 are 地址 and 人电话 (what they share is neither taken back nor new)."""
        out = []
        for pattern in self.corrections:
            for _, _, m in pattern.spans(text):
                old, new = m.group("old").strip(), m.group("new").strip()
                k = 0
                while k < min(len(old), len(new)) and old[k] == new[k]:
                    k += 1
                old, new = old[k:], new[k:]
                k = 0
                while k < min(len(old), len(new)) and old[-1 - k] == new[-1 - k]:
                    k += 1
                out.append((old[:len(old) - k], new[:len(new) - k]))
        return out

    def negated(self, text: str) -> list[Negation]:
        return self.negations.scan(text)

    def read(self, text: str) -> tuple[list[Negation], list[tuple[int, int, str]]]:
        """The negations in `text` and the action words an action count reads, in one pass."""
        return self.negations.read(text)

    def check_examples(self) -> Iterator[ExampleResult]:
        yield from self.actions.check_examples(self.id)
        yield from self.negations.check_examples(self.id)
        for pattern, _ in self.phrases:
            yield from pattern.check_examples(self.id)
        for pattern in self.corrections:
            yield from pattern.check_examples(self.id)


def compile_phrases(data: dict, ctx: CompileContext) -> ProhibitionPhrases | None:
    duplicate_ids(data["phrases"], "phrases", ctx)
    phrases = []
    for i, raw in enumerate(data["phrases"]):
        pattern = compile_pattern(raw, ("phrases", i), ctx, groups=("object",))
        if pattern is not None:
            phrases.append((pattern, raw["kind"]))
    actions = compile_actions(data["actions"], ctx)
    negations = compile_negations(data["negation"], actions, ctx)
    duplicate_ids(data.get("corrections", []), "corrections", ctx)
    corrections = [compile_pattern(raw, ("corrections", i), ctx, groups=("old", "new"))
                   for i, raw in enumerate(data.get("corrections", ()))]
    if any(f.severity == "error" for f in ctx.faults):
        return None
    return ProhibitionPhrases(KIND, data["id"], ctx.source.file, data["reflection"]["min_shared"],
                              tuple(phrases), actions, negations, tuple(c for c in corrections if c is not None))

