"""The `claim_map` kind: a verified token's claims -> the caller (principal, role, projects).

The bundled table (rules/oauth_claims.yaml) is read for what it says (its scopes, its rows), and
edited copies of it must fail the whole load at file:line:col with a stable code, as every table
kind does; a role the role table does not declare is caught by `groundrules lint`.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from groundrules import RulesError, load_rulebook
from groundrules.claim_map import Identity, Refusal, unknown_roles
from groundrules.analyst.lint import lint

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "rules" / "oauth_claims.yaml"


@pytest.fixture(scope="module")
def claims_map(rulebook):
    return rulebook.of_kind("claim_map")[0]


def token(**claims) -> dict:
    return {"iss": "https://idp.example", "aud": "https://mcp.example/mcp", "exp": 2_000_000_000, **claims}


def test_the_bundled_rows_give_each_role_its_scope(claims_map, rulebook):
    roles = rulebook.table("roles").roles
    required = " ".join(claims_map.required_scopes)
    for extra in claims_map.supported_scopes:
        found = claims_map.identity(token(sub="u-1", scope=f"{required} {extra}", groundrules_projects=["a"]))
        assert isinstance(found, Identity) and found.role in roles and found.principal == "u-1"
    roles_given = {claims_map.identity(token(sub="u", scope=f"{required} {s}")).role
                   for s in claims_map.supported_scopes}
    assert roles_given == {role for role, _, _ in claims_map.roles}


def test_scopes_come_from_a_string_or_a_list_claim(claims_map):
    required = list(claims_map.required_scopes)
    as_list = claims_map.identity(token(sub="u", **{claims_map.scope_claims[-1]: required}))
    as_text = claims_map.identity(token(sub="u", **{claims_map.scope_claims[0]: " ".join(required)}))
    assert isinstance(as_list, Identity) and as_list == as_text


def test_projects_keep_their_order_once_each(claims_map):
    source = claims_map.projects[0].claim
    found = claims_map.identity(token(sub="u", scope=" ".join(claims_map.required_scopes),
                                      **{source: ["beta", "alpha", "beta", 7]}))
    assert found.projects == ("beta", "alpha")
    spaced = claims_map.identity(token(sub="u", scope=" ".join(claims_map.required_scopes), **{source: "x y"}))
    assert spaced.projects == ("x", "y")


@pytest.mark.parametrize("claims, reason, status", [
    ({"scope": "groundrules"}, "no_principal", 401),
    ({"sub": "  ", "scope": "groundrules"}, "no_principal", 401),
    ({"sub": "u"}, "missing_scope", 403),
    ({"sub": "u", "scope": "openid profile"}, "missing_scope", 403),
])
def test_a_token_that_names_no_caller_is_refused_with_its_reason(claims_map, claims, reason, status):
    assert claims_map.identity(token(**claims)) == Refusal(reason, status)
    assert reason in claims_map.messages


def _root(tmp_path: Path, edit) -> Path:
    shutil.copytree(ROOT / "schemas", tmp_path / "schemas")
    (tmp_path / "rules").mkdir()
    shutil.copy(ROOT / "rules" / "roles.yaml", tmp_path / "rules" / "roles.yaml")
    shutil.copy(ROOT / "rules" / "messages.yaml", tmp_path / "rules" / "messages.yaml")
    data = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    edit(data)
    (tmp_path / "rules" / "oauth_claims.yaml").write_text(
        yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return tmp_path


def _set(path: str, value):
    def edit(data):
        *parents, last = path.split(".")
        node = data
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(last) if last.isdigit() else last] = value
    return edit


@pytest.mark.parametrize("edit, code, key", [
    (_set("roles.0.when", {"field": "groups", "any": {"field": ".", "eq": "x"}}), "unknown-fact",
     "roles[0].when.field"),
    (_set("projects", [{"claim": "groups", "pattern": "^gr-(.+$"}]), "bad-regex", "projects[0].pattern"),
    (_set("projects", [{"claim": "groups", "pattern": "^gr-(.+)$"}]), "no-project-group", "projects[0].pattern"),
    (_set("scopes.required", ["groundrules", "admin"]), "unsupported-required-scope", "scopes.required"),
    (_set("principal", "everyone"), "constant-principal", "principal"),
    (_set("tokens.algorithms", ["HS256"]), "bad-value", "tokens.algorithms[0]"),
    (_set("tokens.algorithms", ["none"]), "bad-value", "tokens.algorithms[0]"),
    (_set("messages.expired", "the access token has expired"), "bad-type", "messages.expired"),
    (_set("messages.expired", {"zh": "令牌已过期", "en": "the token has \"expired\""}), "no-ascii-description",
     "messages.expired"),
    (_set("tokens.leeway_s", 3600), "bad-value", "tokens.leeway_s"),
])
def test_a_broken_claim_map_fails_the_whole_load_where_it_is_broken(tmp_path, edit, code, key):
    with pytest.raises(RulesError) as caught:
        load_rulebook(_root(tmp_path, edit))
    problems = [p for p in caught.value.problems if p.code == code]
    assert problems, caught.value.problems
    assert problems[0].file.endswith("rules/oauth_claims.yaml") and problems[0].line > 1
    assert problems[0].key == key


def test_lint_names_a_role_the_role_table_does_not_declare(tmp_path):
    root = _root(tmp_path, _set("roles.0.role", "reveiwer"))
    book = load_rulebook(root)
    problems = list(unknown_roles(book))
    assert [(p.code, p.key, p.hint) for p in problems] == [("unknown-role", "roles[0].role",
                                                             "did you mean 'reviewer'?")]
    report = lint(root)
    assert report.failed and "unknown-role" in {p.code for p in report.problems}


def test_the_worked_example_of_the_docs_maps_as_the_docs_say(tmp_path):
    """docs/oauth.md's Keycloak example: its table keys, applied to a copy of the bundled table, map
    its token to the caller the page names."""
    page = (ROOT / "docs" / "oauth.md").read_text(encoding="utf-8").split("## Worked example", 1)[1]
    token_text = re.search(r"```json\n(.*?)```", page, re.S).group(1)
    keys = yaml.safe_load(re.search(r"```yaml\n(.*?)```", page, re.S).group(1))
    book = load_rulebook(_root(tmp_path, lambda data: data.update(keys)))
    found = book.of_kind("claim_map")[0].identity(json.loads(token_text))
    assert found == Identity("alice@acme", "reviewer", ("alpha", "beta"))
    assert "calls as `alice@acme`, role `reviewer`, projects `alpha, beta`" in " ".join(page.split())
