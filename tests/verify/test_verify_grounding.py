"""Grounding is exact: verbatim quotes (any order, overlapping) are always found, absent ones
never, and every offset returned indexes its quote (code points, end exclusive)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from budget import examples

from groundrules.verification import verify
from groundrules.verification.grounding import locate

from verify_support import load_verify_book

BOOK = load_verify_book()      # module-level: hypothesis re-runs the test body, not the fixture

# Chinese, ASCII, full-width punctuation and astral characters (one code point, two UTF-16 units)
ALPHABET = st.sampled_from(list("订单会议时间开始结束查询分析原因取消修改，。：；！？ 0123456789:AB-") + ["😀", "𠀋"])
TEXTS = st.text(ALPHABET, min_size=1, max_size=80)


@given(TEXTS, st.data())
def test_a_verbatim_slice_is_located_at_its_first_occurrence(text, data):
    i = data.draw(st.integers(0, len(text) - 1))
    j = data.draw(st.integers(i + 1, len(text)))
    quote = text[i:j]
    start, end = locate(text, quote)
    assert text[start:end] == quote
    assert start == text.find(quote) and start <= i


@given(TEXTS, st.text(ALPHABET, min_size=1, max_size=12))
def test_an_absent_quote_is_never_located(text, quote):
    if quote not in text:
        assert locate(text, quote) is None


def test_the_empty_quote_is_never_located():
    assert locate("任何文本", "") is None


def candidate(text: str, quotes: list[str]) -> dict:
    """Every quote cited as normalized evidence of one string field (so only grounding is judged)."""
    return {"intent": {"input": text, "normalizedInput": text, "primaryIntent": "q", "requirements": [],
                       "intents": [{"id": "i1", "action": "query", "target": "t", "requirements": [],
                                    "status": "ready"}], "prohibitions": []},
            "extraction": {"data": {"v": "x"},
                           "evidence": [{"path": "/data/v", "mode": "normalized",
                                         "sources": [{"sourceId": "input", "quote": q}]} for q in quotes],
                           "descriptionChecks": [], "fieldResults": [
                               {"path": "/data/v", "status": "extracted", "explanation": ""}], "issues": []}}


SCHEMA = {"type": "object", "properties": {"v": {"type": "string"}}}


@settings(max_examples=examples(60), deadline=None)
@given(TEXTS, st.data())
def test_verify_grounds_exactly(text, data):
    slices = data.draw(st.lists(st.tuples(st.integers(0, len(text) - 1), st.integers(1, 12)),
                                min_size=1, max_size=6))
    verbatim = [text[i:i + n] for i, n in slices]
    invented = data.draw(st.lists(st.text(ALPHABET, min_size=1, max_size=6), max_size=4))
    quotes = data.draw(st.permutations(verbatim + invented))
    report = verify({"input": text}, SCHEMA, candidate(text, quotes), BOOK)
    assert len(report["grounding"]) == len(quotes)
    not_found = set()
    for entry, quote in zip(report["grounding"], quotes):
        assert entry["quote"] == quote
        if quote in text:
            assert text[entry["start"]:entry["end"]] == quote
        else:
            assert entry["start"] is None and entry["end"] is None
            not_found.add(entry["path"] + "/quote")
    issues = report["error"]["issues"] if report["error"] else []
    assert {i["path"] for i in issues if i["code"] == "QUOTE_NOT_FOUND"} == not_found
    # a quote not found refuses; all found, only another check may (a drawn text can ask for two
    # actions, which the candidate's one intent merges: 查询…分析)
    assert report["ok"] is (not not_found and not any(i["code"] != "QUOTE_NOT_FOUND" for i in issues))


def test_overlapping_quotes_in_any_order(vbook):
    text = "查询会议时间：开始时间09:00，结束时间10:00。"
    quotes = ["结束时间10:00", "时间", "开始时间09:00，结束", "09:00，结束时间10"]
    report = verify({"input": text}, SCHEMA, candidate(text, quotes), vbook)
    assert report["ok"] is True
    assert [(g["start"], g["end"]) for g in report["grounding"]] == [(17, 26), (4, 6), (7, 19), (11, 23)]


def test_offsets_count_code_points_not_bytes(vbook):
    text = "😀𠀋订单 A-1024"
    report = verify({"input": text}, SCHEMA, candidate(text, ["A-1024"]), vbook)
    assert (report["grounding"][0]["start"], report["grounding"][0]["end"]) == (5, 11)


def test_context_sources_are_indexed_from_zero(vbook):
    text = "按上面说的来。"
    request = {"input": text, "context": [{"role": "user", "content": "修复登录失败。"},
                                          {"role": "assistant", "content": "好的。"}]}
    cand = candidate(text, ["修复登录失败"])
    cand["extraction"]["evidence"][0]["sources"][0]["sourceId"] = "context/0"
    report = verify(request, SCHEMA, cand, vbook)
    assert report["ok"] is True and report["grounding"][0]["start"] == 0
    cand["extraction"]["evidence"][0]["sources"][0]["sourceId"] = "context/2"
    report = verify(request, SCHEMA, cand, vbook)
    assert [i["code"] for i in report["error"]["issues"]] == ["SOURCE_UNKNOWN"]


def test_near_misses_are_not_grounded(vbook):
    """What fuzzy aligners accept: a one-character prefix, a full-width colon, a paraphrase."""
    text = "查询会议时间：开始时间09:00，结束时间10:00。"
    for quote in ("10：00", "结束时间 10:00", "结束于10:00", "查询会议时间。"):
        report = verify({"input": text}, SCHEMA, candidate(text, [quote]), vbook)
        assert report["grounding"][0]["start"] is None
        assert [i["code"] for i in report["error"]["issues"]] == ["QUOTE_NOT_FOUND"]


def test_exact_mode_needs_value_equal_to_quote(vbook):
    text = "结束时间10:00。"
    cand = candidate(text, ["10:00"])
    cand["extraction"]["evidence"][0]["mode"] = "exact"
    cand["extraction"]["data"]["v"] = "10:00"
    assert verify({"input": text}, SCHEMA, cand, vbook)["ok"] is True
    cand["extraction"]["data"]["v"] = "10点"
    report = verify({"input": text}, SCHEMA, cand, vbook)
    assert [i["code"] for i in report["error"]["issues"]] == ["EXACT_VALUE_MISMATCH"]


@settings(max_examples=examples(60), deadline=None)
@given(TEXTS, TEXTS, st.data())
def test_every_section_and_source_is_grounded_exactly(text, context, data):
    """Quotes in descriptionChecks and quotes citing context/N obey the same law as evidence."""
    sources = {"input": text, "context/0": context}
    cited = []
    for _ in range(data.draw(st.integers(1, 6))):
        sid = data.draw(st.sampled_from(sorted(sources)))
        source = sources[sid]
        i = data.draw(st.integers(0, len(source) - 1))
        quote = data.draw(st.one_of(st.just(source[i:i + data.draw(st.integers(1, 12))]),
                                    st.text(ALPHABET, min_size=1, max_size=6)))
        cited.append({"sourceId": sid, "quote": quote})
    split = data.draw(st.integers(0, len(cited)))
    cand = candidate(text, ["x"])
    cand["extraction"]["evidence"][0]["sources"] = cited[:split] or [{"sourceId": "input", "quote": text}]
    cand["extraction"]["descriptionChecks"] = [{"path": "/data", "verdict": "satisfied", "explanation": "",
                                               "sources": cited[split:]}]
    schema = dict(SCHEMA, description="根描述。")
    request = {"input": text, "context": [{"role": "user", "content": context}]}
    report = verify(request, schema, cand, BOOK)
    for entry in report["grounding"]:
        source = sources[entry["sourceId"]]
        if entry["quote"] in source:
            assert source[entry["start"]:entry["end"]] == entry["quote"]
        else:
            assert entry["start"] is None and entry["end"] is None
    wrong = {e["path"] + "/quote" for e in report["grounding"] if e["start"] is None}
    issues = report["error"]["issues"] if report["error"] else []
    assert {i["path"] for i in issues if i["code"] == "QUOTE_NOT_FOUND"} == wrong
    # a quote not found refuses; all found, only another check may (the drawn context can read as a
    # withdrawal of the request, issue 31: 取消改 is one)
    assert report["ok"] is (not wrong and not any(i["code"] != "QUOTE_NOT_FOUND" for i in issues))
