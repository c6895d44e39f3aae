"""Benchmark: evidence-lock scanning over a generated ≥ 5 MB Chinese chat corpus.

Run: .venv/bin/python tests/perf/bench_locks.py [--mb 5] [--repeat 5]

Prints medians (and best) of --repeat interleaved rounds (MB = 10^6 UTF-8 bytes of message content):
- all default lock tables together, over the whole corpus as one message and per message
  (lock() called once per ~200-character message), with µs per call and the per-message
  overhead per pattern (lock() minus the bare finditer passes it wraps, divided by patterns);
- each table alone over the whole corpus;
- baselines measured in the same run: one compiled alternation of the same regexes (no
  normalisation, no validation), and a bare `regex` finditer of the CN-mobile pattern, plus the
  issue's reference pattern 1[3-9]\\d{9}.
The issue's targets: all tables ≥ 40 MB/s; overhead per pattern per message ≤ ~5 µs.
"""
from __future__ import annotations

import argparse
import random
import statistics
import time
import timeit
from dataclasses import replace
from pathlib import Path

import regex

from groundrules import load_rulebook, lock
from groundrules.locks.scan import candidates

import bench_fold  # the sibling script (its folder is on sys.path): the issue asks for fold timings here too

ROOT = Path(__file__).resolve().parents[2]

CHAT = [
    "您好，请问这款设备现在还有货吗？我们公司想批量采购一批。",
    "好的，我先跟领导确认一下预算，大概下周给您回复。",
    "交付地址是 B 地分部，公司登记地在 A 地，开票按登记地来。",
    "不方便接电话，有事请留言，我看到会第一时间回复。",
    "价格方面能不能再优惠一点？数量大概在 200 台左右。",
    "上次说的那个型号还有吗，我们需要 10 月底之前到货。",
    "麻烦把报价单和产品参数发一份过来，谢谢。",
    "今天开会讨论了一下，大家觉得方案二更合适一些。",
    "物流大概需要几天？我们这边比较着急，最好三天内能到。",
    "发票抬头就写公司全称，税号我稍后发给您。",
    "售后服务是怎么安排的？保修期是一年还是两年？",
    "我们领导姓刘，这个项目由他负责对接，有问题可以直接找他。",
]
ASSISTANT = [
    "收到，我这边马上帮您查询库存情况，请稍等。",
    "好的，已为您记录，稍后会有专人与您联系确认细节。",
    "请问您方便留一个联系方式吗？电话或者微信都可以。",
    "这款设备目前有现货，200 台的话可以申请批量价格。",
    "保修期是两年，期间非人为损坏免费维修。",
]
SUMMARY = "「需求摘要」\n产品：A 型设备 200 台；交付地：B 地分部；时间：10 月底前。"


def _mobile(rng: random.Random) -> str:
    digits = "1" + rng.choice("3456789") + "".join(rng.choice("0123456789") for _ in range(9))
    shape = rng.randrange(5)
    if shape == 0:
        return digits
    if shape == 1:
        return f"{digits[:3]} {digits[3:7]} {digits[7:]}"
    if shape == 2:
        return f"{digits[:3]}-{digits[3:7]}-{digits[7:]}"
    if shape == 3:
        return digits.translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    return digits[:10]                      # a mistyped, 10-digit number


def _resident_id(rng: random.Random) -> str:
    body = rng.choice(["110105", "320583", "440304", "370102"]) + f"{rng.randrange(1950, 2005)}" \
        + f"{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}" + f"{rng.randrange(1000):03d}"
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    return body + "10X98765432"[sum(int(c) * w for c, w in zip(body, weights)) % 11]


def _sprinkle(rng: random.Random) -> str:
    kind = rng.randrange(7)
    if kind == 0:
        return f"我的手机号是 {_mobile(rng)}，"
    if kind == 1:
        return f"电话不方便，微信 wx_{rng.randrange(10**6)}，"
    if kind == 2:
        return f"QQ {rng.randrange(10**5, 10**10)}，"
    if kind == 3:
        return f"邮箱 user{rng.randrange(10**4)}@example.com，"
    if kind == 4:
        return f"身份证号 {_resident_id(rng)}，"
    if kind == 5:
        return "加个微信吧，"
    return "客服电话 400-800-1234，"


def corpus(mb: float, seed: int = 3) -> list[dict]:
    """Deterministic messages of ~200 characters: one user message in five holds a lockable value,
    one assistant message in ten the summary marker."""
    rng = random.Random(seed)
    out, size, n = [], 0, 0
    while size < mb * 1_000_000:
        role = "assistant" if n % 3 == 2 else "user"
        parts = []
        while sum(map(len, parts)) < 180:
            parts.append(rng.choice(ASSISTANT if role == "assistant" else CHAT))
            if role == "assistant" and rng.random() < 0.02:
                parts.append(SUMMARY)
            if role == "user" and rng.random() < 0.05:
                parts.append(_sprinkle(rng))
        text = "".join(parts)
        out.append({"id": f"m{n}", "role": role, "content": text})
        size += len(text.encode("utf-8"))
        n += 1
    return out


