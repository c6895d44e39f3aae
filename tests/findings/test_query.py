"""query_findings and keyword search: Chinese keywords, filters, applicability, history, limits."""
from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings, strategies as st
from budget import examples

from findings_support import COUNTER, EXPERIMENT, finding, ok, refused
from groundrules.store.cjk_search import grams, match_expression

DRIFT = "GPU 温度漂移导致 logits 误差逐步放大"
SCOPE = {"match": {"runtime.backend": "vLLM"}, "context": {"commit": "0862527"}, "revalidate_on": ["code_change"]}


def ids(data: dict) -> list[str]:
    return [f["finding_id"] for f in data["findings"]]


def test_trigram_tokenizer_alone_cannot_find_two_character_words():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='trigram')")
    conn.execute("INSERT INTO t (rowid, x) VALUES (1, ?)", (DRIFT,))
    assert conn.execute("SELECT rowid FROM t WHERE t MATCH ?", ("温度漂",)).fetchall() == [(1,)]
    assert conn.execute("SELECT rowid FROM t WHERE t MATCH ?", ("漂移",)).fetchall() == []


@pytest.mark.parametrize("keyword", ["漂移", "温度漂移", "漂", "误差", "logits", "GPU 漂移", "漂移导致logits",
                                     "logit", "gp 漂移"])   # a term's last Latin word is a prefix (issue 32, item 6)
def test_keyword_search_finds_chinese_words_of_any_length(ledger, keyword):
    hit = ok(ledger.call("log_finding", finding(statement=DRIFT)))["finding_id"]
    ok(ledger.call("log_finding", finding(statement="探针结果与 shift 无关", details="")))
    assert ids(ok(ledger.call("query_findings", {"keyword": keyword}))) == [hit]


@pytest.mark.parametrize("keyword", ["移温", "漂移误差", "logitz", "ogits", "温度 sglang"])
def test_keyword_search_does_not_match_what_is_not_there(ledger, keyword):
    ok(ledger.call("log_finding", finding(statement=DRIFT)))
    assert ids(ok(ledger.call("query_findings", {"keyword": keyword}))) == []


def test_a_latin_keyword_finds_the_words_it_begins(ledger):
    fid = ok(ledger.call("log_finding", finding(statement="the pool was exhausted under load")))["finding_id"]
    assert ids(ok(ledger.call("query_findings", {"keyword": "exhaust"}))) == [fid]
    assert ids(ok(ledger.call("query_findings", {"keyword": "xhaust"}))) == []


def test_keyword_searches_details_too(ledger):
    fid = ok(ledger.call("log_finding", finding(statement="差异原因", details="复现时观察到温度漂移")))["finding_id"]
    assert ids(ok(ledger.call("query_findings", {"keyword": "漂移"}))) == [fid]


def test_keyword_without_letters_is_refused(ledger):
    refused(ledger.call("query_findings", {"keyword": "+-*/"}), "INVALID_ARGUMENT")


CJK = st.text(alphabet=st.sampled_from(list("温度漂移导致误差放大探针结果主因后端")), min_size=1, max_size=12)


@settings(max_examples=examples(200), deadline=None)
@given(text=st.lists(st.one_of(CJK, st.sampled_from(["vLLM", "shift", "0862527", " ", "，"])), min_size=1,
                     max_size=6).map("".join), data=st.data())
def test_every_substring_of_a_cjk_run_is_found(text, data):
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE s USING fts5(grams, content='', tokenize='unicode61 remove_diacritics 2')")
    conn.execute("INSERT INTO s (rowid, grams) VALUES (1, ?)", (grams(text),))
    runs = [r for r in __import__("regex").findall(r"\p{Han}+", text)]
    if not runs:
        return
    run = data.draw(st.sampled_from(runs))
    start = data.draw(st.integers(0, len(run) - 1))
    end = data.draw(st.integers(start + 1, len(run)))
    needle = run[start:end]
    assert conn.execute("SELECT rowid FROM s WHERE s MATCH ?", (match_expression(needle),)).fetchall() == [(1,)]


