"""Seed 003 §3, scenario by scenario: what the mechanical layer locks, and what it must not."""
from __future__ import annotations

import pytest

from groundrules import GroundrulesError, lock, lock_messages



def user(content: str, mid: str = "m1", **extra) -> dict:
    return {"id": mid, "role": "user", "content": content, **extra}


def only(locks: list, kind: str) -> list:
    return [c for c in locks if c["kind"] == kind]


def test_output_shape_and_key_order(lock_book):
    [c] = lock(user("我的手机号是 138 1234 5678"), lock_book)
    assert list(c) == ["id", "pattern", "kind", "quote", "locator", "normalized_value", "valid",
                       "invalid_reason"]
    assert list(c["locator"]) == ["message_id", "start", "end"]
    assert c["pattern"] == "cn_mobile.mobile" and c["kind"] == "phone"
    assert c["id"].startswith("L-") and len(c["id"]) == 18


def test_number_the_user_says_not_to_call_is_still_locked(lock_book):
    text = "我们客服号码是 13812345678，不过别打那个，联系我微信"
    locks = lock(user(text), lock_book)
    [phone] = locks                                 # locked; "联系我微信" carries no wechat value
    assert phone["kind"] == "phone" and phone["valid"] is True
    assert phone["quote"] == "13812345678" == text[8:19]
    assert phone["locator"] == {"message_id": "m1", "start": 8, "end": 19}


def test_channel_word_plus_value_locks_the_wechat_account(lock_book):
    text = "不方便接电话，微信 wx_wang01"
    [w] = lock(user(text), lock_book)
    assert (w["kind"], w["quote"], w["normalized_value"], w["valid"]) == \
        ("wechat", "微信 wx_wang01", "wx_wang01", True)
    assert text[w["locator"]["start"]:w["locator"]["end"]] == w["quote"]


@pytest.mark.parametrize("text", ["加个微信吧", "联系我微信", "微信同号", "加我QQ吧", "有事微信联系，QQ也行"])
def test_channel_word_alone_locks_no_value(lock_book, text):
    assert lock(user(text), lock_book) == []


@pytest.mark.parametrize("text, quote", [
    ("电话 138 1234 5678", "138 1234 5678"),
    ("电话 138-1234-5678", "138-1234-5678"),
    ("电话 138 1234-5678", "138 1234-5678"),
    ("电话（138）1234 5678", "（138）1234 5678"),                # the opening bracket is typed too
    ("(138)1234 5678", "(138)1234 5678"),
    ("电话 138 – 1234 – 5678", "138 – 1234 – 5678"),
])
def test_normalisation_keeps_the_raw_quote(lock_book, text, quote):
    [c] = lock(user(text), lock_book)
    assert c["quote"] == quote
    assert text[c["locator"]["start"]:c["locator"]["end"]] == quote
    assert c["normalized_value"] == "13812345678" and c["valid"] is True


@pytest.mark.parametrize("number", ["13800000000", "13333333333", "13812345678", "19999999999",
                                    "13900001111", "17712341234"])
def test_test_looking_numbers_are_valid(lock_book, number):
    [c] = lock(user(f"手机 {number}"), lock_book)
    assert (c["valid"], c["invalid_reason"]) == (True, None)


@pytest.mark.parametrize("text, reason", [
    ("手机 12812345678", "bad_second_digit"),
    ("手机 10812345678", "bad_second_digit"),
    ("手机 1381234567", "wrong_length"),
    ("手机 138123456789", "wrong_length"),
])
def test_invalid_candidates_are_recorded_with_their_reason(lock_book, text, reason):
    [c] = lock(user(text), lock_book)
    assert (c["kind"], c["valid"], c["invalid_reason"]) == ("phone", False, reason)


def test_full_width_digits_lock_with_raw_offsets(lock_book):
    text = "好的，我的电话是１３８ １２３４ ５６７８，谢谢"
    [c] = lock(user(text), lock_book)
    start, end = c["locator"]["start"], c["locator"]["end"]
    assert (start, end) == (8, 21)
    assert text[start:end] == c["quote"] == "１３８ １２３４ ５６７８"
    assert c["normalized_value"] == "13812345678" and c["valid"] is True


@pytest.mark.parametrize("dash", ["-", "‐", "‑", "‒", "–", "—", "―", "−", "－", "﹣"])
def test_every_dash_an_ime_types_is_a_hyphen(lock_book, dash):
    [c] = lock(user(f"138{dash}1234{dash}5678"), lock_book)
    assert c["normalized_value"] == "13812345678" and c["valid"] is True


@pytest.mark.parametrize("text, value, valid", [
    ("138.1234.5678", "13812345678", True), ("138/1234/5678", "13812345678", True),
    ("188．1234．5678", "18812345678", True), ("128.1234.5678", "12812345678", False),
    ("138，1234，5678", "13812345678", True), ("138~1234~5678", "13812345678", True),
    ("138 / 1234 / 5678", "13812345678", True),
    ("138.1234/5678", None, None), ("13.8.1234.5678", None, None), ("138 /1234/ 5678", None, None),
])
def test_dots_and_slashes_in_a_phones_shape_are_separators_and_the_same_rule_decides(lock_book, text, value, valid):
    """Issue 22 item 8, issue 31 item 6: a phone's 3-4-4 groups joined by one dot, slash, comma
    (full-width too) or tilde, twice, spaced alike or not, are a number; the separators are deleted
    like spaces and the structural rule (11 digits, 1, 3-9) decides. Mixed groupings are no phone shape."""
    phones = [(c["quote"], c["normalized_value"], c["valid"]) for c in only(lock(user(text), lock_book), "phone")]
    assert phones == ([] if value is None else [(text, value, valid)])


