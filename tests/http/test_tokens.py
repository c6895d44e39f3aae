"""The tokens file is checked strictly: a typo fails the load with one line naming file:line:col."""
from __future__ import annotations

import pytest

from groundrules import GroundrulesError
from groundrules.transports.tokens import load_grants, token_digest
from said import said, worded_in

A = token_digest("tok-a")
B = token_digest("tok-b")


def entry(digest=A, principal="agent-7", role="agent", projects="[alpha, beta]", extra="") -> str:
    return (f"  - sha256: {digest}\n    principal: {principal}\n    role: {role}\n"
            f"    projects: {projects}\n{extra}")


def load(tmp_path, text: str, roles):
    path = tmp_path / "tokens.yaml"
    path.write_text(text, encoding="utf-8")
    return load_grants(path, roles)


def test_the_issue_sample_loads_and_a_token_finds_its_caller(tmp_path, rulebook):
    roles = rulebook.table("roles").roles
    grants = load(tmp_path, "tokens:\n" + entry() + entry(B, "user:alice", "reviewer", "[alpha]"), roles)
    caller = grants.caller("tok-a")
    assert (caller.principal, caller.role, caller.projects) == ("agent-7", "agent", ("alpha", "beta"))
    assert grants.caller("tok-b").role == "reviewer"
    assert grants.caller("tok-c") is None and grants.caller(A) is None     # the digest itself is no token


@pytest.mark.parametrize("text, line, words", [
    ("tokens:\n" + entry(role="admin"), 4, "unknown role 'admin'"),
    ("tokens:\n" + entry(digest=A[:-1]), 2, "64 lowercase hex"),
    ("tokens:\n" + entry(digest=A.upper()), 2, "64 lowercase hex"),
    ("tokens:\n" + entry() + entry(principal="agent-8"), 6, "listed twice"),
    ("tokens:\n" + entry() + entry(B, role="reviewer"), 7, "other grants"),
    ("tokens:\n" + entry(extra="    scopes: [x]\n"), 6, "unknown key 'scopes'"),
    ("tokens:\n" + entry(projects="[]"), 5, "non-empty list"),
    ("tokens:\n" + entry(projects="[alpha, alpha]"), 5, "listed twice"),
    ("tokens:\n" + entry(projects="[current]"), 5, "not 'current'"),
    ("tokens:\n  - sha256: " + A + "\n    principal: x\n    role: agent\n", 2, "missing key 'projects'"),
    ("tokens:\n" + entry() + "users: []\n", 1, "one top-level key 'tokens'"),
    ("tokens:\n" + entry(extra="  - [\n"), 6, ""),      # an unclosed [ is reported where it opens
])
def test_a_bad_tokens_file_fails_whole_naming_file_line_and_col(tmp_path, rulebook, text, line, words):
    with pytest.raises(GroundrulesError) as caught:
        load(tmp_path, text, rulebook.table("roles").roles)
    message = worded_in(caught.value, "en").message
    assert caught.value.code == "TOKENS_INVALID"
    assert message.startswith(f"{tmp_path / 'tokens.yaml'}:{line}:") and words in message
    assert "\n" not in message


def test_a_missing_file_is_named(tmp_path, rulebook):
    with pytest.raises(GroundrulesError) as caught:
        load_grants(tmp_path / "nope.yaml", rulebook.table("roles").roles)
    assert worded_in(caught.value).message == said("tokens.missing", at=f"{tmp_path / 'nope.yaml'}:1:1")
