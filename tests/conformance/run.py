"""The official MCP conformance suite against a real `groundrules serve --http`, in both auth modes.

Usage: python tests/conformance/run.py [--mode tokens|oauth]... [--scenario NAME]...
(.ci/run runs it after the test command; tests/node/install.sh first puts the suite, a Node 22 and
oidc-provider under tests/node/.)

For each mode it starts the real command in its own process on loopback: with a tokens file
(`--auth tokens`), or as an OAuth resource server trusting an oidc-provider issuer it also starts
(`--auth oauth`, the access token obtained by the client_credentials grant). The suite cannot send
a header, so it reaches the server through header_proxy.py, which adds the bearer token and
changes nothing else. Every server scenario of the suite runs (`--suite all`); the ones listed in
baseline.yaml, each with the reason it does not apply to this server, may fail, and must: a
listed scenario that passes is stale and fails the run too, as does any other failure. Prints one
line per mode and a closing `N passed, M failed, K skipped` (scenarios passed; unexpected outcomes;
baseline scenarios that failed as expected); exits 1 on any unexpected outcome.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator

import httpx2
import yaml

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
sys.path[:0] = [str(TESTS), str(TESTS / "http"), str(HERE)]

from header_proxy import proxy  # noqa: E402
from node_tools import INSTALL, NODE_DIR, node, package  # noqa: E402
from oauth_support import HOST, Issuer, free_port, signing_key  # noqa: E402

SUITE = "@modelcontextprotocol/conformance"
BASELINE = HERE / "baseline.yaml"
START_S = 120
RUN_S = 1800
CALLER = ("conformance", "reviewer", ["conformance"])      # a reviewer sees every tool


def baseline() -> dict[str, str]:
    data = yaml.safe_load(BASELINE.read_text(encoding="utf-8"))
    entries = data["server"]
    if not isinstance(entries, dict) or not all(isinstance(v, str) and v.strip() for v in entries.values()):
        raise SystemExit(f"{BASELINE}: 'server' maps each scenario to the one-line reason it does not apply")
    return entries


@contextmanager
def groundrules(folder: Path, port: int, auth: list[str]) -> Iterator[str]:
    """`groundrules serve --http` as its own process; the /mcp URL once it answers."""
    log = (folder / f"serve-{port}.log").open("w", encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "groundrules.cli.main", "serve", "--http", f"{HOST}:{port}",
                             "--db", str(folder / f"ledger-{port}.db"), *auth], stdout=log, stderr=log)
    url = f"http://{HOST}:{port}/mcp"
    try:
        deadline = time.monotonic() + START_S
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"groundrules serve exited: {(folder / f'serve-{port}.log').read_text()[-2000:]}")
            try:
                if httpx2.post(url, json={}, timeout=5).status_code == 401:
                    break
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("groundrules serve did not answer in time")
            time.sleep(0.2)
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def tokens_mode(stack: ExitStack, folder: Path, port: int) -> tuple[str, str]:
    from groundrules.transports.tokens import token_digest
    token = "conformance-" + os.urandom(16).hex()
    principal, role, projects = CALLER
    tokens = folder / "tokens.yaml"
    tokens.write_text(yaml.safe_dump({"tokens": [{"sha256": token_digest(token), "principal": principal,
                                                  "role": role, "projects": projects}]}), encoding="utf-8")
    return stack.enter_context(groundrules(folder, port, ["--tokens", str(tokens)])), token


def oauth_mode(stack: ExitStack, folder: Path, port: int, binary: str) -> tuple[str, str]:
    principal, _, projects = CALLER
    issuer = Issuer(binary, folder, [{"client_id": principal, "client_secret": os.urandom(16).hex(),
                                      "projects": projects, "ttl": RUN_S + 600}], [signing_key("k1")])
    stack.callback(issuer.stop)
    url = stack.enter_context(groundrules(folder, port, ["--auth", "oauth", "--issuer", issuer.url]))
    return url, issuer.token(principal, "groundrules groundrules:review", url)


def run_suite(binary: str, url: str, folder: Path, scenarios: list[str]) -> dict:
    """{scenario: passed?} of one run of the suite against `url`."""
    out = folder / "results"
    command = [binary, str(package(SUITE) / "dist" / "index.js"), "server", "--url", url, "-o", str(out)]
    runs = [command + ["--scenario", s] for s in scenarios] if scenarios else [command + ["--suite", "all"]]
    for argv in runs:
        subprocess.run(argv, cwd=folder, timeout=RUN_S, stdout=(folder / "suite.log").open("a"),
                       stderr=subprocess.STDOUT, check=False)
    outcome = {}
    for checks in sorted(out.glob("*/checks.json")):
        name = _scenario_of(checks.parent.name)
        statuses = [c["status"] for c in json.loads(checks.read_text(encoding="utf-8"))]
        outcome[name] = not any(s in ("FAILURE", "WARNING") for s in statuses)
    return outcome


def _scenario_of(folder_name: str) -> str:
    """results/server-<scenario>-<ISO time>/: the scenario's name."""
    return re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", folder_name).removeprefix("server-")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", action="append", choices=("tokens", "oauth"))
    parser.add_argument("--scenario", action="append", default=[])
    parser.add_argument("--keep", action="store_true", help="keep the results folder and print where it is")
    args = parser.parse_args(argv)
    binary = node(22)
    if binary is None or package(SUITE) is None or package("oidc-provider") is None:
        print(f"conformance: the suite, oidc-provider or a Node 22 is missing under {NODE_DIR}: run {INSTALL}")
        return 1
    expected = baseline()
    passed = skipped = 0
    problems = []
    root = Path(tempfile.mkdtemp(prefix="conformance-"))
    for mode in args.mode or ["tokens", "oauth"]:
        folder = root / mode
        folder.mkdir()
        with ExitStack() as stack:
            port = free_port()
            url, token = tokens_mode(stack, folder, port) if mode == "tokens" else oauth_mode(stack, folder, port,
                                                                                                 binary)
            proxied = stack.enter_context(proxy(port, token))
            outcome = run_suite(binary, url.replace(f":{port}/", f":{proxied}/"), folder, args.scenario)
        unexpected = sorted(s for s, ok in outcome.items() if not ok and s not in expected)
        stale = sorted(s for s, ok in outcome.items() if ok and s in expected)
        unknown = sorted(s for s in expected if s not in outcome) if not args.scenario else []
        passed += sum(ok for s, ok in outcome.items() if s not in expected)
        skipped += sum(not ok for s, ok in outcome.items() if s in expected)
        print(f"conformance [{mode}]: {sum(outcome.values())} of {len(outcome)} scenarios passed; "
              f"{len([s for s in outcome if s in expected])} in the baseline")
        problems += [f"[{mode}] unexpected failure: {s}" for s in unexpected]
        problems += [f"[{mode}] passes but is in the baseline (remove it): {s}" for s in stale]
        problems += [f"[{mode}] in the baseline but not run by the suite: {s}" for s in unknown]
    for line in problems:
        print("conformance:", line)
    if args.keep or problems:
        print(f"conformance: results, suite and server logs in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    print(f"conformance: {passed} passed, {len(problems)} failed, {skipped} skipped")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
