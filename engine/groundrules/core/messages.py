"""Messages in every language the catalogue declares, and the `message_catalogue` kind.

A table's message is written once per language (`{zh: …, en: …}`), side by side, so an analyst
edits both in one place; every language of a message must use the same placeholders (one a
language adds, or leaves out, is a load error at its line). A compiled table holds its messages as
one `Messages` mapping bound to a language: `messages[name]` is the template in that language, so
the code that renders a refusal never names a language. `Rulebook.speaking(lang)` binds every
table's messages to `lang` at once: the registry answers a call in the language it asks for by
deciding with that view. Codes stay the same in every language; only the sentences change.

The catalogue (`rules/messages.yaml`, kind `message_catalogue`) declares the languages, the
default one (the first), a sentence for every error code of core/codes.py (a load error names a
code without one), and the messages no other table owns (the registry's words for what is wrong
with an argument).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import TYPE_CHECKING, Any, Iterator

from . import codes as error_codes
from .errors import Fault, GroundrulesError, did_you_mean, refusal
from .templates import Template, compile_template

if TYPE_CHECKING:
    from .tables import CompileContext

TABLE = "messages"


class Messages(Mapping):
    """Message name -> its template in the bound language (None: the first language written)."""

    def __init__(self, by_name: dict[str, dict[str, Template]], lang: str | None = None):
        self.by_name = by_name
        self.lang = lang

    def __getitem__(self, name: str) -> Template:
        texts = self.by_name[name]
        if self.lang is not None and self.lang in texts:
            return texts[self.lang]
        return next(iter(texts.values()))

    def __iter__(self) -> Iterator[str]:
        return iter(self.by_name)

    def __len__(self) -> int:
        return len(self.by_name)

    def speaking(self, lang: str) -> "Messages":
        return Messages(self.by_name, lang)

    def languages(self) -> tuple:
        return tuple(next(iter(self.by_name.values()), {}))


def compile_localized(text: Any, where: tuple, faults: list[Fault], **template_options: Any
                      ) -> dict[str, Template] | None:
    """One message in every language it is written in: each compiled at its place, every language
    holding the placeholders of the first (an unknown or a missing one is a fault at its line)."""
    if not isinstance(text, dict) or not text:
        faults.append(Fault("bad-message", "a message is one text per language: {zh: …, en: …}", where,
                            "write the message under each language the catalogue (rules/messages.yaml) declares"))
        return None
    before = len(faults)
    out = {}
    for lang, words in text.items():
        template = compile_template(words, where + (lang,), faults, **template_options)
        if template is not None:
            out[lang] = template
    if len(faults) != before:
        return None
    first_lang, first = next(iter(out.items()))
    reference = set(first.names)
    for lang, template in list(out.items())[1:]:
        names = set(template.names)
        for name in sorted(names - reference):
            faults.append(Fault("unknown-placeholder", f"the {lang} text names {{{name}}}, which the {first_lang} "
                                f"text does not: no refusal gives it", where + (lang,),
                                did_you_mean(name, reference) or f"placeholders: {', '.join(sorted(reference)) or 'none'}"))
        for name in sorted(reference - names):
            faults.append(Fault("missing-placeholder", f"the {lang} text leaves out {{{name}}}, which the "
                                f"{first_lang} text names", where + (lang,),
                                "every language says the same thing: use the same placeholders"))
    return out if len(faults) == before else None


def compile_messages(texts: dict, faults: list[Fault], where: tuple = ("messages",)) -> Messages:
    """A table's `messages` section, each message in every language (a broken one is a fault and
    left out)."""
    out = {}
    for name, text in texts.items():
        localized = compile_localized(text, where + (name,), faults)
        if localized is not None:
            out[name] = localized
    return Messages(out)


def speaking(table: Any, lang: str) -> Any:
    """`table` with every Messages it holds bound to `lang` (a table without messages as it is)."""
    method = getattr(table, "speaking", None)
    if method is not None:
        return method(lang)
    if not is_dataclass(table) or isinstance(table, type):
        return table
    changed = {f.name: getattr(table, f.name).speaking(lang) for f in fields(table)
               if isinstance(getattr(table, f.name), Messages)}
    return replace(table, **changed) if changed else table


@dataclass(frozen=True)
class MessageCatalogue:
    """The languages (the first is the default), every code's sentence and the named messages."""

    kind: str
    id: str
    file: str
    languages: tuple
    codes: Messages
    messages: Messages

    @property
    def default(self) -> str:
        return self.languages[0]

    def message(self, name: str, /, **params: Any) -> str:
        return self.messages[name].render(params)

    def code_message(self, code: str, /, **params: Any) -> str:
        return self.codes[code].render(params)


