"""The one error root, and the located problems of rule tables.

Every refusal any part of groundrules gives is a `GroundrulesError`: a stable code a host branches
on, one readable sentence that never names an internal path, and optionally the argument `field`
at fault, a `hint` with the fix, and JSON-safe details. A rule set that does not compile is one
too (`RulesError`, code RULES_INVALID), carrying every `Problem` of the edit at file:line:col, so
an analyst sees all the mistakes of an edit in one run. `as_error` is the one place that turns a
refusal into the envelope's `error` object.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from . import codes

# An echoed piece of caller input is cut to this many characters (README "Limits"), and a list of
# them to this many items.
ECHO_CHARS = 80
ECHO_ITEMS = 20


class GroundrulesError(Exception):
    """A refusal with a stable code; `details` are JSON-safe and carry no internal path."""

    # the catalogue message that words this refusal, and the details filled into it (`refusal`):
    # worded where it is said, in the language of whoever reads it (core/messages.worded)
    words: tuple[str | None, dict] | None = None

    def __init__(self, code: str, message: str, *, field: str | None = None, hint: str | None = None,
                 **details: Any):
        self.code = code
        self.message = message
        self.field = field
        self.hint = hint
        self.details = details
        super().__init__(f"{code}: {message}")

    def as_dict(self) -> dict:
        """The envelope's `error` object: code, message, then field / hint when set, then details."""
        out: dict = {"code": self.code, "message": self.message}
        if self.field is not None:
            out["field"] = self.field
        if self.hint:
            out["hint"] = self.hint
        out.update(self.details)
        return out


def refusal(code: str, name: str | None = None, /, *, field: str | None = None, hint: str | None = None,
            details: dict | None = None, **params: Any) -> GroundrulesError:
    """A refusal the message catalogue (rules/messages.yaml) words when it is said, in the language
    of its reader: `name` is the catalogue's message (None: the code's own sentence), `params` the
    values filled into its placeholders (data, never English glued on), `details` the error's
    JSON-safe details. Until it is worded (a library call no Service or command line words) its
    message is the message's name and its parameters as JSON: data, in no language."""
    unworded = name or code
    if params:
        import json
        unworded += ": " + json.dumps(params, ensure_ascii=False, sort_keys=True, default=str)
    exc = GroundrulesError(code, unworded, field=field, hint=hint, **(details or {}))
    exc.words = (name, params)
    return exc


class StorageFailure(GroundrulesError):
    """A store could not do what was asked (disk full, database locked or corrupt, connection lost).
    `kind` names the failure (SQLite's error name, say), never a path or the driver's message. The
    sentence a caller reads is the role table's `storage_error` (api.storage_refusal), the same for
    every ledger; until it is worded there the message is the kind alone."""

    def __init__(self, kind: str):
        self.kind = kind
        super().__init__(codes.STORAGE_ERROR, kind)


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with a table, pinned to file:line:col."""

    file: str
    line: int
    column: int
    code: str
    message: str
    key: str = ""
    hint: str = ""
    severity: str = field(default="error", compare=False)

    def __str__(self) -> str:
        text = f"{self.file}:{self.line}:{self.column}: {self.code}: {self.message}"
        if self.key:
            text += f" [at {self.key}]"
        if self.hint:
            text += f" (hint: {self.hint})"
        return text

    def as_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "column": self.column, "code": self.code,
                "message": self.message, "key": self.key, "hint": self.hint,
                "severity": self.severity}


class RulesError(GroundrulesError):
    """A rule set that did not compile; nothing of it may be used."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems = tuple(sorted(set(problems)))   # one mistake can break several schema rules
        text = "\n".join(str(p) for p in self.problems) or "rule tables did not load"
        super().__init__(codes.RULES_INVALID, text, problems=[p.as_dict() for p in self.problems])


@dataclass(frozen=True)
class Fault:
    """A problem found by a compiler, located by key path only; the loader adds file:line:col."""

    code: str
    message: str
    path: tuple = ()
    hint: str = ""
    severity: str = "error"
    also: tuple = ()        # another key path the problem involves (a duplicate's first use): named by line


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """A one-sentence hint naming the closest valid choice, or '' when none is close (the words an
    analyst reads in a load error; a tool's answer words it from the message catalogue)."""
    close = closest(word, choices)
    return f"did you mean '{close}'?" if close else ""


def closest(word: object, choices: Iterable[str]) -> str:
    """The valid choice closest to `word`, or '' when none is close. Words far longer than any
    choice cannot be close, so hostile input costs no search."""
    if not isinstance(word, str):
        return ""
    options = sorted(set(choices))
    longest = max((len(c) for c in options), default=0)
    if not options or len(word) > 2 * longest + 8:
        return ""
    import difflib                    # only a hint needs it
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return close[0] if close else ""


def echo(value: object, limit: int = ECHO_CHARS) -> str:
    """Caller input as an error message may repeat it: at most `limit` characters, … when cut."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


# Details the engine writes itself, from positions and its own words (a contract problem, a path
# of indices and schema keys): they bound their own echoes, and are repeated whole.
COMPOSED = ("at", "problem")


def capped_details(details: dict) -> dict:
    """An error's details (or a message's parameters) with every one but the COMPOSED cut to an echo."""
    return {k: v if k in COMPOSED else capped(v) for k, v in details.items()}


def capped(value: Any) -> Any:
    """A JSON value as an error may repeat it: every string cut as `echo` cuts it, every list to
    ECHO_ITEMS items (a last "…" says more were left out), numbers and the rest as they are."""
    if isinstance(value, str):
        return echo(value)
    if isinstance(value, list):
        return [capped(v) for v in value[:ECHO_ITEMS]] + (["…"] if len(value) > ECHO_ITEMS else [])
    if isinstance(value, dict):
        return {echo(k) if isinstance(k, str) else k: capped(v) for k, v in list(value.items())[:ECHO_ITEMS]}
    return value


_IDENTIFIER = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


def shown(key: object) -> str:
    """A caller's key as an error may show it: identifiers as they are, anything else (a path, an
    excerpt pasted as a key) as '…'."""
    text = str(key)
    return text if _IDENTIFIER.fullmatch(text) else "…"


def as_error(exc: BaseException) -> dict:
    """The envelope `error` of any exception: a refusal's own dict, or a bare INTERNAL_ERROR that
    says what kind of failure it was and nothing of its text (it may hold a path)."""
    if isinstance(exc, GroundrulesError):
        return exc.as_dict()
    return {"code": codes.INTERNAL_ERROR, "message": f"internal failure ({type(exc).__name__})"}
