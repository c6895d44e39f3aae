"""Safe templates: names, filters, braces, and the load errors for each misuse."""
from __future__ import annotations

import pytest

from groundrules.core.templates import compile_template


def render(text, value, bindings=None):
    faults = []
    tmpl = compile_template(text, ("t",), faults)
    assert faults == []
    return tmpl.render(value, bindings)


def test_paths_bindings_and_filters():
    value = {"metrics": {"n": 3}, "s": "部分"}
    assert render("共 {metrics.n} 个：{s}", value) == "共 3 个：部分"
    assert render("{xs|join:、}", {}, {"xs": ["题量", "时长"]}) == "题量、时长"
    assert render("{xs|count}", {}, {"xs": ["a", "b", "c"]}) == "3"
    assert render("{xs|first}", {}, {"xs": ["a", "b"]}) == "a"
    assert render("{missing|default:无}", {}) == "无"
    assert render("{xs|join:、|default:无}", {}, {"xs": []}) == "无"
    assert render("{xs|default:无}", {}, {"xs": []}) == "无"                     # an empty list is empty
    assert render("全部{xs|join:、|prefix:：|default:（无）}", {}, {"xs": ["a", "b"]}) == "全部：a、b"
    assert render("全部{xs|join:、|prefix:：|default:（无）}", {}, {"xs": []}) == "全部（无）"
    assert render("{q|excerpt:3}", {"q": "申论题量"}) == "申论题…"
    assert render("{q|excerpt:4}", {"q": "申论题量"}) == "申论题量"
    assert render("的{k|map:withdrawal=撤回,prohibition=禁止}", {"k": "prohibition"}) == "的禁止"
    assert render("的{k|map:withdrawal=撤回}", {"k": "reserved"}) == "的reserved"   # a code the map lacks is kept


@pytest.mark.parametrize("text, xs, out", [
    ("{xs|max}", [3, 11, 2], "11"),
    ("{xs|min}", [3, 1.5, 2], "1.5"),
    ("{xs|max}", ["2023-12-31", "2024-05-01", "2024-01-09"], "2024-05-01"),       # ISO dates order as text
    ("{xs|min}", ["b", "a", "c"], "a"),
    ("{xs|max|default:无}", [], "无"),
    ("{xs|max|default:无}", [1, "2"], "无"),                                      # mixed: nothing to compare
    ("{xs|max|default:无}", [True, False], "无"),                                 # booleans are not numbers
    ("{xs|sort|join:,}", ["时长", "b", "a", "题量"], "a,b,时长,题量"),
    ("{xs|sort|join:,}", [10, 9, 1.5], "1.5,9,10"),
    ("{xs|sort|join:,}", ["b", 2, None, True, "a", 1], "1,2,a,b,true,"),
    ("{xs|sort|first}", [{"k": 2}, {"k": 1}], '{"k":1}'),
    ("{xs|max}", 7, "7"),                                                          # not a list: itself
])
def test_min_max_and_sort(text, xs, out):
    assert render(text, {}, {"xs": xs}) == out


def test_sort_leaves_the_value_alone():
    xs = [3, 1, 2]
    assert render("{xs|sort|join:,}", {"xs": xs}) == "1,2,3" and xs == [3, 1, 2]


def test_literal_braces_and_plain_values():
    assert render("{{literal}} {b} {n}", {"b": True, "n": 1.5}) == "{literal} true 1.5"
    assert render("{none}", {"none": None}) == ""
    assert render("{lst}", {"lst": ["a", 1]}) == "a、1"


def test_bindings_shadow_paths():
    assert render("{s}", {"s": "path"}, {"s": "binding"}) == "binding"


@pytest.mark.parametrize("text, code", [
    ("{unclosed", "bad-template"),
    ("lone } brace", "bad-template"),
    ("{}", "bad-template"),
    ("{x|nope}", "unknown-filter"),
    ("{x|join}", "bad-template"),
    (42, "bad-template"),
])
def test_misuse_is_a_load_error(text, code):
    faults = []
    assert compile_template(text, ("t",), faults) is None
    assert faults[0].code == code
    assert faults[0].path == ("t",)


def test_unknown_name_is_refused_with_did_you_mean():
    faults = []
    compile_template("{slotz}", ("t",), faults, names=lambda n: n == "slots", name_choices=("slots",))
    assert faults[0].code == "unknown-field"
    assert faults[0].hint == "did you mean 'slots'?"


def test_misspelt_filter_hint():
    faults = []
    compile_template("{x|jion:、}", ("t",), faults)
    assert faults[0].hint == "did you mean 'join'?"


@pytest.mark.parametrize("arg", ["²", "１", "9" * 5000, "-1", "1.5"])
def test_excerpt_takes_ascii_digits_only_and_refuses_at_load(arg):
    """'²' passes str.isdigit() and 5000 digits pass it too, but int() refuses both: at load, not
    at render time inside explain."""
    faults = []
    assert compile_template(f"{{q|excerpt:{arg}}}", ("t",), faults) is None
    assert faults[0].code == "bad-template"


@pytest.mark.parametrize("name", ["join", "count"])
@pytest.mark.parametrize("value", [["a", 1, None, True, 2.5, [1], {"k": "v"}], [], "text", 3, None, {"a": 1}, ["x"]])
def test_inline_filters_are_their_functions(name, value):
    """Generated code writes some filters inline; they must say exactly what the function says."""
    from groundrules.core.templates import FILTERS, INLINE, render_value
    takes_arg, fn = FILTERS[name]
    arg = "、" if takes_arg else ""
    assert fn in INLINE
    inline = eval(INLINE[fn].format(x="x", a=repr(arg), rv="rv"), {"x": value, "rv": render_value})  # noqa: S307
    assert inline == fn(value, arg)


@pytest.mark.parametrize("name, value", [
    ("first", []), ("first", "text"), ("first", {"a": 1}), ("first", 3),
    ("min", []), ("min", [1, "a"]), ("min", [None]), ("max", []), ("max", [1, "a"]),
])
def test_a_filter_given_what_it_cannot_take_gives_nothing(name, value):
    """first of an empty list or of no list, min/max of an empty or mixed list: no value (the
    template then renders as a missing field does), never an exception or a guess."""
    from groundrules.core.templates import FILTERS, MISSING
    assert FILTERS[name][1](value, "") is MISSING


def test_sort_orders_objects_by_their_canonical_json():
    """Objects sort by their JSON with keys in order and characters as written (ensure_ascii off),
    so the order is the same whatever order a host wrote the keys in."""
    from groundrules.core.templates import FILTERS
    sort = FILTERS["sort"][1]
    assert sort([{"b": 0, "a": 1}, {"a": 2}], "") == [{"b": 0, "a": 1}, {"a": 2}]     # {"a": 1, "b": 0} < {"a": 2}
    assert sort([{"k": "中"}, {"k": "z"}], "") == [{"k": "z"}, {"k": "中"}]             # "z" < "中" by code point
