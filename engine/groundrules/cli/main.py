"""Entry point: parse, dispatch to one part's command, turn every failure into one line.

Every line a refusal prints is worded by the message catalogue (rules/messages.yaml) in the
language of `--lang` (the catalogue's first by default) and names its stable code; argparse's own
errors too (`Parser.error`), whose detail is argparse's words, filled in as data."""
from __future__ import annotations

import argparse
import sys
from types import ModuleType
from typing import Callable, NoReturn

from ..core import codes
from ..core.errors import GroundrulesError, RulesError, StorageFailure, refusal
from .io import rules_error_lines


class Parser(argparse.ArgumentParser):
    """argparse whose own errors (an unknown option, a missing value) are refusals like the rest:
    `main` words them from the catalogue and exits 2, as argparse does. Subcommands' parsers are
    of this class too (add_subparsers makes them of the parent's class)."""

    def error(self, message: str) -> NoReturn:
        exc = refusal(codes.USAGE, "usage.arguments", problem=message, prog=self.prog)
        setattr(exc, "usage", self.format_usage())      # read back by `main`, which exits 2 for it
        raise exc


# Each part is a module with `register(subparsers)`; its commands set `func`. A part is imported
# only when one of its commands runs (or for the full help), so a command pays for its own imports.
def _demo() -> ModuleType:
    from . import demo_cmd
    return demo_cmd


def _tools() -> ModuleType:
    from . import tool_cmds
    return tool_cmds


def _rules() -> ModuleType:
    from . import rules_cmd
    return rules_cmd


def _diff() -> ModuleType:
    from . import diff_cmd
    return diff_cmd


def _report() -> ModuleType:
    from . import report_cmd
    return report_cmd


def _studio() -> ModuleType:
    from . import studio_cmd
    return studio_cmd


def _findings() -> ModuleType:
    from . import findings_cmd
    return findings_cmd


def _evidence() -> ModuleType:
    from . import evidence_cmd
    return evidence_cmd


def _decisions() -> ModuleType:
    from . import decisions_cmd
    return decisions_cmd


def _batch() -> ModuleType:
    from . import batch_cmd
    return batch_cmd


def _tokens() -> ModuleType:
    from . import tokens_cmd
    return tokens_cmd


def _sign() -> ModuleType:
    from . import sign_cmd
    return sign_cmd


# command -> the part registering it, in the order `groundrules --help` lists them
PARTS: dict[str, Callable[[], ModuleType]] = {
    "demo": _demo,
    "explain": _tools, "lock": _tools, "fold": _tools, "verify": _tools, "call": _tools,
    "lint": _rules, "test": _rules, "case": _rules, "eval": _rules,
    "diff": _diff,
    "batch": _batch,
    "report": _report, "studio": _studio,
    "serve": _findings, "findings": _findings, "tokens": _tokens, "sign": _sign,
    "evidence": _evidence,
    "decisions": _decisions, "replay": _decisions,
}


GLOBAL_OPTIONS = ("--rules", "--lang")      # the top-level options, each with a value, that may precede the command


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with `command`'s part registered, or every part when `command` is not one."""
    parser = Parser(
        prog="groundrules",
        description="The deterministic rules layer beside LLM agents.")
    parser.add_argument("--rules", metavar="DIR",
                        help="folder holding rules/, locks/ and schemas/ (default: the bundled tables)")
    parser.add_argument("--lang", metavar="LANG",
                        help="the language of answers and refusals, one of rules/messages.yaml's languages "
                             "(default: its first, zh; en for English); codes never change")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    parts = [PARTS[command]] if command in PARTS else list(dict.fromkeys(PARTS.values()))
    for part in parts:
        part().register(sub)
    return parser


def command_of(argv: list[str]) -> str | None:
    """The command `argv` names when only global options (`--rules DIR`, `--lang LANG`) stand before it; else None (help, an
    unknown option, no command), and the parser is built with every part."""
    i = 0
    while i < len(argv):
        if argv[i] in GLOBAL_OPTIONS:
            i += 2
        elif argv[i].startswith(tuple(f"{o}=" for o in GLOBAL_OPTIONS)):
            i += 1
        else:
            return None if argv[i].startswith("-") else argv[i]
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    command = command_of(argv)
    parser = build_parser(command)
    try:
        if command == "serve":                  # its settings may come from a file and the environment too
            from .config import expand
            argv = expand(argv, parser)
        args = parser.parse_args(argv)
    except GroundrulesError as exc:
        given = argparse.Namespace(rules=_value_of(argv, "--rules"), lang=_value_of(argv, "--lang"))
        sys.stderr.write(getattr(exc, "usage", ""))
        _say(given, command or "", exc)
        return 2 if hasattr(exc, "usage") else 1
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except RulesError as exc:
        from .session import catalogue_from
        heading = catalogue_from(args)
        sys.stderr.write(f"groundrules {args.command}: {exc.code}: "
                         f"{heading.code_message(exc.code) if heading else exc.code}\n{rules_error_lines(exc)}\n")
        return 3
    except StorageFailure as exc:                  # a ledger that cannot open: worded as a call's failure is
        sys.stderr.write(f"groundrules {args.command}: {exc.code}: {_storage_message(args, exc)}\n")
        return 1
    except GroundrulesError as exc:
        _say(args, args.command, exc)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


def _say(args: argparse.Namespace, command: str, exc: GroundrulesError) -> None:
    """One line on stderr: the command, the refusal's stable code (a script matches it) and its
    sentence in the language of --lang."""
    from .session import worded
    exc = worded(args, exc)
    sys.stderr.write(f"groundrules{' ' + command if command else ''}: {exc.code}: {exc.message}"
                     + (f" ({exc.hint})" if exc.hint else "") + "\n")


def _value_of(argv: list[str], option: str) -> str | None:
    """The last value `option` is given in `argv` (`--opt V` or `--opt=V`), before the parser could read it."""
    found = None
    for i, word in enumerate(argv):
        if word == option and i + 1 < len(argv):
            found = argv[i + 1]
        elif word.startswith(option + "="):
            found = word.split("=", 1)[1]
    return found


def _storage_message(args, exc: StorageFailure) -> str:
    """The role table's sentence for a store's failure (the kind alone if the tables do not load)."""
    from ..api import storage_refusal
    from ..core import messages
    from .session import rulebook_from
    try:
        book = rulebook_from(args)
        catalogue, lang = messages.of(book), getattr(args, "lang", None)
        if catalogue is not None and lang is not None and lang in catalogue.languages:
            book = book.speaking(lang)
        return storage_refusal(book, exc).message
    except GroundrulesError:
        return exc.message


if __name__ == "__main__":
    sys.exit(main())
