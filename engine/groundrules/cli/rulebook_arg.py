"""The rulebook a command runs on: the bundled one, or the folder given with --rules."""
from __future__ import annotations

import argparse

from .. import rulebook
from ..rulebook import Rulebook


def rulebook_from(args: argparse.Namespace) -> Rulebook:
    root = getattr(args, "rules", None)
    return rulebook.load(root) if root else rulebook.default()
