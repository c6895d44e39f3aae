"""Action words (`actions` in rules/prohibition_phrases.yaml): families of words for one kind of
action (修改 / 修 / 改 / fix / hotfix are `change`), found in the input, in a negation's scope, in
an intent's action name and in a candidate's prohibitions alike."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator

from ..core.examples import ExampleResult
from .patterns import check_examples, duplicate_ids
from .words import Lexicon, is_latin, lexicon

if TYPE_CHECKING:
    from ..core.tables import CompileContext


@dataclass(frozen=True)
class Family:
    id: str
    words: Lexicon
    examples: tuple
    where: tuple


@dataclass(frozen=True)
class ActionWords:
    words: Lexicon             # every action word of every family
    families: tuple            # Family, in table order
    family_of: dict            # a word (a Latin form in lower case) -> family id
    every: tuple               # every word and form, for lexicons that find them with other lists
    excepts: tuple
    dual: frozenset = frozenset()   # words of `also_cues` families, which may be cue words too
    base_of: dict = field(default_factory=dict)   # a Latin form in lower case -> the word the family lists (rebooting -> reboot)

    def find(self, text: str) -> list[tuple[int, int, str, str]]:
        """Every action word in `text`, none overlapping: (start, end, word as typed, family)."""
        return [(s, e, text[s:e], self.family(w)) for s, e, w in self.words.find(text)]

    def family(self, word: str) -> str:
        return self.family_of.get(word) or self.family_of.get(word.lower().replace("’", "'"), "")

    def base(self, word: str) -> str:
        """The word a family lists for `word` as typed (rebooting: reboot); CJK words are their own."""
        return self.base_of.get(word.lower(), word)

    def head_word(self, name: str) -> str | None:
        """The first action word of an intent's action name, as its family lists it."""
        found = self.find(name)
        return self.base(found[0][2]) if found else None

    def head(self, name: str) -> str | None:
        """The family of the first action word of an intent's action name (analyze_fix_options is
        an analysis), or None when it holds none."""
        found = self.find(name)
        return found[0][3] if found else None

    def check_examples(self, table_id: str) -> Iterator[ExampleResult]:
        for f in self.families:
            yield from check_examples(f"{table_id}:{f.id}", f.examples, f.where, _found_by(f.words))


def _found_by(words: Lexicon) -> Callable[[str], list[str]]:
    """What `words` finds in a text, as the texts it covers."""
    return lambda text: [text[s:e] for s, e, _ in words.find(text)]


def forms(word: str, english: dict, excepted: frozenset = frozenset()) -> list[str]:
    """A Latin word and its inflections, as the table's `english` rules make them, each also after
    every prefix (deploy -> redeploy, redeployed); a form the family lists under `except` is none
    (booking names a thing; re + add is not read). Over-generating a non-word such as 'fixs' is
    harmless: nobody types it."""
    if not is_latin(word) or " " in word:
        return [word]
    out = [word] + [word + s for s in english.get("suffixes", ())]
    out += [word + word[-1] + s for s in english.get("double_final", ())]
    if word.endswith("e"):
        out += [word[:-1] + s for s in english.get("drop_final_e", ())]
    if word.endswith("y"):
        out += [word[:-1] + "i" + s for s in english.get("final_y_to_i", ())]
    out += [p + f for p in english.get("prefixes", ()) for f in out]
    return [f for f in out if f.lower() not in excepted]


def nominal_excepts(data: dict) -> list[str]:
    """`nominal`: action words that double as nouns (通知, 预约), each with every head after which it
    names a thing (通知草稿, 预约名单): longer words that are not the action."""
    nominal = data.get("nominal") or {}
    return [w + h for w in nominal.get("words", ()) for h in nominal.get("heads", ())]


def separated(word: str, data: dict) -> list[str]:
    """A word `separable` lists, with each infix after its first character (回个电话, 退了款), else none."""
    sep = data.get("separable") or {}
    return [word[0] + i + word[1:] for i in sep.get("infixes", ())] if word in sep.get("words", ()) else []


def compile_actions(data: dict, ctx: CompileContext) -> ActionWords:
    english = data.get("english", {})
    duplicate_ids(data["families"], ("actions", "families"), ctx)
    family_of: dict = {}
    base_of: dict = {}
    nominal = nominal_excepts(data)
    families, every, excepts, dual = [], [], list(nominal), []
    for i, raw in enumerate(data["families"]):
        where = ("actions", "families", i)
        words = []
        excepted = frozenset(w.lower() for w in raw.get("except", ()) if is_latin(w))
        for j, word in enumerate(raw["words"]):
            for form in forms(word, english, excepted) + separated(word, data):
                key = form.lower() if is_latin(form) else form
                if family_of.get(key, raw["id"]) != raw["id"]:
                    ctx.fault("duplicate-word", f"'{form}' is already a word of family '{family_of[key]}'",
                              where + ("words", j), "a word belongs to one family")
                family_of.setdefault(key, raw["id"])
                if is_latin(form):
                    base_of.setdefault(key, word.lower())
                words.append(form)
        every += words
        if raw.get("also_cues"):
            dual += words
        cjk_excepts = [w for w in raw.get("except", ()) if not is_latin(w)]
        excepts += cjk_excepts
        families.append(Family(raw["id"], lexicon(words, cjk_excepts + nominal, parts=True),
                               tuple(raw["examples"]), where))
    return ActionWords(lexicon(every, excepts, parts=True), tuple(families), family_of, tuple(every),
                       tuple(excepts), frozenset(dual), base_of)
