"""Which evidence links count as independent support (rules/independent_support.yaml): the
transition guards and the warnings table read `independent`, never a writer or a method themselves,
so an analyst decides it in one table. The table reads only what is known of a link, never what a
caller declares: the writer the registry stamped (its role, how it was authenticated, and
`writer.signer`, a signer a signature was verified against), the method, and what groundrules
checked itself (`source_check`). The free-text source_kind is not among the facts, so no row can
read it."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:                      # rulebook imports this part's compilers
    from ..core.rulebook import Rulebook

SUPPORT_TABLE = "independent_support"
FACTS = ("relation", "method", "writer", "source_check")


class Judge:
    """rules/independent_support.yaml's verdicts for one call: a call weighs the same links several
    times (a guard's basis and links, its warnings, its answer), and a link's facts are judged once."""

    def __init__(self, book: Rulebook):
        self._book = book
        self._seen: dict[str, dict] = {}

    def __call__(self, links: list[dict]) -> list[dict]:
        """Each evidence link with `independent` (may it stand behind `supported`?) and `support`,
        the answer's word on it: {independent, code, label} of the row that decided."""
        return [dict(link, independent=support["independent"], support=support)
                for link in links for support in (self.support_of(link),)]

    def support_of(self, link: dict) -> dict:
        """{independent, code, label} for one link (what get_finding and the writes show per link)."""
        facts = {k: link[k] for k in FACTS if k in link}
        key = repr(facts)
        if key not in self._seen:
            table = self._book.table(SUPPORT_TABLE)
            code = table.evaluate(facts).fired[0].code
            spec = table.codes.get(code, {})
            self._seen[key] = {"independent": bool(spec.get("independent")), "code": code,
                               "label": spec.get("label", code)}
        return dict(self._seen[key])


def shown(link: dict) -> dict:
    """A judged link as answers list it: which link (its evidence_id, none for evidence a refused
    call never wrote: such links are listed in the order of the items given), whether it is
    independent support and the row that said so, and (for links timed against the finding's
    demotions) whether it came after the last one."""
    return dict(**({"evidence_id": link["evidence_id"]} if link.get("evidence_id") else {}),
                relation=link["relation"], method=link["method"], **link["support"],
                **({"after_demotion": link["after_demotion"]} if "after_demotion" in link else {}))
