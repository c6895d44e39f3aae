"""Which evidence links count as independent support (rules/independent_support.yaml): the
transition guards and the warnings table read `independent`, never a source kind themselves, so
an analyst decides it in one table."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:                      # rulebook imports this part's compilers
    from ..core.rulebook import Rulebook

SUPPORT_TABLE = "independent_support"


def judged(book: Rulebook, links: list[dict]) -> list[dict]:
    """Each evidence link with `independent`: whether rules/independent_support.yaml counts its
    source_kind and method as independent support (a model's thought or a user's word never,
    whatever method it is filed under)."""
    table = book.table(SUPPORT_TABLE)
    out = []
    for link in links:
        code = table.evaluate({k: link[k] for k in ("source_kind", "method", "relation") if k in link}).fired[0].code
        out.append(dict(link, independent=bool(table.codes.get(code, {}).get("independent"))))
    return out
