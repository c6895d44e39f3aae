"""The closed step sets, one behaviour each, as an analyst would rely on them in a table."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from groundrules.locks.steps import NORMALIZERS, VALIDATORS


def norm(name: str, text: str, **args) -> str:
    return NORMALIZERS[name].build(args, 0.05)(text)


def check(name: str, value: str, **args) -> bool:
    return VALIDATORS[name].build(args, 0.05)(value)


def test_strip_labels_drops_one_label_only():
    assert norm("strip_labels", "微信号：wx_wang01", labels=["微信", "微信号"]) == "wx_wang01"
    assert norm("strip_labels", "VX vx123", labels=["vx"]) == "vx123"      # the value is not a label
    assert norm("strip_labels", "wx_wang01", labels=["微信"]) == "wx_wang01"


def test_fullwidth_maps():
    assert norm("fullwidth_digits", "１３８ab") == "138ab"
    assert norm("fullwidth_ascii", "ｌｉ＠１６３．ｃｏｍ\u3000Ｘ") == "li@163.com X"


@pytest.mark.parametrize("value, ok", [
    ("11010519491231002X", True), ("320583198501010012", True), ("320583198501010013", False),
    ("11010519491231002x", False), ("1101051949123100", False), ("11010519491231002A", False),
])
def test_gb11643_check_digit(value, ok):
    assert check("gb11643_check_digit", value) is ok


@pytest.mark.parametrize("value, ok", [
    ("11010520000229", True), ("11010519000229", False), ("11010520231301", False), ("11010518991231", False),
    ("110105２０００0229", False),
])
def test_date(value, ok):
    assert check("date", value, start=6, min_year=1900, max_year=2099) is ok


@pytest.mark.parametrize("value, ok", [
    ("a@b.cn", True), ("first.last+tag@mail.example.com", True), ("a@b", False), (".a@b.com", False),
    ("a.@b.com", False), ("a@-b.com", False), ("a@b.c0m", False), ("a@b.c", False), ("a" * 65 + "@b.com", False),
    ("a@@b.com", False),
])
def test_email_shape(value, ok):
    assert check("email_shape", value) is ok


def test_length_and_char_at():
    assert check("length", "12345", min=5, max=11) and not check("length", "1234", min=5)
    assert check("length", "1" * 11, equals=11) and not check("length", "1" * 12, equals=11)
    assert check("char_at", "13", index=1, **{"in": "3456789"}) and not check("char_at", "1", index=1, **{"in": "3"})

CHARS = " -()\u3000\u2005（）－"


@given(st.text(alphabet=CHARS + "0123456789abc１２", max_size=20))
def test_delete_chars_deletes_exactly_the_set_whatever_the_text(text):
    """The ASCII fast path and the translate path agree: every character of `chars`, and only those, goes."""
    assert norm("delete_chars", text, chars=CHARS) == "".join(c for c in text if c not in CHARS)


@given(st.text(alphabet="0123456789０１２３４５６７８９ab ", max_size=20))
def test_fullwidth_digits_maps_only_the_fullwidth_digits(text):
    assert norm("fullwidth_digits", text) == "".join(
        chr(ord(c) - 0xFEE0) if "０" <= c <= "９" else c for c in text)
