"""The message catalogue (rules/messages.yaml) and the per-language form of every table's messages:
each error code has a sentence in every language the catalogue declares, every language of a message
uses the same placeholders (one too many or too few fails the load at its line), and a rulebook
speaking another language decides the same and says it in that language."""
from __future__ import annotations

from pathlib import Path

import pytest

from groundrules import Caller, Service
from groundrules.analyst.lint import lint
from groundrules.core import codes
from groundrules.core.errors import RulesError
from groundrules.core.messages import all_codes
from groundrules.core.rulebook import load
from groundrules.evidence import fold
from table_edits import TableFile



@pytest.fixture()
def root(tables_copy: Path) -> Path:
    return tables_copy


def problems_of(root: Path) -> list:
    with pytest.raises(RulesError) as caught:
        load(root, cache=False)
    return list(caught.value.problems)


def test_every_code_has_a_sentence_in_every_language(rulebook):
    catalogue = rulebook.table("messages")
    assert catalogue.languages[0] == catalogue.default and len(catalogue.languages) > 1
    assert set(catalogue.codes) == set(all_codes())
    for code in all_codes():
        said = {catalogue.codes.speaking(lang)[code].render({}, {"kind": "X"}) for lang in catalogue.languages}
        assert len(said) == len(catalogue.languages), code       # each language says it its own way


def test_a_code_without_a_sentence_fails_the_load_naming_it(root):
    catalogue = TableFile(root / "rules" / "messages.yaml")
    text = catalogue.text
    line = next(l for l in text.splitlines() if l.strip().startswith(f"{codes.LOCK_DROPPED}:"))
    (root / "rules" / "messages.yaml").write_text(text.replace(line + "\n", ""), encoding="utf-8")
    [problem] = [p for p in problems_of(root) if p.code == "missing-code"]
    assert problem.file == "rules/messages.yaml" and codes.LOCK_DROPPED in problem.message


def test_a_placeholder_one_language_adds_fails_the_load_at_its_line(root):
    refusals = TableFile(root / "rules" / "evidence_refusals.yaml")
    line, _ = refusals._where(("codes", "DUPLICATE_ID", "message", "en"))
    refusals.prefix_value(("codes", "DUPLICATE_ID", "message", "en"), "{idd} ")
    [problem] = problems_of(root)
    assert (problem.file, problem.line, problem.code) == ("rules/evidence_refusals.yaml", line, "unknown-placeholder")
    assert "{idd}" in problem.message and "did you mean 'id'" in problem.hint


def test_a_placeholder_one_language_leaves_out_fails_the_load_at_its_line(root):
    roles = TableFile(root / "rules" / "roles.yaml")
    line, _ = roles._where(("messages", "permission_denied", "en"))
    path = root / "rules" / "roles.yaml"
    path.write_text(roles.text.replace('"role {role} may not call tool {tool}"', '"role {role} may not call it"'),
                    encoding="utf-8")
    [problem] = problems_of(root)
    assert (problem.file, problem.line, problem.code) == ("rules/roles.yaml", line, "missing-placeholder")
    assert "{tool}" in problem.message


def test_a_message_written_in_one_language_only_fails_the_load(root):
    path = root / "rules" / "finding_provenance.yaml"
    text = path.read_text(encoding="utf-8")
    start = text.index("  method_denied:")
    end = text.index("  relation_denied:")
    zh_line = next(l for l in text[start:end].splitlines() if l.strip().startswith("zh:"))
    path.write_text(text[:start] + "  method_denied: " + zh_line.strip()[4:] + "\n" + text[end:], encoding="utf-8")
    problems = problems_of(root)
    assert problems and all(p.file == "rules/finding_provenance.yaml" for p in problems)


def test_lint_holds_every_message_in_the_catalogues_order(root):
    path = root / "rules" / "roles.yaml"
    text = path.read_text(encoding="utf-8")
    zh = '    zh: "工具参数必须是一个 JSON 对象"\n'
    en = '''    en: "a tool's arguments must be one JSON object"\n'''
    assert zh + en in text
    path.write_text(text.replace(zh + en, en + zh), encoding="utf-8")
    found = [p for p in lint(root).problems if p.code == "languages-order"]
    assert [(p.file, p.key) for p in found] == [("rules/roles.yaml", "messages.not_an_object")]


def test_a_rulebook_speaking_another_language_decides_alike_and_says_it_so(rulebook):
    other = rulebook.table("messages").languages[1]
    spoken = rulebook.speaking(other)
    assert spoken.version == rulebook.version and spoken is rulebook.speaking(other)
    payload = {"now": "2024-05-01T12:00:00+08:00", "records": [
        {"id": "M1", "type": "message", "role": "user", "state": "sent", "content": "你好"},
        {"id": "M1", "type": "message", "role": "user", "state": "sent", "content": "再见"}], "interpretations": []}
    errors = []
    for book in (rulebook, spoken):
        with pytest.raises(Exception) as caught:
            fold(payload, book)
        errors.append(caught.value)
    assert [e.code for e in errors] == [codes.DUPLICATE_ID] * 2 and errors[0].details == errors[1].details
    assert errors[0].message != errors[1].message


def test_the_servers_language_is_the_default_of_its_calls_and_a_call_may_ask_another(rulebook):
    languages = rulebook.table("messages").languages
    agent = Caller("a", "agent", ("p",))
    said = {lang: Service(rulebook, lang=lang).call("no_such_tool", {}, agent) for lang in languages}
    assert len({e["error"]["message"] for e in said.values()}) == len(languages)
    for lang in languages:
        for server in languages:
            assert Service(rulebook, lang=server).call("no_such_tool", {}, agent, lang=lang) == said[lang]


def test_a_server_in_a_language_the_catalogue_does_not_offer_does_not_start(rulebook):
    with pytest.raises(Exception) as caught:
        Service(rulebook, lang="xx")
    assert caught.value.code == codes.USAGE
