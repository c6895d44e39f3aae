"""What every command shares: reading JSON input, printing envelopes and text, usage errors.

A command that cannot even form its input (no such file, not JSON) refuses with a GroundrulesError
whose message names the input as the user gave it; `main` prints it as one line on stderr.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import canonical, capped, codes
from ..core.errors import GroundrulesError, RulesError

if TYPE_CHECKING:
    from ..results import Envelope


def usage_error(message: str) -> GroundrulesError:
    """A command-line mistake (a missing file, a bad option value): one line, exit 1."""
    return GroundrulesError(codes.USAGE, message)


def read_json(name: str, cap: int = capped.DEFAULT_INPUT_BYTES) -> Any:
    """Parse FILE or '-' (stdin), at most `cap` bytes (the limits table's inputs.input_bytes);
    errors name the input as the user gave it, nothing more."""
    label = "stdin" if name == "-" else name
    try:
        raw = capped.read_stream(sys.stdin.buffer, cap) if name == "-" else capped.read_file(Path(name), cap)
    except capped.TooLarge:
        raise usage_error(f"{label}: larger than the input limit of {capped.words(cap)} (rules/limits.yaml "
                          "inputs.input_bytes)") from None
    except FileNotFoundError:
        raise usage_error(f"{label}: no such file") from None
    except IsADirectoryError:
        raise usage_error(f"{label}: is a directory") from None
    except OSError as exc:
        raise usage_error(f"{label}: cannot read ({exc.strerror or type(exc).__name__})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise usage_error(f"{label}: not UTF-8 (byte {exc.start})") from None
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite, parse_int=_bounded_int)
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except UnicodeEncodeError:
        raise usage_error(f"{label}: invalid JSON: a string holds a lone surrogate") from None
    except json.JSONDecodeError as exc:
        raise usage_error(f"{label}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}") from None
    except ValueError as exc:
        raise usage_error(f"{label}: invalid JSON: {exc}") from None
    except RecursionError:
        raise usage_error(f"{label}: invalid JSON: nested too deeply") from None


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


def emit_envelope(envelope: Envelope) -> int:
    """Print a tool's envelope; the exit status is 0 when it is ok, else 1."""
    emit(envelope)
    return 0 if envelope["ok"] else 1
