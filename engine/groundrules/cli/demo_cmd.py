"""`groundrules demo`: every part run on the example inputs bundled in schemas/examples/."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Callable

from .. import canonical
from ..rulebook import Rulebook
from ..errors import GroundrulesError
from ..evidence import fold
from ..locks import lock_document
from ..support_reason import contract_text, explain
from ..verification import verify_envelope
from .io import emit
from .rulebook_arg import rulebook_from


def _support_reason(ctx: Any, book: Rulebook) -> dict:
    return {"support_reason": explain(ctx, book), "contract_text": contract_text(ctx, book)}


def _locks(doc: Any, book: Rulebook) -> dict:
    return {"locks": lock_document(doc, book)}


def _fold(payload: Any, book: Rulebook) -> dict:
    try:
        return fold(payload, book)
    except GroundrulesError as exc:
        return {"error": exc.as_dict()}


def _verify(payload: Any, book: Rulebook) -> dict:
    envelope = verify_envelope(payload, book)
    return {key: envelope[key] for key in ("ok", "data", "warnings", "error")}


# part (folder under schemas/examples/) -> what the demo shows for one example input
DEMOS: dict[str, Callable[[Any, Rulebook], Any]] = {
    "support_reason": _support_reason,
    "locks": _locks,
    "fold": _fold,
    "verify": _verify,
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run every part on the bundled example inputs",
                       description="Run each part of groundrules on the examples in schemas/examples/ "
                                   "and print the results as one envelope.")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    book = rulebook_from(args)
    base = Path(book.root) / "schemas" / "examples"
    data = {}
    for part, show in DEMOS.items():
        data[part] = {path.stem: show(json.loads(path.read_text(encoding="utf-8")), book)
                      for path in sorted((base / part).glob("*.json"))}
    emit(canonical.envelope(ok=True, data=data, rulebook=book.version))
    return 0