def test_tags_states_and_scope_filters_combine(ledger):
    a = ok(ledger.call("log_finding", finding(statement=DRIFT, tags=["gpu", "debugging"], epistemic_state="provisional",
                                              evidence=[EXPERIMENT], scope=SCOPE)))["finding_id"]
    b = ok(ledger.call("log_finding", finding(statement="温度漂移与批大小无关", tags=["gpu"])))["finding_id"]
    c = ok(ledger.call("log_finding", finding(statement="另一个漂移", tags=["cpu"], epistemic_state="provisional",
                                              scope={"match": {"runtime.backend": "sglang"}})))["finding_id"]
    assert ids(ok(ledger.call("query_findings", {"tags": ["gpu"]}))) == [b, a]
    assert ids(ok(ledger.call("query_findings", {"tags": ["gpu", "debugging"]}))) == [a]
    assert ids(ok(ledger.call("query_findings", {"epistemic_state": "provisional"}))) == [c, a]
    assert ids(ok(ledger.call("query_findings", {"epistemic_state": ["unassessed", "provisional"],
                                                 "keyword": "漂移"}))) == [c, b, a]
    mix = {"keyword": "漂移", "tags": ["gpu"], "epistemic_state": "provisional",
           "scope_context": {"runtime": {"backend": "vLLM"}, "commit": "0862527"}}
    data = ok(ledger.call("query_findings", mix))
    assert ids(data) == [a]
    assert data["findings"][0]["applicability"]["verdict"] == "applicable"


def test_applicability_is_computed_per_caller(ledger):
    fid = ok(ledger.call("log_finding", finding(statement=DRIFT, scope=SCOPE)))["finding_id"]

    def verdict(ctx=None, **extra):
        args = {"keyword": "漂移", **extra}
        if ctx is not None:
            args["scope_context"] = ctx
        found = ok(ledger.call("query_findings", args))["findings"]
        return [(f["applicability"]["verdict"], f["applicability"]["current"]) for f in found]

    assert verdict({"runtime.backend": "vLLM", "commit": "0862527", "config": "c1"}) == [("applicable", True)]
    assert verdict({"runtime": {"backend": "vLLM"}, "commit": "0862527"}) == [("applicable", True)]
    assert verdict({"runtime": {"backend": "vLLM"}, "commit": "ffff000"}) == [("needs_revalidation", False)]
    assert verdict({"commit": "0862527"}) == [("unknown", False)]
    assert verdict() == [("unknown", False)]
    assert verdict({"runtime": {"backend": "sglang"}}) == []
    assert verdict({"runtime": {"backend": "sglang"}}, include_history=True) == [("incompatible", False)]
    # nothing is written by a query
    assert ok(ledger.call("get_finding", {"finding_id": fid}))["finding"]["version"] == 1


def test_conditional_when_a_trigger_cannot_be_checked(ledger):
    ok(ledger.call("log_finding", finding(statement=DRIFT, scope={"revalidate_on": ["code_change"]})))
    found = ok(ledger.call("query_findings", {"keyword": "漂移", "scope_context": {"commit": "0862527"}}))["findings"]
    assert [(f["applicability"]["verdict"], f["applicability"]["current"]) for f in found] == [("conditional", True)]
    ok(ledger.call("log_finding", finding(statement="无范围的漂移", scope={})))
    found = ok(ledger.call("query_findings", {"keyword": "无范围"}))["findings"]
    assert [f["applicability"]["verdict"] for f in found] == ["applicable"]


def test_history_is_only_listed_when_asked_and_never_as_current(ledger):
    old = ok(ledger.call("log_finding", finding(statement=DRIFT, scope=SCOPE)))["finding_id"]
    new = ok(ledger.call("supersede_finding", {"finding_id": old, "reason": "细化", "expected_version": 1,
                                               "new": finding(statement="温度漂移在 80℃ 以上导致误差",
                                                              scope=SCOPE)}))["finding_id"]
    ctx = {"runtime": {"backend": "vLLM"}, "commit": "0862527"}
    assert ids(ok(ledger.call("query_findings", {"keyword": "漂移", "scope_context": ctx}))) == [new]
    found = ok(ledger.call("query_findings", {"keyword": "漂移", "scope_context": ctx,
                                              "include_history": True}))["findings"]
    assert [(f["finding_id"], f["lifecycle_state"], f["applicability"]["current"]) for f in found] == [
        (new, "active", True), (old, "superseded", False)]
    refused(ledger.call("query_findings", {"lifecycle_state": "superseded"}), "INVALID_ARGUMENT")
    only_old = ok(ledger.call("query_findings", {"lifecycle_state": "superseded", "include_history": True}))
    assert ids(only_old) == [old]


