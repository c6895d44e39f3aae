"""The two error roots: problems in rule tables, and refusals of bad input.

Table problems are collected, never raised one by one, so an analyst sees every mistake of an
edit in one run. Input errors carry a stable code that hosts branch on; their messages never
name internal paths.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Iterable


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


class RulesError(Exception):
    """A rule set that did not compile; nothing of it may be used."""

    def __init__(self, problems: Iterable[Problem]):
        self.problems = tuple(sorted(set(problems)))   # one mistake can break several schema rules
        super().__init__("\n".join(str(p) for p in self.problems) or "rule tables did not load")


class GroundrulesError(Exception):
    """A refusal with a stable code; `details` is JSON-safe and carries no internal path."""

    def __init__(self, code: str, message: str, **details):
        self.code = code
        self.message = message
        self.details = details
        super().__init__(f"{code}: {message}")

    def as_dict(self) -> dict:
        return {"code": self.code, "message": self.message, **self.details}


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """A one-sentence hint naming the closest valid choice, or '' when none is close."""
    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word, sorted(set(choices)), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else ""


@dataclass(frozen=True)
class Fault:
    """A problem found by a compiler, located by key path only; the loader adds file:line:col."""

    code: str
    message: str
    path: tuple = ()
    hint: str = ""
    severity: str = "error"
