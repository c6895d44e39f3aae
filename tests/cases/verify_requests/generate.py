"""Writes train.yaml: the labelled request corpus of candidate verification (issue 31, item 3).

Requests in the seed's families (seed 002: 撤回与修正, 上下文与字段选择, 多动作与多对象), each with
good candidates (a careful model's reading: verification must accept them) and bad ones (the
mistakes the seed names: verification must refuse them). Built from templates and word lists
below, seeded, so the file is the same on every run, then the hand-written near-misses of
train_hand.yaml; heldout.yaml is written by hand, after the tables, with other wordings, and is never
tuned on.

Run: .venv/bin/python tests/cases/verify_requests/generate.py
"""
from __future__ import annotations

import random
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
OBJECTS = ["登录失败", "支付接口超时", "订单同步", "导出功能", "搜索页面", "消息推送", "库存扣减", "退款回调",
           "短信验证码", "报表统计"]
ANALYSES = [("analyze", "{o}的原因", "先只分析{o}的原因"), ("analyze", "{o}的根因", "只定位{o}的根因"),
            ("query", "{o}的日志", "先只看{o}的日志"), ("analyze", "{o}的原因", "现在只分析原因")]

# withdrawals and deferrals of the fix, in the input ({o}: the object)
WITHDRAWALS = [
    "取消修改，{a}。", "算了，修复的事以后再说，{a}。", "别急着修，{a}。", "我收回修复{o}的要求，{a}。",
    "修复{o}那个先停一下，{a}。", "{a}，修改的事取消。", "先别修了，{a}。", "修复就算了，{a}。",
    "不用修了，{a}。", "先不改了，{a}。", "{o}的修复先放一放，{a}。", "暂时不要修，{a}。",
    "修改{o}的事回头再说，{a}。", "撤回对{o}的改动，{a}。", "先不修复{o}，{a}。", "{o}先不用修，{a}。",
    "修复{o}就不用了，{a}。", "别修{o}了，{a}。", "不需要修复了，{a}。", "修复先搁置，{a}。",
]
# what a user said earlier (context), and what the input says now
CONTEXT_WITHDRAWALS = ["先别修了，只分析原因。", "修复的事以后再说。", "算了，修复就算了。", "我收回修复的要求。",
                       "修改先停一下。", "不用修了，先看日志。", "别急着修，先定位根因。"]
FOLLOW_UPS = [("那先看一下日志。", ("query", "日志")), ("继续分析原因吧。", ("analyze", "原因")),
              ("查一下最近的报错记录。", ("query", "最近的报错记录")), ("先定位一下根因。", ("analyze", "根因"))]
LIFTS = ["分析完了，现在修复{o}，再评估影响范围。", "原因找到了，现在修复{o}，然后评估影响。"]

# prohibitions: (the words in the input, the family's intent action, the thing, a kept prohibition)
PROHIBITIONS = [("不要修改代码", "fix", "代码", "不修改代码"), ("不要删除数据", "delete_data", "数据", "不删除数据"),
                ("别重启服务", "restart_service", "服务", "不重启服务"), ("不要通知客户", "notify_customer", "客户", "不通知客户"),
                ("禁止上线", "deploy", "上线", "不上线"), ("不要取消订单", "cancel_order", "订单", "不取消订单"),
                ("别动数据库", "modify_database", "数据库", "不改动数据库"), ("不准发布新版本", "release", "新版本", "不发布新版本"),
                ("千万别回滚", "rollback", "版本", "不回滚"), ("不可以修改配置", "modify_config", "配置", "不修改配置"),
                ("不要给客户退款", "refund", "客户", "不退款"), ("别冻结用户账户", "freeze_account", "用户账户", "不冻结账户")]
PROHIBITION_TEMPLATES = ["{q}{o}，{p}。", "先{q}{o}，{p}。", "{p}，只{q}{o}。"]
QUERIES = [("查一下", "query"), ("分析", "analyze"), ("排查", "analyze"), ("查询", "query")]
EN_PROHIBITIONS = [("don't change the code", "fix", "do not change the code"),
                   ("do not delete any data", "delete_data", "no data deletion"),
                   ("don't restart the service", "restart_service", "do not restart the service"),
                   ("never cancel the order", "cancel_order", "do not cancel the order"),
                   ("don't notify the customer", "notify_customer", "do not notify the customer"),
                   ("do not refund the buyer", "refund", "no refund"), ("don't suspend the account", "suspend_account", "do not suspend the account")]
