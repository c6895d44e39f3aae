"""What kinds of edit turn one statement into another (the fact `statement_edits` of
rules/findings_material_change.yaml): each normalisation below, applied in turn to both texts until
they agree, names the edit it absorbed; what none absorbs is `other`. Which edits are material is
the table's choice (its `statement_changed` row lists the ones that are not); this module only
names them."""
from __future__ import annotations

import regex

_CJK = r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u3000-\u303f\uff00-\uffef]"
# (kind, normalisation), in the order they are tried: narrow first
NORMALISATIONS = (
    ("whitespace_between_cjk", lambda text: regex.sub(rf"(?<={_CJK})\s+(?={_CJK})", "", text)),
    ("whitespace_run", lambda text: regex.sub(r"\s+", " ", text).strip()),
)
KINDS = tuple(kind for kind, _ in NORMALISATIONS) + ("other",)


def edits(old: str, new: str) -> list[dict]:
    """[{kind}, ...]: the edits between the two texts (none when they are equal)."""
    found: list[dict] = []
    for kind, normalise in NORMALISATIONS:
        if old == new:
            return found
        a, b = normalise(old), normalise(new)
        if (a, b) != (old, new):
            found.append({"kind": kind})
        old, new = a, b
    return found if old == new else found + [{"kind": "other"}]
