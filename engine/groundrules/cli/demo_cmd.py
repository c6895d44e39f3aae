"""`groundrules demo`: every part's tool run on the example inputs bundled in schemas/examples/."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Callable

from .. import canonical
from ..api import Caller, Service
from .io import emit
from .session import rulebook_from

# folder under schemas/examples/ -> (tool, example file -> arguments)
DEMOS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "support_reason": ("explain_support", lambda doc: {"context": doc}),
    "locks": ("lock_message", lambda doc: {"message": doc}),
    "fold": ("fold_evidence", lambda doc: doc),
    "verify": ("verify_extraction", lambda doc: doc),
}
CALLER = Caller("demo", "agent")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run every part on the bundled example inputs",
                       description="Run each part of groundrules on the examples in schemas/examples/ "
                                   "through its tool, and print every answer in one envelope.")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    book = rulebook_from(args)
    service = Service(book)
    base = Path(book.root) / "schemas" / "examples"
    data = {}
    for part, (tool, arguments_of) in DEMOS.items():
        answers = {}
        for path in sorted((base / part).glob("*.json")):
            envelope = service.call(tool, arguments_of(json.loads(path.read_text(encoding="utf-8"))), CALLER)
            answers[path.stem] = {key: envelope[key] for key in ("ok", "data", "warnings", "error")}
        data[part] = answers
    emit(canonical.envelope(ok=True, data=data, rulebook=book.version))
    return 0
