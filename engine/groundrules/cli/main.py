"""Entry point: parse, dispatch to one part's command, turn every failure into one line."""
from __future__ import annotations

import argparse
import sys
from types import ModuleType
from typing import Callable

from ..core import codes
from ..core.errors import GroundrulesError, RulesError, StorageFailure
from .io import rules_error_lines


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
    parser = argparse.ArgumentParser(
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
    if command == "serve":                  # its settings may come from a file and the environment too
        from .config import expand
        try:
            argv = expand(argv, parser)
        except GroundrulesError as exc:
            sys.stderr.write(f"groundrules serve: {exc.message}\n")
            return 1
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except RulesError as exc:
        sys.stderr.write(f"groundrules {args.command}: the rule tables did not load:\n"
                         f"{rules_error_lines(exc)}\n")
        return 3
    except StorageFailure as exc:                  # a ledger that cannot open: worded as a call's failure is
        sys.stderr.write(f"groundrules {args.command}: {exc.code}: {_storage_message(args, exc)}\n")
        return 1
    except GroundrulesError as exc:
        code = "" if exc.code == codes.USAGE else f"{exc.code}: "     # a stable code a script can match
        sys.stderr.write(f"groundrules {args.command}: {code}{exc.message}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


def _storage_message(args, exc: StorageFailure) -> str:
    """The role table's sentence for a store's failure (the kind alone if the tables do not load)."""
    from ..api import storage_refusal
    from .session import rulebook_from
    try:
        return storage_refusal(rulebook_from(args), exc).message
    except GroundrulesError:
        return exc.message


if __name__ == "__main__":
    sys.exit(main())
