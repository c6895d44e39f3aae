"""`groundrules tokens add` (issue 20, item 6): a random token printed once, only its digest kept, the
file checked as the server checks it, and the token accepted by a running server after SIGHUP's reload."""
from __future__ import annotations

import stat

import yaml

from cli_inproc import run_cli
from said import said, words
from groundrules.transports.tokens import load_grants, token_digest


def add(path, principal="agent-7", role="agent", projects="alpha,beta"):
    return run_cli("tokens", "add", "--principal", principal, "--role", role, "--projects", projects, "--file", path)


def test_a_token_is_printed_once_and_only_its_digest_stored(tmp_path, rulebook):
    path = tmp_path / "tokens.yaml"
    first, second = add(path), add(path, principal="user:alice", role="reviewer", projects="alpha")
    assert first.returncode == second.returncode == 0
    tokens = [r.stdout.decode().strip() for r in (first, second)]
    assert len(set(tokens)) == 2 and all(len(t) >= 40 for t in tokens)
    text = path.read_text("utf-8")
    assert not any(t in text for t in tokens)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    grants = load_grants(path, rulebook.table("roles").roles)
    assert grants.caller(tokens[0]).principal == "agent-7" and grants.caller(tokens[0]).projects == ("alpha", "beta")
    assert grants.caller(tokens[1]).role == "reviewer"
    assert [e["sha256"] for e in yaml.safe_load(text)["tokens"]] == [token_digest(t) for t in tokens]


def test_what_the_server_would_refuse_is_not_written(tmp_path):
    path = tmp_path / "tokens.yaml"
    assert add(path).returncode == 0
    before = path.read_bytes()
    for bad in (add(path, role="admin"), add(path, role="reviewer"), add(path, projects=" , ")):
        assert bad.returncode == 1 and bad.stdout == b"" and b"Traceback" not in bad.stderr
        assert bad.stderr.decode().count("\n") == 1
    assert path.read_bytes() == before
    err = add(path, role="admin").stderr.decode("utf-8")
    assert err.startswith("groundrules tokens: TOKENS_INVALID: ") and "'admin'" in err
    assert all(w in err for w in words("tokens.role")) and said("usage.token_not_added") in err


def test_a_file_written_without_indentation_takes_the_new_entry_alike(tmp_path, rulebook):
    from http_support import write_tokens
    path = write_tokens(tmp_path / "tokens.yaml", {"tok-a": ("agent-a", "agent", ["alpha"])})
    added = add(path)
    assert added.returncode == 0, added.stderr
    grants = load_grants(path, rulebook.table("roles").roles)
    assert grants.caller("tok-a").principal == "agent-a"
    assert grants.caller(added.stdout.decode().strip()).principal == "agent-7"
