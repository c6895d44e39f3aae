"""Median microseconds to check one bearer token: a static token against the tokens file, and a
JWT access token through the OAuth resource server (signature, claims, claim map).

    .venv/bin/python tests/perf/bench_oauth.py [ROUNDS] [--tiny]     (--tiny: one round: proves the script runs)

Both run in one process with no network (the OAuth key set is a local JWKS file, read once), on
the same event loop, in paired, interleaved rounds (one batch of each per round, the order
rotating); the ratio is the median of the per-round ratios. (a) GrantsVerifier.verify_token, the
static tokens' check: one sha256 and a dict lookup. (b) OAuthVerifier.check of an RS256 token seen
for the first time (the cache of accepted tokens off): JWS parsing, the RSA signature (joserfc,
cryptography), the claims, the claim map; (c) the same with ES256; (d) an RS256 token seen again,
as every request after a host's first carries it: the digest lookup and the time claims. What a
request costs on top is the HTTP server's (tests/perf/bench_http.py).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import replace
import tempfile
import time
from pathlib import Path

import anyio
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet, RSAKey

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "http"))

from groundrules import load_rulebook  # noqa: E402
from groundrules.transports.mcp_http import GrantsVerifier  # noqa: E402
from groundrules.transports.oauth import Checked, OAuthVerifier  # noqa: E402
from http_support import write_tokens  # noqa: E402

ISSUER, RESOURCE, BATCH = "https://idp.example", "https://mcp.example/mcp", 500


def signed(key, alg: str) -> str:
    now = int(time.time())
    return jwt.encode({"alg": alg, "kid": key.kid, "typ": "at+jwt"}, {
        "iss": ISSUER, "aud": RESOURCE, "sub": "agent-7", "scope": "groundrules", "iat": now, "exp": now + 3600,
        "groundrules_projects": ["alpha", "beta"]}, key)


async def batch(check, token) -> float:
    start = time.perf_counter()
    for _ in range(BATCH):
        await check(token)
    return (time.perf_counter() - start) / BATCH * 1e6


async def main(rounds: int) -> None:
    book = load_rulebook(ROOT, cache=False)
    folder = Path(tempfile.mkdtemp())
    rsa = RSAKey.generate_key(2048, parameters={"kid": "r1", "alg": "RS256", "use": "sig"})
    ec = ECKey.generate_key("P-256", parameters={"kid": "e1", "alg": "ES256", "use": "sig"})
    (folder / "jwks.json").write_text(json.dumps(KeySet([rsa, ec]).as_dict()), encoding="utf-8")
    oauth = OAuthVerifier.configured(book, resource=RESOURCE, issuers=[ISSUER], jwks=str(folder / "jwks.json"))
    first = OAuthVerifier(replace(oauth.map, cache_entries=0), resource=RESOURCE, issuers=oauth.issuers)
    static = GrantsVerifier(write_tokens(folder / "tokens.yaml", {"tok-a": ("agent-7", "agent", ["alpha"])}),
                            book.table("roles").roles)
    cases = {"static": (static.verify_token, "tok-a"), "RS256": (first.check, signed(rsa, "RS256")),
             "ES256": (first.check, signed(ec, "ES256")), "RS256 again": (oauth.check, signed(rsa, "RS256"))}
    for check, token in cases.values():          # warm, and make sure each is accepted
        assert await check(token) is not None and not hasattr(await check(token), "reason")
    assert isinstance(await oauth.check(cases["RS256"][1]), Checked)
    times: dict[str, list[float]] = {name: [] for name in cases}
    names = list(cases)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            times[name].append(await batch(*cases[name]))
    for name in names:
        ratio = statistics.median(t / s for t, s in zip(times[name], times["static"]))
        print(f"{name:11} median {statistics.median(times[name]):8.1f} us per check  ({ratio:5.1f}x static)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rounds", nargs="?", type=int, default=9, help="paired rounds (default 9)")
    parser.add_argument("--tiny", action="store_true", help="a few small rounds, every check still made: proves the script runs")
    args = parser.parse_args()
    anyio.run(main, 1 if args.tiny else args.rounds)
