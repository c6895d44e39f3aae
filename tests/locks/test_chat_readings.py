"""Issue 11 item 11: the lock tables read real chat as a careful person does. One test per decision,
named after it; the character sets come from the tables themselves."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from groundrules import lock

ROOT = Path(__file__).resolve().parents[2]
MOBILE_TABLE = yaml.safe_load((ROOT / "locks" / "cn_mobile.yaml").read_text(encoding="utf-8"))
SEPARATORS = MOBILE_TABLE["sets"]["sep"]
# the issue's list: Unicode spaces and invisible marks seen in real chat, and the bidi marks
ISSUE_MARKS = "\u2005\u2006\u2009\u202f\u200b\u202a\u202c"


def read(text: str, book, kind: str = "phone") -> list[tuple]:
    return [(c["quote"], c["normalized_value"], c["valid"]) for c in
            lock({"id": "m", "role": "user", "content": text}, book) if c["kind"] == kind]


@pytest.mark.parametrize("prefix", ["+86", "+86 ", "+86-", "0086", "0086 ", "86", "86-", "＋８６", "＋８６ ",
                                    "(+86)", "（+86）", "(86)", "0", "0 "])
def test_a_dialling_prefix_stays_in_the_quote_and_out_of_the_value(lock_book, prefix):
    number = "138 0000 1234" if prefix.endswith(" ") else "13800001234"
    typed = prefix + number
    assert read(f"我的号码 {typed}，谢谢", lock_book) == [(typed, "13800001234", True)]


def test_a_landline_behind_a_prefix_is_no_mobile(lock_book):
    for text in ("+86 10 6000 0000", "0086 21 6000 0000", "010-6000-0000", "+86-755-8600-0000"):
        assert read(text, lock_book) == [], text


def test_the_issues_unicode_spaces_and_marks_are_in_the_tables_separators():
    assert set(ISSUE_MARKS) <= set(SEPARATORS)


@pytest.mark.parametrize("sep", list(SEPARATORS), ids=[f"U+{ord(c):04X}" for c in SEPARATORS])
def test_every_separator_of_the_table_separates_digits(lock_book, sep):
    typed = f"138{sep}0000{sep}1234"
    assert read(f"手机 {typed}", lock_book) == [(typed, "13800001234", True)]


@pytest.mark.parametrize("mark", ["\u202a", "\u202b", "\u2066", "\u200e", "\u200f"])
def test_bidi_marks_around_a_number_stay_outside_the_quote(lock_book, mark):
    closing = {"\u202a": "\u202c", "\u202b": "\u202c", "\u2066": "\u2069"}.get(mark, mark)
    assert read(f"电话{mark}+86 138 0000 1234{closing}", lock_book) == [("+86 138 0000 1234", "13800001234", True)]


@pytest.mark.parametrize("text, quote", [
    ("编号 1 17500001234", "17500001234"),
    ("1 138 0000 1234", "138 0000 1234"),
    ("手机 138 0000 1234 5", "138 0000 1234"),
    ("13900001234 2 次", "13900001234"),
])
def test_an_exact_eleven_digit_reading_wins_over_a_longer_one(lock_book, text, quote):
    assert read(text, lock_book) == [(quote, quote.replace(" ", ""), True)]


@pytest.mark.parametrize("card, valid", [
    ("6222 0818 1399 8108 947", False),          # the issue's shape; its check digit is wrong
    ("6222 0200 1380 0001 234", False),          # a whole mobile number is one reading inside it
    ("6217 0000 0000 0000 004", True),
    ("6217-0000-1390-0001-234", False),
    ("6222\u20050200\u20051380\u20050001\u2005234", False),
])
def test_no_phone_inside_a_bank_card(lock_book, card, valid):
    assert read(f"卡号 {card}", lock_book) == []
    assert read(f"卡号 {card}", lock_book, "bank_card") == [(card, "".join(c for c in card if c.isdigit()), valid)]
    assert read(card, lock_book) == []                        # not recorded, still no phone


@pytest.mark.parametrize("typed", ["110105 19491231 002X", "110 105 1949 1231 002X", "11010519491231002X",
                                   "110105-19491231-002X", "110105\u200919491231\u2009002X"])
def test_no_phone_inside_a_resident_id_of_either_grouping(lock_book, typed):
    assert read(f"身份证 {typed}", lock_book) == []
    assert read(f"身份证 {typed}", lock_book, "resident_id") == [(typed, "11010519491231002X", True)]


@pytest.mark.parametrize("text", ["JDVA13800001234", "WO-13900001234", "SF1380000123456", "DD_18600001234",
                                  "SKU13800001234", "FP/15800001234"])
def test_letter_prefixed_codes_are_not_phones(lock_book, text):
    assert read(f"单号 {text}", lock_book) == []


@pytest.mark.parametrize("label", ["Tel", "TEL-", "tel:", "Mobile", "phone ", "VX", "wx", "Cell:"])
def test_a_phone_label_glued_to_the_number_is_no_code(lock_book, label):
    assert read(f"{label}13800001234", lock_book) == [("13800001234", "13800001234", True)]


@pytest.mark.parametrize("text", [
    "+86 10 6000 0000", "发票代码 144031900111", "时间戳 1701536084", "ts 1701536084 ok", "ts=1701536084123",
    "订单号 250612153012345678", "运单 1380000123401", "序列号 1380000123", "共 1380000123 份",
    "会议号 138 000 123", "固话 1060000000", "电话 01060000000", "电话 2380013800", "手机/座机 010-6000-0000",
    "手机 2023-12-01 13:45", "编号 23800138000", "共 1380013800 份",
])
def test_no_invalid_candidate_where_no_phone_was_attempted(lock_book, text):
    assert lock({"id": "m", "role": "user", "content": text}, lock_book) == []


@pytest.mark.parametrize("text, quote", [
    ("我手机是 1381234567", "1381234567"),                    # a phone label
    ("+86 138 0000 123", "+86 138 0000 123"),                 # a dialling prefix
    ("139 0000 12345", "139 0000 12345"),                     # a phone's grouping
    ("12800001234", "12800001234"),                           # 11 digits from 1, a bad second digit
    ("我号码 128.0000.1234", "128.0000.1234"),                 # a phone's shape with dots, a bad second digit
    ("电话 23800138000", "23800138000"),                       # issue 22: a phone label, a wrong first digit
    ("手机 03800138000", "03800138000"),                       # a mobile label, a leading 0 (no trunk 0 + 1)
    ("手机号 2380013800", "2380013800"),                       # a mobile label, 10 digits
    ("1380013800", "1380013800"),                             # all the message says
    ("手机 010-6000-0000", "010-6000-0000"),                   # a landline where a mobile was asked for
    ("电话 128\n0000 1234", "128\n0000 1234"),                 # across a line break after a label
    ("电话 一三八零零零零一二三", "一三八零零零零一二三"),             # Chinese numerals, one short
])
def test_an_invalid_candidate_is_recorded_when_it_looks_like_an_attempt(lock_book, text, quote):
    [(got, _, valid)] = read(text, lock_book)
    assert (got, valid) == (quote, False)


@pytest.mark.parametrize("number", ["13800000000", "13333333333", "13812345678", "19999999999", "14000000000",
                                    "16666666666"])
def test_seed_003_a_test_looking_number_is_never_invalid(lock_book, number):
    for typed in (number, f"+86 {number}", f"{number[:3]} {number[3:7]} {number[7:]}"):
        assert read(f"手机 {typed}", lock_book) == [(typed, number, True)]
