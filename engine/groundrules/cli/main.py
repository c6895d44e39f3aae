"""Entry point: parse, dispatch to one part's command, turn every failure into one line."""
from __future__ import annotations

import argparse
import sys

from ..errors import GroundrulesError, RulesError
from . import demo_cmd, diff_cmd, evidence_cmd, findings_cmd, report_cmd, rules_cmd, tool_cmds
from .io import rules_error_lines

# Each part contributes a module with `register(subparsers)`; its commands set `func`.
PARTS = [demo_cmd, tool_cmds, rules_cmd, diff_cmd, report_cmd, findings_cmd, evidence_cmd]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="groundrules",
        description="The deterministic rules layer beside LLM agents.")
    parser.add_argument("--rules", metavar="DIR",
                        help="folder holding rules/, locks/ and schemas/ (default: the bundled tables)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for part in PARTS:
        part.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
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
    except GroundrulesError as exc:
        code = "" if exc.code == "USAGE" else f"{exc.code}: "     # a stable code a script can match
        sys.stderr.write(f"groundrules {args.command}: {code}{exc.message}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
