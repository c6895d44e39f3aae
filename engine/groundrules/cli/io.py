"""What every command shares: reading JSON input, printing envelopes, one-line errors."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Callable

from .. import canonical
from ..errors import GroundrulesError, RulesError


class CliError(Exception):
    """A one-line message for stderr and an exit code; never a traceback."""

    def __init__(self, message: str, exit_code: int = 1):
        super().__init__(message)
        self.exit_code = exit_code


def read_json(name: str) -> Any:
    """Parse FILE or '-' (stdin); errors name the input as the user gave it, nothing more."""
    label = "stdin" if name == "-" else name
    try:
        raw = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except FileNotFoundError:
        raise CliError(f"{label}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{label}: is a directory") from None
    except OSError as exc:
        raise CliError(f"{label}: cannot read ({exc.strerror or type(exc).__name__})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CliError(f"{label}: not UTF-8 (byte {exc.start})") from None
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite, parse_int=_bounded_int)
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except UnicodeEncodeError:
        raise CliError(f"{label}: invalid JSON: a string holds a lone surrogate") from None
    except json.JSONDecodeError as exc:
        raise CliError(f"{label}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except ValueError as exc:
        raise CliError(f"{label}: invalid JSON: {exc}") from None
    except RecursionError:
        raise CliError(f"{label}: invalid JSON: nested too deeply") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:20]} is too large")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 4000:
        raise ValueError("a number has too many digits")
    return int(text)


def emit(obj: Any) -> None:
    sys.stdout.write(canonical.dumps(obj) + "\n")


def emit_text(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def rules_error_lines(error: RulesError) -> str:
    return "\n".join(str(p) for p in error.problems)


def refusal(error: GroundrulesError, rulebook: str | None) -> dict:
    return canonical.envelope(ok=False, error=error.as_dict(), rulebook=rulebook)


def answer(compute: Callable[[], Any], rulebook: str) -> int:
    """Print the envelope of one library call: its data (exit 0), or its refusal (exit 1)."""
    try:
        data = compute()
    except GroundrulesError as exc:
        emit(refusal(exc, rulebook))
        return 1
    emit(canonical.envelope(ok=True, data=data, rulebook=rulebook))
    return 0