EN_OBJECTS = ["the login failure", "the payment timeout", "the order sync", "the export job", "the search page"]

# several actions and objects
MULTI = [("查询订单 {x}，并分析订单 {y} 的延迟原因", [("query", "订单 {x}"), ("analyze", "订单 {y} 的延迟原因")]),
         ("取消掉订单 {x}，改个地址，再查下物流", [("cancel_order", "订单 {x}"), ("modify", "地址"), ("query", "物流")]),
         ("查下订单 {x} 的物流，再退个款", [("query", "订单 {x} 的物流"), ("refund", "订单 {x}")]),
         ("删掉草稿 {x}，然后导出订单 {y}", [("delete", "草稿 {x}"), ("export", "订单 {y}")]),
         ("cancel order {x} and check the logistics", [("cancel_order", "order {x}"), ("query", "logistics")]),
         ("check order {x}, then refund order {y}", [("query", "order {x}"), ("refund", "order {y}")]),
         ("统计订单 {x} 的金额，并对比订单 {y}", [("count", "订单 {x} 的金额"), ("compare", "订单 {y}")]),
         ("更新订单 {x} 的备注，再查询订单 {y} 的状态", [("update", "订单 {x} 的备注"), ("query", "订单 {y} 的状态")])]
LETTERS = ["A", "B", "C", "D", "E", "F"]

# legitimate requests that look like withdrawals or prohibitions: good candidates do what they ask
LOOKALIKES = [("这个问题不得不修，先分析{o}的原因再修复。", [("analyze", "{o}的原因"), ("fix", "{o}")]),
              ("{o}不能不修，先分析原因，再修复。", [("analyze", "{o}的原因"), ("fix", "{o}")]),
              ("别急，先修复{o}。", [("fix", "{o}")]), ("不要紧，直接修复{o}吧。", [("fix", "{o}")]),
              ("要不要先修复{o}？", [("fix", "{o}")]), ("别担心，我来修复{o}。", [("fix", "{o}")]),
              ("先不改，分析完{o}的原因后再修复。", [("analyze", "{o}的原因"), ("fix", "{o}")]),
              ("帮我取消订单 A，然后查询退款进度。", [("cancel_order", "订单 A"), ("query", "退款进度")]),
              ("取消订单后修改收货地址。", [("cancel_order", "订单"), ("modify", "收货地址")]),
              ("别忘了提交，修复{o}。", [("fix", "{o}")]), ("{o}非修不可，马上修复。", [("fix", "{o}")]),
              ("Don't worry, fix {e} first.", [("fix", "{e}")]), ("Fix {e}, don't just analyze it.", [("fix", "{e}")])]


def cand(intents, prohibitions=(), requirements=(), why=None):
    out = {"intents": [list(i) for i in intents], "prohibitions": list(prohibitions), "requirements": list(requirements)}
    if why:
        out["why"] = why
    return out


def withdrawals(rng):
    out = []
    for t in WITHDRAWALS:
        for o in rng.sample(OBJECTS, 5):
            action, target, req = rng.choice(ANALYSES)
            target, req = target.format(o=o), req.format(o=o)
            text = t.format(o=o, a=req)
            good = cand([(action, target)], [f"不修复{o}"], [req])
            bad = [cand([(action, target), ("fix", o)], [f"不修复{o}"], [req], "carries on the withdrawn fix"),
                   cand([(action, target)], [], [req], "drops the withdrawal"),
                   cand([("fix", o)], [], [], "the seed's bad candidate: only the fix")]
            out.append({"family": "withdrawal", "input": text, "good": [good], "bad": bad})
    return out


