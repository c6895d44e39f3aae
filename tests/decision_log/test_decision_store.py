"""The decision log's statements are written once (store/decisions_sql.py) and run on both
backends: the same rows give the same answers to every operation the log calls, on SQLite and on
PostgreSQL, including the dialect's corners (a scan's filters across page boundaries, a purge
whose cutoff table names no tool, erasure)."""
from __future__ import annotations

from groundrules.store import open_decision_store
from groundrules.store.decisions_sql import INSERTED

TOOLS = ("fold", "lock_message", "log_finding")


def rows(n: int) -> list[dict]:
    out = []
    for i in range(n):
        row = {c: None for c in INSERTED}
        row.update(project=f"p{i % 2}", id=f"D{i:03d}", at=f"2030-01-{1 + i % 9:02d}T00:00:00+00:00",
                   principal="tester", role="agent", tool=TOOLS[i % 3], rulebook="rb", ok=int(i % 4 != 0),
                   error_code=None if i % 4 else "X", duration_us=i, kept="all", dropped="[]",
                   key_id="k1", sealed=bytes([i % 256]) * 4)
        out.append(row)
    return out


def plain(found) -> list[dict]:
    """Rows as the log reads them (ok is 0/1 on SQLite, a boolean on PostgreSQL)."""
    return [dict(r, ok=bool(r["ok"])) for r in found]


def answers(store) -> dict:
    store.append(rows(30))
    out = {
        "page": plain(store.page("p0", limit=5)),
        "page_filtered": plain(store.page("p1", tool="fold", ok=True, since="2030-01-03T00:00:00+00:00")),
        "page_before": plain(store.page("p0", before=store.seq_of("p0", "D010"), limit=3)),
        "seq_of_missing": store.seq_of("p0", "nope"),
        "pages": [plain(p) for p in store.pages(projects=["p0"], tools=["fold", "log_finding"],
                                                since="2030-01-02T00:00:00+00:00", size=3)],
        "pages_ids": [plain(p) for p in store.pages(ids=["D001", "D002", "D029"], size=2)],
        "pages_none": list(store.pages(tools=[], size=3)),
    }
    store.erase("p1", ["D001", "D003", "D004"], "R9")          # D004 is p0's: left alone
    out["erased"] = [(r["id"], r["kept"], r["sealed"], r["erased_by"]) for r in store.scan(ids=["D001", "D003", "D004"])]
    out["purged_named"] = store.purge({"fold": "2030-01-04T00:00:00+00:00"}, "2030-01-02T00:00:00+00:00")
    out["purged_default_only"] = store.purge({}, "2030-01-06T00:00:00+00:00")
    out["left"] = [r["id"] for r in store.scan()]
    return out


def test_both_backends_answer_the_same(db, tmp_path):
    on_db = open_decision_store(db)
    reference = open_decision_store(tmp_path / "reference.db")
    try:
        got, expected = answers(on_db), answers(reference)
    finally:
        on_db.close()
        reference.close()
    assert got == expected
    # and the answers are what the rows say, not merely equal
    every = rows(30)
    assert [r["id"] for r in got["page"]] == [r["id"] for r in reversed(every) if r["project"] == "p0"][:5]
    assert all(r["project"] == "p0" and r["tool"] in ("fold", "log_finding") and r["at"] >= "2030-01-02"
               for page in got["pages"] for r in page)
    assert [len(p) for p in got["pages"]][:-1] == [3] * (len(got["pages"]) - 1)
    assert [r["id"] for p in got["pages_ids"] for r in p] == ["D001", "D002", "D029"]
    assert got["pages_none"] == []
    assert got["erased"] == [("D001", "erased", None, "R9"), ("D003", "erased", None, "R9"),
                             ("D004", "all", bytes([4]) * 4, None)]
    fold_old = [r for r in every if r["tool"] == "fold" and r["at"] < "2030-01-04"]
    other_old = [r for r in every if r["tool"] != "fold" and r["at"] < "2030-01-02"]
    assert got["purged_named"] == len(fold_old) + len(other_old)
    gone = {r["id"] for r in fold_old + other_old} | {r["id"] for r in every if r["at"] < "2030-01-06"}
    assert got["purged_default_only"] == len(gone) - got["purged_named"]
    assert got["left"] == [r["id"] for r in every if r["id"] not in gone]
