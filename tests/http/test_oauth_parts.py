"""The OAuth resource server's parts that need no authorization server: a local JWKS file, the
key-set rate limit under concurrent unknown key ids, the bearer header, the URLs it will talk to,
and what `serve` refuses to start with."""
from __future__ import annotations

import json
import shutil
import re
import time
from pathlib import Path

import anyio
import httpx2
import pytest
import yaml
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from groundrules import Service, load_rulebook
from groundrules.cli.main import main
from groundrules.core.errors import GroundrulesError
from groundrules.transports.jwks import checked_url, metadata_urls
from groundrules.transports.mcp_http import http_app
from groundrules.transports.oauth import Checked, Denied, OAuthVerifier
from groundrules.transports.oauth_http import bearer
from oauth_support import HOST, Clock, serving
from said import said, words
from groundrules.claim_map import header_safe

ROOT = Path(__file__).resolve().parents[2]
ISSUER = "https://idp.example"
RESOURCE = "https://mcp.example/mcp"


def key(kid: str) -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": kid, "alg": "RS256", "use": "sig"})


def write_jwks(path, *keys: RSAKey) -> None:
    path.write_text(json.dumps(KeySet(list(keys)).as_dict()), encoding="utf-8")


def signed(signer: RSAKey, **claims) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": RESOURCE, "sub": "u-1", "scope": "groundrules", "iat": now, "exp": now + 300,
            "groundrules_projects": ["alpha"], **claims}
    return jwt.encode({"alg": "RS256", "kid": signer.kid, "typ": "at+jwt"}, body, signer)


@pytest.fixture
def k1():
    return key("k1")


@pytest.fixture
def local(rulebook, tmp_path, k1):
    path = tmp_path / "jwks.json"
    write_jwks(path, k1)
    return path, OAuthVerifier.configured(rulebook, resource=RESOURCE, issuers=[ISSUER], jwks=str(path))


def check(verifier, token):
    return anyio.run(verifier.check, token)


def test_a_local_key_file_verifies_tokens_and_sighup_reads_it_again(local, k1):
    path, verifier = local
    first = check(verifier, signed(k1))
    assert isinstance(first, Checked) and first.scopes == ("groundrules",)
    k2 = key("k2")
    assert check(verifier, signed(k2)) == Denied("unknown_key", 401)
    write_jwks(path, k2, k1)
    assert check(verifier, signed(k2)) == Denied("unknown_key", 401)     # read a moment ago: not read again
    assert verifier.reload()
    found = check(verifier, signed(k2))
    assert isinstance(found, Checked) and found.caller.principal == "u-1" and found.caller.projects == ("alpha",)
    # the writer its records name: how it was authenticated, by whom, about whom (issue 30)
    assert found.caller.writer()["auth"] == {"method": "oauth", "issuer": ISSUER, "subject": "u-1"}


def test_many_tokens_with_unknown_key_ids_at_once_read_the_key_set_once(local, k1):
    _, verifier = local
    assert isinstance(check(verifier, signed(k1)), Checked)
    source = verifier.issuers[ISSUER]
    source.attempted_at -= source.refetch_min_s          # the last read is long enough ago for one more
    before, outcomes = source.fetches, []
    forged = [signed(key(f"forged-{i}")) for i in range(2)]

    async def many():
        async with anyio.create_task_group() as group:
            for i in range(20):
                group.start_soon(_one, verifier, forged[i % 2], outcomes)
    anyio.run(many)
    assert outcomes == [Denied("unknown_key", 401)] * 20
    assert source.fetches == before + 1


async def _one(verifier, token, outcomes):
    outcomes.append(await verifier.check(token))


def test_project_names_the_registry_cannot_use_are_dropped(local, k1):
    _, verifier = local
    found = check(verifier, signed(k1, groundrules_projects=["current", "x" * 201, "beta"]))
    assert found.caller.projects == ("beta",)


@pytest.mark.parametrize("headers, token", [
    ([(b"authorization", b"Bearer abc.def.ghi")], "abc.def.ghi"),
    ([(b"authorization", b"bearer   abc")], "abc"),
    ([(b"authorization", b"Basic dXNlcjpwYXNz")], None),
    ([(b"authorization", b"Bearer ")], None),
    ([(b"authorization", b"Bearer a b")], None),
    ([(b"authorization", b"Bearer a"), (b"authorization", b"Bearer b")], None),
    ([], None),
])
def test_the_bearer_token_is_read_from_exactly_one_authorization_header(headers, token):
    assert bearer({"headers": headers}) == token


