"""What every command shares: reading JSON input, printing envelopes and text, usage errors.

A command that cannot even form its input (no such file, not JSON) refuses with a GroundrulesError
whose message names the input as the user gave it; `main` prints it as one line on stderr, worded
by the message catalogue (rules/messages.yaml `usage.…`) in the language of `--lang`.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import canonical, capped, codes
from ..core.errors import GroundrulesError, RulesError, refusal

if TYPE_CHECKING:
    from ..results import Envelope


def usage_error(name: str, /, **params: Any) -> GroundrulesError:
    """A command-line mistake (a missing file, a bad option value): one line, exit 1, worded by the
    catalogue's message `name` with `params` filled in."""
    return refusal(codes.USAGE, name, **params)


def reason(exc: BaseException) -> str:
    """What an OS error says of itself without a path: its strerror, else its class's name."""
    return getattr(exc, "strerror", None) or type(exc).__name__


def read_json(name: str, cap: int = capped.DEFAULT_INPUT_BYTES) -> Any:
    """Parse FILE or '-' (stdin), at most `cap` bytes (the limits table's inputs.input_bytes);
    errors name the input as the user gave it, nothing more."""
    label = "stdin" if name == "-" else name
    try:
        raw = capped.read_stream(sys.stdin.buffer, cap) if name == "-" else capped.read_file(Path(name), cap)
    except capped.TooLarge:
        raise usage_error("usage.input_too_large", input=label, cap=capped.words(cap)) from None
    except FileNotFoundError:
        raise usage_error("usage.no_such_file", input=label) from None
    except IsADirectoryError:
        raise usage_error("usage.is_a_directory", input=label) from None
    except OSError as exc:
        raise usage_error("usage.cannot_read", input=label, reason=reason(exc)) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise usage_error("usage.not_utf8", input=label, byte=exc.start) from None
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite, parse_int=_bounded_int)
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except UnicodeEncodeError:
        raise usage_error("usage.json_surrogate", input=label) from None
    except json.JSONDecodeError as exc:      # the decoder's own words, as data
        raise usage_error("usage.json_invalid", input=f"{label}:{exc.lineno}:{exc.colno}", problem=exc.msg) from None
    except _NotJson as exc:
        raise usage_error(exc.words, input=label, value=exc.value) from None
    except RecursionError:
        raise usage_error("usage.json_deep", input=label) from None


class _NotJson(ValueError):
    """A number or constant JSON does not allow: the catalogue message naming it, and the value."""

    def __init__(self, words: str, value: str):
        super().__init__(words)
        self.words, self.value = words, value


def _no_constant(name: str) -> Any:
    raise _NotJson("usage.json_constant", name)


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _NotJson("usage.json_number_large", text[:20])
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 4000:
        raise _NotJson("usage.json_number_digits", text[:20])
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