def timed(runs: dict, repeat: int) -> dict:
    """Median and best seconds of each run; rounds interleave the runs so that load from other
    processes on a shared machine spreads over all of them alike."""
    times: dict = {name: [] for name in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: (statistics.median(ts), min(ts)) for name, ts in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-fold", action="store_true", help="skip the fold timing at 1k/10k/100k events")
    ap.add_argument("--mb", type=float, default=5.0)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    book = load_rulebook(ROOT, files=[ROOT / "locks"])
    tables = book.of_kind("lock_patterns")
    patterns = [p for t in tables for p in t.patterns]
    # the whole-corpus scan is one message; give it a budget that fits 5 MB
    slow = [replace(p, timeout=60.0) for p in patterns]
    messages = corpus(args.mb)
    whole = "\n".join(m["content"] for m in messages)
    mb = len(whole.encode("utf-8")) / 1e6
    print(f"corpus: {len(messages)} messages, {mb:.2f} MB UTF-8, {len(whole)} code points, "
          f"mean {len(whole) / len(messages):.0f} characters/message; {len(patterns)} patterns "
          f"in {len(tables)} tables; median of {args.repeat}")

    def whole_all():
        for p in slow:
            candidates(p, "c", "user", "sent", whole)
            candidates(p, "c", "assistant", "sent", whole)

    def per_message():
        for m in messages:
            lock(m, book)

    def bare_per_message():
        for m in messages:
            text = m["content"]
            for p in patterns:
                for _ in p.regex.finditer(text):
                    pass

    alternation = regex.compile("|".join(f"(?:{p.regex.pattern})" for p in patterns))
    mobile = next(p for p in patterns if p.id == "cn_mobile.mobile")
    reference = regex.compile(r"1[3-9]\d{9}")

    runs = {"whole": whole_all, "per_message": per_message, "bare_per_message": bare_per_message,
            "alternation": lambda: sum(1 for _ in alternation.finditer(whole)),
            "mobile": lambda: sum(1 for _ in mobile.regex.finditer(whole)),
            "reference": lambda: sum(1 for _ in reference.finditer(whole))}
    for table in tables:
        ps = [replace(p, timeout=60.0) for p in table.patterns]
        runs[table.id] = lambda ps=ps: [candidates(p, "c", role, "sent", whole)
                                        for p in ps for role in ("user", "assistant")]
    t = timed(runs, args.repeat)
    n_locks = sum(len(lock(m, book)) for m in messages)

    def rate(name: str) -> str:
        return f"{mb / t[name][0]:8.1f} MB/s (best {mb / t[name][1]:6.1f})"

    per_call = t["per_message"][0] / len(messages) * 1e6
    overhead = (t["per_message"][0] - t["bare_per_message"][0]) / len(messages) / len(patterns) * 1e6
    print(f"\nall tables, whole corpus (one scan per pattern): {rate('whole')}")
    print(f"all tables, per message (lock() per message):   {rate('per_message')}   "
          f"{per_call:.1f} µs/message, {n_locks} locks")
    print(f"  bare finditer of every pattern per message:     {rate('bare_per_message')}")
    print(f"  per-message overhead per pattern:               {overhead:8.2f} µs   (target ≤ ~5 µs)")
    short = messages[0]["content"]
    guard = [timeit.timeit(lambda: mobile.regex.search(short, timeout=to), number=20000) / 20000 * 1e6
             for to in (None, mobile.timeout)]
    print(f"  of which the regex timeout guard, per call:     {guard[1] - guard[0]:8.2f} µs "
          f"(search {guard[0]:.2f} µs without, {guard[1]:.2f} µs with)")
    print("\nper table, whole corpus:")
    for table in tables:
        print(f"  {table.id:16s} {rate(table.id)}")
    print("\nbaselines (same run, same corpus):")
    print(f"  one compiled alternation of all regexes:        {rate('alternation')}   "
          f"(all tables / alternation: {t['alternation'][0] / t['whole'][0]:.2f}x)")
    print(f"  bare finditer, CN-mobile pattern:               {rate('mobile')}")
    print(f"  bare finditer, reference 1[3-9]\\d{{9}}:           {rate('reference')}")
    if not args.no_fold:
        print("\nfold time per event (tests/perf/bench_fold.py):")
        bench_fold.main()


if __name__ == "__main__":
    main()