def test_an_authorization_server_is_reached_over_https_or_on_loopback():
    for url in ("https://idp.example", "http://127.0.0.1:8080", "http://localhost/realms/x"):
        assert checked_url(url, "--issuer") == url
    for url in ("http://idp.example", "ftp://idp.example", "https://", "idp.example"):
        with pytest.raises(GroundrulesError):
            checked_url(url, "--issuer")


def test_metadata_is_looked_for_where_the_mcp_spec_says():
    assert metadata_urls("https://a.example") == ["https://a.example/.well-known/oauth-authorization-server",
                                                  "https://a.example/.well-known/openid-configuration"]
    assert metadata_urls("https://a.example/tenant1") == [
        "https://a.example/.well-known/oauth-authorization-server/tenant1",
        "https://a.example/.well-known/openid-configuration/tenant1",
        "https://a.example/tenant1/.well-known/openid-configuration"]


@pytest.mark.parametrize("options, message", [
    (["--auth", "oauth"], "usage.oauth_issuer"),
    (["--auth", "oauth", "--issuer", "http://idp.example"], "usage.oauth_https"),
    (["--auth", "oauth", "--issuer", "https://a.example", "--issuer", "https://b.example", "--jwks", "k.json"],
     "usage.oauth_jwks_one"),
    (["--auth", "oauth", "--issuer", "https://a.example", "--jwks", "no-such-file.json"], "usage.no_such_file"),
    (["--auth", "oauth", "--issuer", "https://a.example", "--tokens", "t.yaml"], "usage.serve_oauth_no_tokens"),
    (["--issuer", "https://a.example"], "usage.serve_http_needs_tokens"),
    (["--auth", "oauth", "--issuer", "https://a.example", "--resource", "mcp.example/mcp"], "usage.oauth_resource"),
])
def test_serve_refuses_an_oauth_setup_it_cannot_run(tmp_path, capsys, options, message):
    code = main(["serve", "--http", "127.0.0.1:1", "--db", str(tmp_path / "l.db"), *options])
    err = capsys.readouterr().err
    assert code == 1 and all(w in err for w in words(message)), err


def test_oauth_options_go_with_http(tmp_path, capsys):
    assert main(["--lang", "en", "serve", "--db", str(tmp_path / "l.db"), "--issuer", "https://a.example"]) == 1
    assert said("usage.serve_http_only", "en") in capsys.readouterr().err


def test_a_token_no_role_row_takes_is_403_naming_every_supported_scope(rulebook, tmp_path, k1):
    """Over HTTP, with a claim map whose only row asks for a group the token lacks; and the routes
    beside /mcp: the metadata answers GET and OPTIONS only, other paths go on to the app (404)."""
    book = load_rulebook(_edited_root(tmp_path / "root", roles=[
        {"role": "agent", "when": {"field": "claims.groups", "any": {"field": ".", "eq": "gr-agents"}}}]))
    claim_map = book.of_kind("claim_map")[0]
    jwks = tmp_path / "jwks.json"
    write_jwks(jwks, k1)

    def app(port: int):
        verifier = OAuthVerifier.configured(book, resource=f"http://{HOST}:{port}/mcp", issuers=[ISSUER],
                                            jwks=str(jwks))
        return http_app(Service(book), verifier, host=HOST, port=port)

    with serving(app) as base:
        resource = f"{base}/mcp"
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
        refused = httpx2.post(resource, json=body, timeout=30,
                              headers={**headers, "Authorization": f"Bearer {signed(k1, aud=resource)}"})
        asked = {lang: httpx2.post(resource, json=body, timeout=30, headers={
            **headers, "Accept-Language": f"{lang};q=0.9, xx", "Authorization": f"Bearer {signed(k1, aud=resource)}"})
            for lang in claim_map.messages.languages()}
        other_path = httpx2.get(f"{base}/elsewhere", timeout=30)
        posted = httpx2.post(f"{base}/.well-known/oauth-protected-resource", timeout=30)
    assert refused.status_code == 403
    challenge = dict(re.findall(r'(\w+)="([^"]*)"', refused.headers["www-authenticate"]))
    assert challenge["error"] == "insufficient_scope"
    assert challenge["error_description"] == header_description(claim_map, "no_role")
    assert challenge["scope"] == " ".join(claim_map.supported_scopes)
    assert other_path.status_code == 404 and posted.status_code == 405
    # the JSON body speaks the caller's language (Accept-Language; the server's, zh, without one)
    languages = claim_map.messages.languages()
    assert refused.json()["error_description"] == described(claim_map, "no_role", book.table("messages").default)
    for lang, answer in asked.items():
        assert answer.status_code == 403 and answer.json()["error_description"] == described(claim_map, "no_role", lang)
    assert len({a.json()["error_description"] for a in asked.values()}) == len(languages)


