"""Median microseconds per support_reason explanation: native engine, hand-written floor, durable.

    .venv/bin/python tests/perf/bench_explain.py [ROUNDS] [--tiny]

(--tiny: one round of small batches, every check still made: proves the script runs.)

(a) `groundrules.explain(ctx)`: contract check, table evaluation, rendering;
(b) the floor: the same 13 rows and sentences written by hand in plain Python (no contract check),
    asserted equal to (a) on the whole case corpus before timing;
(c) the durable-rules oracle computing the fired rows (contract-type check + assert_fact +
    delete_state), plus the same rendering through the table.
All three run in one process on a ~2 KB context where 6 of the 11 codes fire, in paired, interleaved
rounds (one batch of each per round, the order rotating); the ratio is the median of the per-round
ratios. Targets: (a) <= 50 us and within 2x of (b).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tests" / "cases" / "support_reason"
CONTEXT = CASES / "insufficient-many-reasons-in-order.json"

from groundrules import explain, load_rulebook  # noqa: E402

BOOK = load_rulebook(ROOT, cache=False)      # the bench times evaluation, not loading
TABLE = BOOK.table("support_reason")
LABEL = {code: attrs.get("label", code) for code, attrs in TABLE.codes.items()}
ROLE = {code: attrs.get("role") for code, attrs in TABLE.codes.items()}


# --- (b) the floor -------------------------------------------------------------------------

def _list(ctx: dict, key: str) -> list:
    v = ctx.get(key)
    return v if v.__class__ is list else []


def _labels(ctx: dict) -> dict:
    """slot id -> label from required_slots, the first one given for each slot."""
    out: dict = {}
    for s in _list(ctx, "required_slots"):
        if s.get("label") is not None and isinstance(s.get("slot"), str):
            out.setdefault(s["slot"], s["label"])
    return out


def _name(item: dict, labels: dict) -> str | None:
    for key in ("label", "slot"):
        v = item.get(key)
        if v is not None:
            return labels.get(v, v) if isinstance(v, str) else v
    return None


def _excerpt(text: str | None, limit: int = 200) -> str:
    if not text:
        return ""
    return text if len(text) <= limit else text[:limit] + "…"


def _distinct(values: list) -> list:
    out: list = []
    for v in values:
        if v is not None and v not in out:
            out.append(v)
    return out


def floor(ctx: dict) -> dict:
    """support_reason by hand: the same rows, order, labels and sentences as the table."""
    m = ctx["metrics"]
    cc, rc, ec = m["candidate_count"], m["readable_count"], m["evidence_count"]
    status, cstatus = ctx.get("support_status"), ctx.get("conflict_status")
    missing, evidence, engines = _list(ctx, "missing"), _list(ctx, "evidence"), _list(ctx, "engines")
    conflicts, incomparable = _list(ctx, "conflicts"), _list(ctx, "incomparable")
    labels = _labels(ctx)
    out: list = []

    def add(code: str, detail: str, **extra) -> None:
        if any(i["code"] == code for i in out):
            return
        item = {"code": code, "label": LABEL[code], "detail": detail}
        item.update(extra)
        out.append(item)

    if cstatus == "conflicting" and conflicts:
        add("conflicting_evidence", f"已确认 {len(conflicts)} 处证据冲突，涉及槽位："
            f"{'、'.join(_distinct([_name(c, labels) for c in conflicts]))}；需先裁决冲突",
            slots=_distinct([c.get("slot") for c in conflicts]))
    if cc == 0:
        names = [e["name"] for e in engines]
        add("no_candidates", f"检索没有返回任何候选页面（candidate_count = 0；查询的引擎：{'、'.join(names) or '无'}）",
            engines=names)
    if cc > 0 and rc == 0:
        add("no_usable_evidence", f"检索返回了 {cc} 个候选页面，但没有一个页面能读取（readable_count = 0）")
    if rc > 0 and ec == 0:
        add("no_usable_evidence", f"{rc} 个页面可以读取，但没有从中抽取到任何证据（evidence_count = 0）")
    unresolved = [i for i in missing if i.get("reason") == "recorded_unresolved"]
    if unresolved:
        names = [_name(i, labels) for i in unresolved]
        add("recorded_unresolved", f"有 {len(names)} 个槽位在库中有记录但尚未裁决：{'、'.join(names)}",
            slots=_distinct([i["slot"] for i in unresolved]))
    gaps = [i for i in missing if "reason" in i and i["reason"] != "recorded_unresolved"]
    if gaps:
        names, ids = [_name(i, labels) for i in gaps], _distinct([i["slot"] for i in gaps])
        if status != "partial":
            add("required_slots_missing", f"缺少 {len(names)} 个必需槽位的证据：{'、'.join(names)}", slots=ids)
        else:
            add("partial_slot_coverage", f"缺失 {len(names)} 个槽位：{'、'.join(names)}", slots=ids)
    cond_ev = [e for e in evidence if any(s.get("quote_support") == "conditional" for s in _list(e, "supports"))]
    if cond_ev and status != "sufficient":
        ids = _distinct([s["slot"] for e in evidence for s in _list(e, "supports")
                         if s.get("quote_support") == "conditional"])
        add("conditional_evidence_only", f"槽位 {'、'.join(_distinct([labels.get(i, i) for i in ids]))} "
            "只有附条件的证据支持（证据 "
            f"{'、'.join(e['id'] for e in cond_ev)}），未达到 sufficient", slots=ids)
    if incomparable:
        add("scope_gap", f"同一槽位的证据因范围或时间不可比（槽位：{'、'.join(_distinct([_name(i, labels) for i in incomparable]))}），"
            "这不是冲突", slots=_distinct([i.get("slot") for i in incomparable]))
    if cstatus == "candidate":
        add("conflict_candidate", "存在疑似冲突，尚未确认（conflict_status = candidate），不按冲突处理")
    failed = [e for e in engines if e["status"] in ("error", "timeout")]
    if failed:
        text = "；".join(f"{e['name']} {e['status']}（{_excerpt(e.get('error')) or '未给出错误信息'}）" for e in failed)
        alive = [e["name"] for e in engines if e["status"] == "ok"]
        tail = f"{'、'.join(alive)} 仍返回了结果" if alive else "没有其他引擎返回结果"
        add("engine_degraded", f"{text}；{tail}", engines=[e["name"] for e in failed])
    if status == "sufficient":
        required = _list(ctx, "required_slots")
        listed = "、".join(_name(s, {}) for s in required)
        add("all_required_slots_supported", "全部必需槽位均有证据支持"
            + (f"：{listed}" if listed else "（上下文未列出必需槽位）"), slots=[s["slot"] for s in required])
    primary = next((i["code"] for i in out if ROLE[i["code"]] == "status"), None)
    if primary is None:            # a diagnostic code is never primary (seed 000 §3): the context is inconsistent
        primary = "unknown"
        add(primary, f"没有任何状态原因能解释 support_status = {status}：上下文前后不一致，需检查上下文的生成过程"
            "（诊断码不决定支持状态）")
    return {"primary": primary, "primary_label": LABEL[primary], "reasons": out}


# --- (c) durable rows, same rendering --------------------------------------------------------

def durable_explain(backend, ctx: dict) -> dict:
    rows = {r.id: r for r in TABLE.rows}
    if TABLE.default is not None:
        rows[TABLE.default.id] = TABLE.default
    cache: dict = {}
    reasons = []
    for row_id in backend.fired_rows(ctx):
        row = rows[row_id]
        outputs = row.render(ctx, cache)
        item = {"code": row.code, "label": LABEL[row.code], "detail": outputs.get("detail", "")}
        for key in ("slots", "engines"):
            if key in outputs:
                item[key] = list(outputs[key])
        reasons.append(item)
    primary = next((i["code"] for i in reasons if ROLE[i["code"]] == "status"), None)
    if primary is None:            # the table's primary policy: otherwise its default row
        primary = TABLE.default.code
        if all(i["code"] != primary for i in reasons):
            reasons.append({"code": primary, "label": LABEL[primary],
                            "detail": TABLE.default.render(ctx, cache).get("detail", "")})
    return {"primary": primary, "primary_label": LABEL[primary], "reasons": reasons}


def batch_us(fn, ctx, batch: int) -> float:
    t0 = time.perf_counter_ns()
    for _ in range(batch):
        fn(ctx)
    return (time.perf_counter_ns() - t0) / batch / 1000


def paired_rounds(contenders: dict, ctx, rounds: int) -> dict:
    """Per round, one batch of every contender, the order rotating from round to round, so a burst
    of load on this shared machine hits all of them alike; ratios are taken within a round."""
    names = list(contenders)
    for fn, batch in contenders.values():        # warm-up
        batch_us(fn, ctx, batch)
    out: dict = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn, batch = contenders[name]
            out[name].append(batch_us(fn, ctx, batch))
    return out


def main() -> int:
    from groundrules.analyst.oracle.durable import DurableBackend
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rounds", nargs="?", type=int, default=31, help="paired rounds (default 31)")
    parser.add_argument("--tiny", action="store_true", help="a few small rounds, every check still made: proves the script runs")
    args = parser.parse_args()
    tiny = args.tiny
    rounds = 1 if tiny else args.rounds
    scale = 50 if tiny else 1
    backend = DurableBackend(TABLE, BOOK.schemas.get(TABLE.input))
    ctx = json.loads(CONTEXT.read_text(encoding="utf-8"))
    corpus = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(CASES.glob("*.json"))]
    for case in corpus:
        expected = explain(case)
        assert floor(case) == expected, case.get("query")
        assert durable_explain(backend, case) == expected, case.get("query")
    size = len(json.dumps(ctx, ensure_ascii=False).encode("utf-8"))
    fired = len(TABLE.evaluate(ctx).fired)
    times = paired_rounds({"native": (explain, 200 // scale), "floor": (floor, 400 // scale),
                           "durable": (lambda c: durable_explain(backend, c), max(1, 10 // scale))}, ctx, rounds)
    med = {name: statistics.median(values) for name, values in times.items()}
    ratio = statistics.median(n / f for n, f in zip(times["native"], times["floor"]))
    durable_ratio = statistics.median(d / n for d, n in zip(times["durable"], times["native"]))
    print(f"context: {CONTEXT.name}, {size} bytes, {len(TABLE.rows)} rows, {fired} fired; "
          f"outputs equal on {len(corpus)} corpus contexts; {rounds} paired rounds")
    print(f"(a) native explain     median {med['native']:9.1f} us")
    print(f"(b) hand-written floor median {med['floor']:9.1f} us")
    print(f"(c) durable + render   median {med['durable']:9.1f} us")
    print(f"native / floor   = {ratio:6.2f}x  (median of per-round ratios; target <= 2x)")
    print(f"durable / native = {durable_ratio:6.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
