"""Issue 31, item 1 (design.md: "A value follows from its quote"): a `normalized` evidence item
claims that a mechanical rule turns its quote into the value; where rules/value_derivations.yaml
holds that rule (a lock table, a normalizer) the verifier derives the value and compares, and
where none does it says the value is unchecked. Every case of tests/cases/verify/derivations says
what it expects; the tests here add the pipeline's scale and that the tables decide."""
from __future__ import annotations

import copy
import random
import shutil

import pytest
import yaml

from groundrules import load_rulebook
from verify_support import ROOT, VERIFY_TABLES, cases, expectations, tool

EXPECTED = expectations("derivations")
SEPARATORS = (" ", "-", "", "~", "，", " / ", ".", "（", "")


def codes(items):
    return [i["code"] for i in items]


def answer(envelope: dict) -> tuple:
    report = envelope["data"]
    return report["ok"], codes((report["error"] or {}).get("issues", [])), codes(report["warnings"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_derivation_case_gets_the_answer_it_expects(vbook, name):
    expect = EXPECTED[name]
    assert answer(tool(cases("derivations")[name], vbook, report=True)) == \
        (expect["ok"], expect["issues"], expect["warnings"])


def test_the_refusal_names_the_field_the_quote_and_the_derived_value(vbook):
    report = tool(cases("derivations")["phone_not_derived"], vbook, report=True)["data"]
    (issue,) = report["error"]["issues"]
    assert report["error"]["code"] == "MODEL_OUTPUT_INVALID" and report["repairable"] is True
    assert issue["path"] == "/extraction/evidence/0/sources/0/quote"
    assert all(part in issue["message"] for part in ("'phone'", "13999999999", "138 1234 5678", "13812345678"))


def _phone_case(rng: random.Random, wrong: bool) -> dict:
    digits = "1" + rng.choice("3456789") + "".join(rng.choice("0123456789") for _ in range(9))
    sep = rng.choice([s for s in SEPARATORS if s != "（"])
    quote = sep.join((digits[:3], digits[3:7], digits[7:]))
    value = digits
    while wrong and value == digits:
        value = "1" + rng.choice("3456789") + "".join(rng.choice("0123456789") for _ in range(9))
    payload = copy.deepcopy(cases("derivations")["phone_derived"])
    text = f"客户说：手机号是 {quote}，下午联系。"
    payload["request"]["input"] = payload["candidate"]["intent"]["input"] = text
    payload["candidate"]["intent"]["normalizedInput"] = text
    payload["candidate"]["extraction"]["data"]["phone"] = value
    payload["candidate"]["extraction"]["evidence"][0]["sources"][0]["quote"] = quote
    return payload


def test_no_phone_value_that_does_not_follow_from_its_quote_verifies(vbook):
    """The issue's pipeline in small: phones as people type them, the value each candidate claims
    either the quote's or another number; every wrong one is refused, every right one accepted."""
    rng = random.Random(31)
    for n in range(300):
        wrong = n % 2 == 0
        ok, issues, _ = answer(tool(_phone_case(rng, wrong), vbook, report=True))
        assert (ok, issues) == ((False, ["VALUE_NOT_DERIVED"]) if wrong else (True, [])), n


def _book(tmp_path, edit):
    for folder in ("rules", "schemas", "locks"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    path = tmp_path / "rules" / "value_derivations.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return load_rulebook(tmp_path, files=[tmp_path / f for f in VERIFY_TABLES])


def test_which_schema_words_declare_a_kind_and_what_an_unread_quote_means_are_the_tables(tmp_path):
    def edit(data):
        wechat = next(k for k in data["kinds"] if k["id"] == "wechat")
        wechat["no_reading"] = "refuse"
        phone = next(k for k in data["kinds"] if k["id"] == "cn_mobile")
        phone["names"].append("手机")
    book = _book(tmp_path, edit)
    assert answer(tool(cases("derivations")["wechat_unread"], book, report=True)) == (False, ["VALUE_NOT_DERIVED"], [])
    payload = copy.deepcopy(cases("derivations")["phone_not_derived"])
    payload["schema"]["properties"]["phone"] = {"type": "string", "x-kind": "手机"}
    assert answer(tool(payload, book, report=True)) == (False, ["VALUE_NOT_DERIVED"], [])