def test_summary_marker_counts_only_in_a_sent_assistant_message(lock_book):
    text = "「需求摘要」\n产品：A 型设备；交付地：B 地分部"
    sent = lock({"id": "a1", "role": "assistant", "content": text}, lock_book)
    assert [(c["kind"], c["quote"], c["normalized_value"]) for c in sent] == \
        [("flow_marker", "「需求摘要」", "需求摘要")]
    assert lock({"id": "a1", "role": "assistant", "content": text, "state": "sent"}, lock_book) == sent
    assert lock({"id": "a2", "role": "assistant", "content": text, "state": "draft"}, lock_book) == []
    assert lock(user(text), lock_book) == []
    assert lock({"id": "t1", "role": "tool", "content": "diag: " + text}, lock_book) == []
    assert lock({"id": "s1", "role": "system", "content": text}, lock_book) == []
    assert lock(user("需求：A 型设备，交付到 B 地"), lock_book) == []


def test_drafts_never_count_for_any_pattern(lock_book):
    text = "「需求摘要」手机 13812345678 微信 wx_wang01 QQ 12345678 a@b.com 11010519491231002X"
    for role in ("user", "assistant", "system", "tool"):
        assert lock({"id": "d", "role": role, "content": text, "state": "draft"}, lock_book) == []


def test_overlapping_locks_of_different_kinds_are_kept_unless_a_rule_drops_one(lock_book):
    """Overlaps stay (a WeChat account that is a phone number is both); only a table's rule drops a
    reading, here the phone table's inside_a_longer_number for the digits inside the spaced ID."""
    text = "身份证 110105 19491231 002X，微信 13812345678，QQ 12345678@qq.com"
    locks = lock(user(text), lock_book)
    got = [(c["kind"], c["quote"], c["valid"]) for c in locks]
    assert got == [
        ("resident_id", "110105 19491231 002X", True),
        ("wechat", "微信 13812345678", True),
        ("phone", "13812345678", True),
        ("qq", "QQ 12345678", True),
        ("email", "12345678@qq.com", True),
    ]


def test_sorted_by_start_end_pattern(lock_book):
    locks = lock(user("微信 13812345678 或 a@b.com，QQ 123456"), lock_book)
    keys = [(c["locator"]["start"], c["locator"]["end"], c["pattern"]) for c in locks]
    assert keys == sorted(keys) and len(keys) == 4


def test_ids_depend_on_message_pattern_and_span_only(lock_book):
    a = lock(user("手机 13812345678", "m1"), lock_book)[0]
    b = lock(user("手机 13812345678，谢谢", "m1"), lock_book)[0]
    c = lock(user("手机 13812345678", "m2"), lock_book)[0]
    d = lock(user("手机号 13812345678", "m1"), lock_book)[0]   # span shifted by one
    assert a["id"] == b["id"]                       # same message id, pattern and span
    assert a["id"] != c["id"] and a["id"] != d["id"]


def test_lock_messages_keeps_message_order(lock_book):
    locks = lock_messages([user("微信 wx_wang01", "m2"), user("手机 13812345678", "m1"),
                           {"id": "a", "role": "assistant", "content": "「需求摘要」"}], lock_book)
    assert [(c["locator"]["message_id"], c["kind"]) for c in locks] == \
        [("m2", "wechat"), ("m1", "phone"), ("a", "flow_marker")]


@pytest.mark.parametrize("message, field", [
    ("hello", "message"),
    (None, "message"),
    ({"role": "user", "content": "x"}, "id"),
    ({"id": "", "role": "user", "content": "x"}, "id"),
    ({"id": 7, "role": "user", "content": "x"}, "id"),
    ({"id": "m", "role": "bot", "content": "x"}, "role"),
    ({"id": "m", "role": "user"}, "content"),
    ({"id": "m", "role": "user", "content": ["x"]}, "content"),
    ({"id": "m", "role": "user", "content": "x", "state": "pending"}, "state"),
    ({"id": "m", "role": "user", "content": "bad \ud800 text"}, "content"),
])
def test_bad_message_is_refused_with_a_stable_code(lock_book, message, field):
    with pytest.raises(GroundrulesError) as exc:
        lock(message, lock_book)
    assert exc.value.code == "INVALID_MESSAGE" and exc.value.field == field


def test_bad_message_list_is_refused(lock_book):
    with pytest.raises(GroundrulesError) as exc:
        lock_messages({"id": "m"}, lock_book)
    assert exc.value.code == "INVALID_MESSAGE"
    with pytest.raises(GroundrulesError) as exc:
        lock_messages([user("a", "m1"), "oops"], lock_book)
    assert exc.value.code == "INVALID_MESSAGE" and exc.value.details["index"] == 1
    with pytest.raises(GroundrulesError) as exc:
        lock_messages([user("a", "m1"), user("b", "m1")], lock_book)
    assert exc.value.code == "DUPLICATE_MESSAGE_ID" and exc.value.details["index"] == 1


def test_extra_message_keys_are_ignored(lock_book):
    assert lock(user("手机 13812345678", turn=3, timestamp="t"), lock_book) == \
        lock(user("手机 13812345678"), lock_book)