def test_refuted_findings_stay_listed_with_their_state(ledger):
    fid = ok(ledger.call("log_finding", finding(statement=DRIFT)))["finding_id"]
    ok(ledger.call("refute_finding", {"finding_id": fid, "reason": "r", "evidence": [COUNTER], "expected_version": 1}))
    found = ok(ledger.call("query_findings", {"keyword": "漂移"}))["findings"]
    assert [(f["finding_id"], f["epistemic_state"]) for f in found] == [(fid, "refuted")]


def test_limit_defaults_to_20_with_a_hard_cap(ledger, book):
    for n in range(23):
        ok(ledger.call("log_finding", finding(statement=f"漂移记录 {n}")))
    data = ok(ledger.call("query_findings", {"keyword": "漂移"}))
    assert (data["count"], data["limit"], data["truncated"]) == (20, 20, True)
    cap = book.table("findings_vocabulary").limits["query_max"]
    assert ok(ledger.call("query_findings", {"keyword": "漂移", "limit": cap}))["count"] == 23
    refused(ledger.call("query_findings", {"limit": cap + 1}), "INVALID_ARGUMENT")
    refused(ledger.call("query_findings", {"limit": 0}), "INVALID_ARGUMENT")
    assert ok(ledger.call("query_findings", {"keyword": "漂移", "limit": 23}))["truncated"] is False


def test_a_refuted_finding_is_listed_but_never_current(ledger):
    fid = ok(ledger.call("log_finding", finding(statement=DRIFT, scope={})))["finding_id"]
    ok(ledger.call("refute_finding", {"finding_id": fid, "reason": "r", "evidence": [COUNTER], "expected_version": 1}))
    found = ok(ledger.call("query_findings", {"keyword": "漂移", "scope_context": {"commit": "0862527"}}))["findings"]
    assert [(f["applicability"]["verdict"], f["applicability"]["current"]) for f in found] == [("applicable", False)]


@pytest.mark.parametrize("state", ["withdrawn", "archived"])
def test_withdrawn_and_archived_records_are_history(ledger, state):
    fid = ok(ledger.call("log_finding", finding(statement=DRIFT, scope={})))["finding_id"]
    ok(ledger.call("set_finding_state", {"finding_id": fid, "lifecycle_state": state, "reason": "r",
                                         "expected_version": 1}))
    assert ok(ledger.call("query_findings", {"keyword": "漂移"}))["findings"] == []
    found = ok(ledger.call("query_findings", {"keyword": "漂移", "include_history": True}))["findings"]
    assert [(f["lifecycle_state"], f["applicability"]["current"]) for f in found] == [(state, False)]


@pytest.mark.parametrize("order", [0, 1])
def test_a_key_given_both_nested_and_dotted_is_refused(ledger, order):
    """Which of the two values would win depended on the order of the keys: refused instead."""
    ok(ledger.call("log_finding", finding(statement=DRIFT, scope=SCOPE)))
    parts = [("runtime.backend", "sglang"), ("runtime", {"backend": "vLLM"})]
    ctx = dict(parts if order == 0 else parts[::-1])
    error = refused(ledger.call("query_findings", {"keyword": "漂移", "scope_context": ctx}), "INVALID_ARGUMENT")
    assert error["field"] == "scope_context" and "runtime.backend" in error["message"]
    refused(ledger.call("revalidate_finding", {"finding_id": "F-000001", "result": "insufficient", "reason": "复查",
                                               "expected_version": 1, "scope_context": ctx}), "INVALID_ARGUMENT")
