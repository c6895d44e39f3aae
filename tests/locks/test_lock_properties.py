"""Properties over generated input: quotes are verbatim, scanning never crashes, output is
deterministic (also across hash seeds), prefilters never change results, and every mobile
number typed in an allowed shape is locked."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings, strategies as st
from budget import examples

from groundrules import GroundrulesError, lock, lock_messages
from groundrules.core import canonical
from groundrules.core.rulebook import Rulebook

ROOT = Path(__file__).resolve().parents[2]

LOCKY = ["微信", "微信号：", "QQ", "qq号", "扣扣", "@", "＠", "「需求摘要」", "需求：", "加个微信吧", "vx ",
         "wechat", "Ｘ", "X", "x", "群", "是", "：", ":", " ", "\u3000", "-", "—", "－", "(", "（", "）", ")",
         ".", "_", "\n", "，", "手机", "+86"]
texts = st.lists(st.one_of(st.sampled_from(LOCKY), st.text(alphabet="0123456789０１２３４５６７８９", max_size=19),
                           st.text(alphabet="abcxyzAQ_-.", max_size=8), st.text(max_size=6)),
                 max_size=14).map("".join)
roles = st.sampled_from(["user", "assistant", "system", "tool"])
states = st.sampled_from(["sent", "draft"])


def no_prefilters(book: Rulebook) -> Rulebook:
    tables = {tid: replace(t, patterns=tuple(replace(p, prefilter=(), gate=()) for p in t.patterns))
              for tid, t in book.tables.items()}
    return replace(book, tables=tables, memo={})        # a fresh memo: the flattened patterns are memoized


@settings(max_examples=examples(300), deadline=None)
@given(content=st.one_of(texts, st.text()), role=roles, state=states)
def test_every_quote_is_its_span_of_the_raw_text(lock_book, content, role, state):
    locks = lock({"id": "m", "role": role, "content": content, "state": state}, lock_book)
    for c in locks:
        start, end = c["locator"]["start"], c["locator"]["end"]
        assert 0 <= start < end <= len(content)
        assert c["quote"] == content[start:end]
        assert c["valid"] is (c["invalid_reason"] is None)
    keys = [(c["locator"]["start"], c["locator"]["end"], c["pattern"]) for c in locks]
    assert keys == sorted(keys)
    if state == "draft":
        assert locks == []


@settings(max_examples=examples(200), deadline=None)
@given(content=texts, role=roles)
def test_deterministic_and_prefilters_change_nothing(lock_book, content, role):
    message = {"id": "m", "role": role, "content": content}
    first = lock(message, lock_book)
    assert canonical.dumps(first) == canonical.dumps(lock(message, lock_book))
    bare = no_prefilters(lock_book)
    assert bare.memo is not lock_book.memo        # else lock() would reuse the gated patterns memoized there
    assert first == lock(message, bare)


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                           max_leaves=8)
messages = st.fixed_dictionaries({}, optional={"id": st.one_of(st.text(max_size=3), json_values),
                                               "role": st.one_of(roles, json_values),
                                               "content": st.one_of(texts, json_values),
                                               "state": st.one_of(states, json_values)})


@settings(max_examples=examples(300), deadline=None)
@given(value=st.one_of(messages, json_values))
def test_any_input_gives_locks_or_a_coded_refusal(lock_book, value):
    for call in (lock, lock_messages):
        try:
            result = call(value, lock_book)
        except GroundrulesError as exc:
            assert exc.code in ("INVALID_MESSAGE", "DUPLICATE_MESSAGE_ID")
            json.dumps(exc.as_dict(), ensure_ascii=False)
        else:
            assert isinstance(result, list)


SEPARATORS = [" ", "-", "—", "－", "\u3000", "–"]


@st.composite
def typed_mobile(draw):
    digits = "1" + draw(st.sampled_from("3456789")) + draw(st.text(alphabet="0123456789", min_size=9, max_size=9))
    cuts = draw(st.sampled_from([(), (3, 7), (3,), (3, 7, 9)]))
    sep = draw(st.sampled_from(SEPARATORS))
    parts, prev = [], 0
    for cut in cuts + (11,):
        parts.append(digits[prev:cut])
        prev = cut
    typed = sep.join(parts)
    if draw(st.booleans()):
        typed = typed.translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    return digits, typed


@settings(max_examples=examples(300), deadline=None)
@given(number=typed_mobile(), before=st.sampled_from(["", "我的手机号是", "电话：", "号码 ", "好的，"]),
       after=st.sampled_from(["", "，谢谢", "。", " 随时打", "！"]))
def test_a_mobile_typed_in_any_allowed_shape_is_locked_valid(lock_book, number, before, after):
    digits, typed = number
    content = before + typed + after
    phones = [c for c in lock({"id": "m", "role": "user", "content": content}, lock_book) if c["kind"] == "phone"]
    assert [(c["quote"], c["locator"]["start"], c["normalized_value"], c["valid"]) for c in phones] == \
        [(typed, len(before), digits, True)]


def test_same_bytes_under_different_hash_seeds():
    script = ("import sys; from pathlib import Path; from groundrules import load_rulebook, lock_messages; from groundrules.core import canonical;"
              "book = load_rulebook(Path(sys.argv[1]), files=[Path(sys.argv[1]) / 'locks']);"
              "msgs = [{'id': f'm{i}', 'role': 'user', 'content': t} for i, t in enumerate(["
              "'微信 wx_wang01 手机 138 1234 5678', 'QQ 12345678@qq.com', '身份证 110105 19491231 002X']) ];"
              "print(canonical.dumps(lock_messages(msgs, book)))")
    outs = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.add(subprocess.run([sys.executable, "-c", script, str(ROOT)], capture_output=True, text=True,
                                env=env, check=True).stdout)
    assert len(outs) == 1 and "wx_wang01" in outs.pop()
