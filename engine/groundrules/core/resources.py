"""Where the bundled tables live: inside the wheel (`_data/`) or, in a checkout, the repo root."""
from __future__ import annotations

from pathlib import Path

from . import codes
from .errors import GroundrulesError

TABLE_DIRS = ("rules", "locks")


def data_root() -> Path:
    """The folder holding rules/, locks/ and schemas/ that ship with this installation."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / "_data", package.parent.parent):
        if (candidate / "rules").is_dir() and (candidate / "schemas").is_dir():
            return candidate
    raise GroundrulesError(codes.RULEBOOK_MISSING, "the bundled rule tables are not installed")