def context_withdrawals(rng):
    out = []
    for w in CONTEXT_WITHDRAWALS:
        for o in rng.sample(OBJECTS, 5):
            text, (action, target) = rng.choice(FOLLOW_UPS)
            context = [["user", f"修复{o}。"], ["assistant", "好的，我先看看。"], ["user", w]]
            good = cand([(action, target)], [f"不修复{o}"])
            bad = [cand([(action, target), ("fix", o)], [f"不修复{o}"], [], "carries on the fix withdrawn in context"),
                   cand([(action, target)], [], [], "drops the withdrawal made in context")]
            out.append({"family": "withdrawal_context", "input": text, "context": context, "good": [good], "bad": bad})
    for t in LIFTS:
        for o in rng.sample(OBJECTS, 5):
            context = [["user", f"先别修{o}，只分析原因。"], ["assistant", "好的，只分析原因。"]]
            text = t.format(o=o)
            good = cand([("fix", o), ("assess", "影响范围")])
            bad = [cand([("fix", f"{o}和影响范围")], [], [], "two actions, one joined target")]
            out.append({"family": "withdrawal_context", "input": text, "context": context, "good": [good], "bad": bad})
    return out


def prohibitions(rng):
    out = []
    for p, action, thing, kept in PROHIBITIONS:
        for t in PROHIBITION_TEMPLATES:
            for o in rng.sample(OBJECTS, 2):
                q, qa = rng.choice(QUERIES)
                text = t.format(q=q, o=o, p=p)
                good = cand([(qa, o)], [kept])
                bad = [cand([(qa, o)], [], [], "drops the prohibition"),
                       cand([(qa, o), (action, thing)], [kept], [], "does what the input forbids")]
                out.append({"family": "prohibition", "input": text, "good": [good], "bad": bad})
    for p, action, kept in EN_PROHIBITIONS:
        for e in rng.sample(EN_OBJECTS, 3):
            text = f"Analyze {e}, {p}."
            good = cand([("analyze", e)], [kept])
            bad = [cand([("analyze", e)], [], [], "drops the prohibition"),
                   cand([("analyze", e), (action, e)], [kept], [], "does what the input forbids")]
            out.append({"family": "prohibition", "input": text, "good": [good], "bad": bad})
    return out


def multi(rng):
    out = []
    for t, intents in MULTI:
        for _ in range(8):
            x, y = rng.sample(LETTERS, 2)
            text = t.format(x=x, y=y)
            acts = [(a, tg.format(x=x, y=y)) for a, tg in intents]
            joiner = " and " if text.isascii() else "和"
            good = cand(acts)
            bad = [cand([acts[0][:1] + (joiner.join(tg for _, tg in acts),)], [], [], "one intent, objects joined"),
                   cand(acts[:1], [], [], "fewer intents than actions")]
            out.append({"family": "multi_action", "input": text, "good": [good], "bad": bad})
    return out


def lookalikes(rng):
    out = []
    for t, intents in LOOKALIKES:
        for _ in range(5):
            o, e = rng.choice(OBJECTS), rng.choice(EN_OBJECTS)
            text = t.format(o=o, e=e)
            acts = [(a, tg.format(o=o, e=e)) for a, tg in intents]
            joiner = " and " if text.isascii() else "和"
            good = cand(acts)
            bad = [cand([(acts[0][0], joiner.join(tg for _, tg in acts) if len(acts) > 1 else f"{acts[0][1]}{joiner}其他问题")],
                        [], [], "one intent, objects joined")]
            out.append({"family": "lookalike", "input": text, "good": [good], "bad": bad})
    return out


def main() -> None:
    rng = random.Random(31)
    requests = withdrawals(rng) + context_withdrawals(rng) + prohibitions(rng) + multi(rng) + lookalikes(rng)
    requests += yaml.safe_load((HERE / "train_hand.yaml").read_text(encoding="utf-8"))["requests"]
    seen, unique = set(), []
    for r in requests:
        key = (r["input"], str(r.get("context")))
        if key not in seen:
            seen.add(key)
            unique.append(r)
    for n, r in enumerate(unique, 1):
        r["id"] = f"t{n:03d}"
    doc = {"split": "train", "generated_by": "tests/cases/verify_requests/generate.py",
           "requests": [{"id": r["id"], **{k: v for k, v in r.items() if k != "id"}} for r in unique]}
    (HERE / "train.yaml").write_text("# generated: edit generate.py, not this file\n" +
                                     yaml.safe_dump(doc, allow_unicode=True, sort_keys=False, width=200,
                                                   default_flow_style=None),
                                     encoding="utf-8")
    print(len(unique), "requests")


if __name__ == "__main__":
    main()