def all_codes() -> list[str]:
    """Every error code core/codes.py names."""
    return sorted(v for k, v in vars(error_codes).items() if k.isupper() and isinstance(v, str))


def compile_catalogue(data: dict, ctx: CompileContext) -> MessageCatalogue | None:
    before = len(ctx.faults)
    languages = tuple(data["languages"])
    if len(set(languages)) != len(languages):
        ctx.fault("duplicate-language", "a language is listed twice", ("languages",))
    known = all_codes()
    for code in data["codes"]:
        if code not in known:
            ctx.fault("unknown-code", f"'{code}' is not an error code of groundrules (core/codes.py)", ("codes", code),
                      did_you_mean(code, known))
    for code in known:
        if code not in data["codes"]:
            ctx.fault("missing-code", f"error code {code} has no message", ("codes",),
                      f"add '{code}: {{{', '.join(f'{lang}: …' for lang in languages)}}}'")
    codes = compile_messages(data["codes"], ctx.faults, ("codes",))
    messages = compile_messages(data.get("messages", {}), ctx.faults)
    for section, compiled in (("codes", codes), ("messages", messages)):
        for name, texts in compiled.by_name.items():
            if tuple(texts) != languages:
                ctx.fault("languages-differ", f"{section}.{name} is written in {', '.join(texts)}, not in the "
                          f"catalogue's languages {', '.join(languages)} (in that order)", (section, name),
                          "write one text per declared language, the default first")
    if any(f.severity == "error" for f in ctx.faults[before:]):
        return None
    return MessageCatalogue("message_catalogue", data["id"], ctx.source.file, languages, codes, messages)


def worded(exc: GroundrulesError, catalogue: MessageCatalogue | None) -> GroundrulesError:
    """`exc` in the language `catalogue` speaks: a refusal made by `errors.refusal` gets its message
    (and a hint named `hint.…` its hint) from the catalogue; any other refusal is already worded."""
    if exc.words is None or catalogue is None:
        return exc
    name, params = exc.words             # caller input among them was cut where the refusal was made (errors.echo)
    message = catalogue.message(name, **params) if name else catalogue.code_message(exc.code, **params)
    hint = exc.hint
    if hint and hint in catalogue.messages:
        hint = catalogue.message(hint, **params)
    return GroundrulesError(exc.code, message, field=exc.field, hint=hint, **exc.details)


def refused(book: Any, code: str, name: str | None = None, /, *, field: str | None = None,
            hint: str | None = None, **params: Any) -> GroundrulesError:
    """`errors.refusal` worded at once by `book`'s catalogue, in the language the book speaks (a
    library call's refusal, which no Service words later)."""
    return worded(refusal(code, name, field=field, hint=hint, **params), of(book))


def say(book: Any, name: str, /, **params: Any) -> str:
    """The catalogue's message `name` in the language `book` speaks; a rulebook without a catalogue
    (a host's lock tables alone) names the message instead of saying it."""
    catalogue = of(book)
    return catalogue.message(name, **params) if catalogue is not None else name


def of(book: Any) -> MessageCatalogue | None:
    """The rulebook's message catalogue, if it has one."""
    return book.tables.get(TABLE) if TABLE in book.tables else None
