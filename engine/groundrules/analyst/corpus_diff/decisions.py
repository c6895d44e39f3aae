"""One decision table's cases, before and after an edit: primary, codes, rows and sentences."""
from __future__ import annotations


def compare(case: str, before: dict, after: dict) -> dict | None:
    """The readable difference of two outcomes of one case, or None when they are the same."""
    if before == after:
        return None
    old, new = _keyed(before["fired"]), _keyed(after["fired"])
    codes_before = [f["code"] for f in before["fired"]]
    codes_after = [f["code"] for f in after["fired"]]
    kept_before = [k for k in old if k in new]
    kept_after = [k for k in new if k in old]
    rows = [{"code": k[0], "before": old[k]["row"], "after": new[k]["row"]}
            for k in kept_after if old[k]["row"] != new[k]["row"]]
    outputs = []
    for key in list(old) + [k for k in new if k not in old]:
        a = old[key]["outputs"] if key in old else {}
        b = new[key]["outputs"] if key in new else {}
        for name in list(a) + [n for n in b if n not in a]:
            if a.get(name) != b.get(name):
                outputs.append({"code": key[0], "key": name, "before": a.get(name), "after": b.get(name)})
    return {
        "case": case,
        "primary": {"before": before["primary"], "after": after["primary"]},
        "codes": {"before": codes_before, "after": codes_after},
        "added": [k[0] for k in new if k not in old],
        "removed": [k[0] for k in old if k not in new],
        "reordered": kept_before != kept_after,
        "rows": rows,
        "outputs": outputs,
        "error": ({"before": before["error"], "after": after["error"]}
                  if before["error"] != after["error"] else None),
    }


def _keyed(fired: list) -> dict:
    """(code, n) -> fired row: the n-th firing of a code (a `collect` table may fire a code twice)."""
    seen: dict = {}
    out = {}
    for f in fired:
        n = seen.get(f["code"], 0)
        seen[f["code"]] = n + 1
        out[(f["code"], n)] = f
    return out
