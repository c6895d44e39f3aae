"""The corpora batches run on, made here, seeded: a chat archive (ordinary chat, with one user
message in four taken from the labelled lock corpus, tests/cases/lock_chat/, so that its phones
have labels) and the retrieval contexts of tests/cases/support_reason/, repeated with their query
numbered. Shared by tests/batch/ and tests/perf/bench_batch.py."""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "locks"))
import chat_corpus  # noqa: E402 - the labelled corpus's loader (tests/locks/)

CONTEXTS = ROOT / "tests" / "cases" / "support_reason"
CHAT = [
    "您好，请问这款设备现在还有货吗？我们公司想批量采购一批。",
    "好的，我先跟领导确认一下预算，大概下周给您回复。",
    "交付地址是 B 地分部，公司登记地在 A 地，开票按登记地来。",
    "价格方面能不能再优惠一点？数量大概在 200 台左右。",
    "麻烦把报价单和产品参数发一份过来，谢谢。",
    "物流大概需要几天？我们这边比较着急，最好三天内能到。",
]
ASSISTANT = [
    "收到，我这边马上帮您查询库存情况，请稍等。",
    "请问您方便留一个联系方式吗？电话或者微信都可以。",
    "保修期是两年，期间非人为损坏免费维修。",
]


def chats(n: int, seed: int = 7) -> list[dict]:
    """`n` messages {id, role, content, phones}: `phones` are the labelled mobiles' spans (None
    for a message the labelled corpus did not give, which has none)."""
    rng = random.Random(seed)
    labelled = chat_corpus.load()
    out = []
    for i in range(n):
        role = "assistant" if i % 3 == 2 else "user"
        if role == "user" and rng.random() < 0.25:
            m = rng.choice(labelled)
            out.append({"id": f"m{i}", "role": m.role, "content": m.text, "phones": [list(p) for p in m.phones]})
            continue
        parts = [rng.choice(ASSISTANT if role == "assistant" else CHAT) for _ in range(rng.randint(1, 4))]
        out.append({"id": f"m{i}", "role": role, "content": "".join(parts), "phones": []})
    return out


def contexts(n: int) -> list[dict]:
    """`n` knowledge-gateway contexts: the corpus's, in turn, each query numbered."""
    cases = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(CONTEXTS.glob("*.json"))]
    out = []
    for i in range(n):
        ctx = dict(cases[i % len(cases)])
        ctx["query"] = f"{ctx.get('query', '')} #{i}"
        out.append(ctx)
    return out


def lock_rows(messages: list[dict]) -> list[dict]:
    """The lock_message tool's arguments, one row per message."""
    return [{"message": {"id": m["id"], "role": m["role"], "content": m["content"]}} for m in messages]


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path
