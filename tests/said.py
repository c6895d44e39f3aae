"""What the message catalogue (rules/messages.yaml) says, for tests that read a refusal's words
from the table instead of writing them out: a test that asserts a refusal's text must follow an
analyst's rewording, and must hold in the language it is said in."""
from __future__ import annotations

from typing import Any

from groundrules.core.rulebook import default


def said(message: str, lang: str | None = None, /, **params: Any) -> str:
    """The catalogue's message `message` in `lang` (default: the catalogue's first), filled with `params`."""
    catalogue = default().table("messages")
    return catalogue.messages.speaking(lang or catalogue.default)[message].render(params)


def words(name: str, lang: str | None = None) -> list[str]:
    """The fixed words of message `name` (its text between placeholders): what any saying of it holds."""
    catalogue = default().table("messages")
    template = catalogue.messages.speaking(lang or catalogue.default)[name]
    return [part for part in template.parts if isinstance(part, str) and part.strip(" ()（）：:;；,，'")]


def worded_in(exc: Any, lang: str | None = None) -> Any:
    """A refusal as its reader in `lang` reads it (core/messages.worded): a library call's refusal
    made by name (errors.refusal) is worded where it is said, so a test says it."""
    from groundrules.core.messages import speaking, worded
    catalogue = default().table("messages")
    return worded(exc, speaking(catalogue, lang or catalogue.default))