def described(claim_map, reason: str, lang: str) -> str:
    return claim_map.messages.speaking(lang)[reason].render({})


def header_description(claim_map, reason: str) -> str:
    """What the WWW-Authenticate header carries: the first language's text that RFC 6750 allows there."""
    return next(t for t in (described(claim_map, reason, lang) for lang in claim_map.messages.languages())
                if header_safe(t))


def test_an_accepted_token_seen_again_still_expires(rulebook, tmp_path, k1):
    path = tmp_path / "jwks.json"
    write_jwks(path, k1)
    clock = Clock()
    verifier = OAuthVerifier.configured(rulebook, resource=RESOURCE, issuers=[ISSUER], jwks=str(path), clock=clock)
    token = signed(k1)
    first = check(verifier, token)
    assert isinstance(first, Checked) and check(verifier, token) == first
    clock.offset = first.claims["exp"] + verifier.map.leeway_s + 1 - time.time()
    assert check(verifier, token) == Denied("expired", 401)
    clock.offset = 0
    assert check(verifier, token) == first                      # checked in full again, and accepted


def test_a_rule_reload_takes_the_new_claim_map_unless_it_names_an_undeclared_role(rulebook, local, k1, tmp_path):
    _, verifier = local
    assert check(verifier, signed(k1)).caller.principal == "u-1"
    edited = _edited_root(tmp_path / "a", principal="user:{sub}")
    assert verifier.use(load_rulebook(edited))
    assert check(verifier, signed(k1)).caller.principal == "user:u-1"
    broken = _edited_root(tmp_path / "b", roles=[{"role": "admin", "when": {"field": "scopes", "empty": False}}])
    assert not verifier.use(load_rulebook(broken))
    assert check(verifier, signed(k1)).caller.principal == "user:u-1"


def _edited_root(root, **keys):
    shutil.copytree(ROOT / "schemas", root / "schemas")
    (root / "rules").mkdir()
    shutil.copy(ROOT / "rules" / "roles.yaml", root / "rules" / "roles.yaml")
    shutil.copy(ROOT / "rules" / "messages.yaml", root / "rules" / "messages.yaml")
    table = yaml.safe_load((ROOT / "rules" / "oauth_claims.yaml").read_text(encoding="utf-8"))
    table.update(keys)
    (root / "rules" / "oauth_claims.yaml").write_text(yaml.safe_dump(table, allow_unicode=True, sort_keys=False),
                                                  encoding="utf-8")
    return root


def test_a_token_living_longer_than_the_cap_or_without_iat_is_refused(rulebook, local, k1, tmp_path):
    """Issue 35, item 4: a token with exp 1e308 was accepted. The cap is the claim map's."""
    _, verifier = local
    cap, now = verifier.map.max_lifetime_s, int(time.time())
    assert cap > 0
    assert isinstance(check(verifier, signed(k1, iat=now, exp=now + cap)), Checked)
    assert check(verifier, signed(k1, iat=now, exp=now + cap + 1)) == Denied("too_long_lived", 401)
    assert check(verifier, signed(k1, iat=now, exp=1e308)) == Denied("too_long_lived", 401)
    claims = {"iss": ISSUER, "aud": RESOURCE, "sub": "u-1", "scope": "groundrules", "exp": now + 60}   # no iat
    assert check(verifier, jwt.encode({"alg": "RS256", "kid": "k1"}, claims, k1)) == Denied("too_long_lived", 401)
    uncapped = _edited_root(tmp_path / "u", tokens=dict(yaml.safe_load(
        (ROOT / "rules" / "oauth_claims.yaml").read_text(encoding="utf-8"))["tokens"], max_lifetime_s=0))
    assert verifier.use(load_rulebook(uncapped))
    assert isinstance(check(verifier, signed(k1, iat=now, exp=now + cap + 1)), Checked)


def test_a_token_without_a_key_id_is_refused_unless_the_table_allows_it(rulebook, local, k1, tmp_path):
    _, verifier = local
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": RESOURCE, "sub": "u-1", "scope": "groundrules", "iat": now, "exp": now + 300}
    token = jwt.encode({"alg": "RS256", "typ": "at+jwt"}, claims, k1)      # the key set holds this one key
    assert verifier.map.require_kid is True
    assert check(verifier, token) == Denied("no_key_id", 401)
    lenient = _edited_root(tmp_path / "k", tokens=dict(yaml.safe_load(
        (ROOT / "rules" / "oauth_claims.yaml").read_text(encoding="utf-8"))["tokens"], require_kid=False))
    assert verifier.use(load_rulebook(lenient))
    assert isinstance(check(verifier, token), Checked)
