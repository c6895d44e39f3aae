"""`groundrules lint --format`: the same problems for a program to read.

`json` is the envelope with the sorted problem list; `sarif` is a SARIF 2.1.0 log, which code
review tools and CI systems show inline; `github` prints GitHub Actions workflow commands
(`::error file=…,line=…,col=…::…`), which the Actions runner turns into annotations. Every format
prints the problems lint returns, in lint's order, and nothing that varies between runs (no clock,
no absolute path), so the same tables give the same bytes. `text` stays the command's own.
"""
from __future__ import annotations

import dataclasses
import os
from importlib import metadata
from pathlib import Path
from typing import Callable, Iterable
from urllib.parse import quote

from ..core import canonical
from ..core.errors import Problem

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SRCROOT = "%SRCROOT%"      # SARIF's usual name for "the checkout the paths are relative to"
SARIF_LEVELS = {"error": "error", "warning": "warning"}        # any other severity is a note
GITHUB_COMMANDS = {"error": "error", "warning": "warning"}     # any other severity is a notice


def json_text(problems: list[Problem], failed: bool) -> str:
    """The envelope: ok unless an error was found; data.problems in lint's (sorted) order."""
    errors = sum(p.severity == "error" for p in problems)
    data = {"problems": [p.as_dict() for p in problems], "errors": errors, "warnings": len(problems) - errors}
    return canonical.dumps(canonical.envelope(ok=not failed, data=data)) + "\n"


def sarif_text(problems: list[Problem], failed: bool) -> str:
    """One run of one tool; a rule per lint code (sorted), a result per problem. Columns count
    code points, as the YAML reader does."""
    codes = sorted({p.code for p in problems})
    index = {code: i for i, code in enumerate(codes)}
    results = [_sarif_result(p, index[p.code]) for p in problems]
    driver = {"name": "groundrules", "version": _version(), "rules": [{"id": code} for code in codes]}
    log = {"$schema": SARIF_SCHEMA, "version": "2.1.0",
           "runs": [{"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results}]}
    return canonical.dumps(log) + "\n"


def _sarif_result(p: Problem, rule_index: int) -> dict:
    artifact = {"uri": Path(p.file).as_uri()} if os.path.isabs(p.file) else {"uri": quote(p.file), "uriBaseId": SRCROOT}
    location: dict = {"physicalLocation": {"artifactLocation": artifact}}
    if p.line >= 1:
        region = {"startLine": p.line}
        if p.column >= 1:
            region["startColumn"] = p.column
        location["physicalLocation"]["region"] = region
    if p.key:
        location["logicalLocations"] = [{"fullyQualifiedName": p.key, "kind": "member"}]
    result = {"ruleId": p.code, "ruleIndex": rule_index, "level": SARIF_LEVELS.get(p.severity, "note"),
              "message": {"text": _sentence(p)}, "locations": [location]}
    if p.hint:
        result["properties"] = {"hint": p.hint}
    return result


def github_text(problems: list[Problem], failed: bool) -> str:
    """One workflow command per problem, then the summary line the text format ends with."""
    lines = []
    for p in problems:
        props = [f"file={_property(p.file)}"]
        if p.line >= 1:
            props.append(f"line={p.line}")
            if p.column >= 1:
                props.append(f"col={p.column}")
        props.append(f"title={_property(p.code)}")
        lines.append(f"::{GITHUB_COMMANDS.get(p.severity, 'notice')} {','.join(props)}::{_data(_sentence(p))}")
    errors = sum(p.severity == "error" for p in problems)
    lines.append(f"lint: {errors} error(s), {len(problems) - errors} warning(s)")
    return "\n".join(lines) + "\n"


def _sentence(p: Problem) -> str:
    """The message, with the key it is at and the hint, as the text format words them."""
    text = p.message
    if p.key:
        text += f" [at {p.key}]"
    if p.hint:
        text += f" (hint: {p.hint})"
    return text


def _data(text: str) -> str:
    """A workflow command's message: % CR LF escaped (the runner's escapeData)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """A workflow command's property value: also : and , escaped (the runner's escapeProperty)."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _version() -> str:
    try:
        return metadata.version("groundrules")
    except metadata.PackageNotFoundError:      # run from a source tree that was never installed
        return "0"


FORMATS: dict[str, Callable[[list[Problem], bool], str]] = {
    "json": json_text, "sarif": sarif_text, "github": github_text,
}
NAMES: tuple = ("text", *FORMATS)


def render(name: str, problems: Iterable[Problem], failed: bool, root: Path | None = None) -> str:
    """The problems in format `name` (one of FORMATS). Files lint found under the tables' folder
    `root` are named relative to it; when it lies below the current directory they are named from
    there instead, as a CI checkout or an editor's workspace names them. Without `root` (files
    given by the user) they keep the names they were given."""
    prefix = _prefix(root)
    return FORMATS[name]([_moved(p, prefix) for p in problems], failed)


def _prefix(root: Path | None) -> str:
    if root is None:
        return ""
    try:
        rel = os.path.relpath(Path(root).resolve(), Path.cwd().resolve())
    except ValueError:                 # another drive: the tables are not below here
        return ""
    return "" if rel == "." or rel.split(os.sep)[0] == ".." else Path(rel).as_posix() + "/"


def _moved(p: Problem, prefix: str) -> Problem:
    if not prefix or os.path.isabs(p.file):
        return p
    return dataclasses.replace(p, file=prefix + p.file)
