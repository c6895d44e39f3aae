"""The official MCP Inspector's CLI (`@modelcontextprotocol/inspector`, pinned in
tests/node/package-lock.json) as a real client beside the Python and TypeScript SDKs (issue 32:
every real client runs every tool), over real stdio, every toolset enabled from the start.

The CLI makes one connection per invocation: it starts `groundrules serve`, initializes, lists the
tools, makes the one call asked for and stops the server. So each parity case runs in a server of
its own over its own copy of the prepared ledger (F-000001, RP-000001 and M-1, all a case needs),
as the CLI parity test runs `groundrules call`, and is compared with the library on the same copy
(`alone`): the same envelope, byte for byte once serialised. State built by earlier calls is
carried by the SQLite file each new server reopens (the reviewer's session below). The CLI looks a tool up in the listing
before it calls it, so a tool the role may not call is never sent: it answers `tool_not_found`,
where the library refuses the call.

How the CLI gives arguments (its source, clients/cli and core/mcp/inspectorClient.ts):
`--tool-args-json` sends one JSON object as it is; each `--tool-arg key=value` is read as JSON when
it parses and kept as a string otherwise, and a string is then coerced by the listed property's
`type` (Number() for number and integer, "true" for boolean, JSON for object and array), local
`$ref`s inlined first. Both forms are driven here.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import pytest

from groundrules import Caller, Service, default_rulebook
from groundrules.api import TOOLS
from groundrules.core import canonical
from node_tools import NODE_DIR, package, require
from test_parity import (CASES, CLOCK, IDS, _cli_options, _fresh, alone, calls_by_library,  # noqa: F401
                         prepared)                                     # prepared: the module's ledger fixture

INSPECTOR = "@modelcontextprotocol/inspector"
ROLES = sorted({case[2] for case in CASES})
# the CLI's exit codes (the Inspector's docs/v1-to-v2-migration.md): a tool answering isError, or a tool not listed
OK, TOOL_ERROR = 0, 5
# servers at once: each case starts a Node and a Python process, on a machine others share
WORKERS = 2


@pytest.fixture(scope="module")
def node():
    return require(22, INSPECTOR, min_minor=19)


def inspector(node: str, db, root, role: str, *options: str, listing: str = "full",
              started: tuple[str, int] = (CLOCK, IDS)) -> subprocess.CompletedProcess:
    """One CLI run against `groundrules serve` over stdio (its clock and ids `started` there): the
    server's command and its flags before `--`, the Inspector's own options after it."""
    launcher = package(INSPECTOR) / "clients" / "launcher" / "build" / "index.js"
    server = [sys.executable, "-m", "groundrules.cli.main", "serve", *_cli_options(db, root, role, *started),
              "--toolsets", "all", "--listing", listing]
    return subprocess.run([node, str(launcher), "--cli", *server, "--", "--format", "json", *options],
                          capture_output=True, text=True, timeout=120, cwd=NODE_DIR, env=dict(os.environ))


def may_call(role: str) -> set[str]:
    roles = Service(default_rulebook()).roles
    return {tool for tool in TOOLS if roles.may_call(role, tool)}


def strict_findings(stderr: str) -> list[tuple[str, str, str]]:
    """(severity, tool, schema path) of every finding `--strict` reports on stderr, all of them:
    as many as its closing count says (it prints nothing when it finds nothing)."""
    findings = re.findall(r'^(Error|Warning): tool "([^"]+)"\n  Path: (\S+)', stderr, flags=re.MULTILINE)
    count = re.search(r"^(\d+) errors?, (\d+) warnings? across \d+ tools?\.$", stderr, flags=re.MULTILINE)
    assert len(findings) == (int(count[1]) + int(count[2]) if count else 0), stderr[-3000:]
    return findings


@pytest.mark.extended
@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("listing", ["full", "compact"])
@pytest.mark.parametrize("role", ROLES)
def test_the_inspector_lists_what_the_role_may_call_and_its_strict_check_finds_no_input_problem(
        prepared, node, role, listing, era):
    """`tools/list --strict`: exactly the tools rules/roles.yaml lets the role call, as the library
    lists them, whether the CLI speaks the protocol with sessions (legacy, its default) or without
    (modern, 2026-07-28); the Inspector's own schema-portability check (array-valued `type`,
    schemas with no constraint, …) reports nothing on any input schema, and no error anywhere."""
    db, root = _fresh(prepared, f"inspector-list-{role}-{listing}-{era}")
    out = inspector(node, db, root, role, "--method", "tools/list", "--strict", "--protocol-era", era,
                    listing=listing)
    assert out.returncode == OK, out.stderr[-3000:]
    listed = json.loads(out.stdout)["result"]["tools"]
    assert {tool["name"] for tool in listed} == may_call(role)
    library = Service(default_rulebook()).listings(Caller("c", role, ("p",)), compact=listing == "compact")
    assert {tool["name"]: tool["inputSchema"] for tool in listed} == {
        one.name: one.input_schema for one in library}
    findings = strict_findings(out.stderr)
    assert [f for f in findings if f[2].startswith("inputSchema")] == []
    assert [f for f in findings if f[0] == "Error"] == []


def call(node: str, prepared, index: int, name: str, arguments: list[str]) -> subprocess.CompletedProcess:
    tool, _, role, _ = CASES[index]
    db, root = _fresh(prepared, name)
    return inspector(node, db, root, role, "--method", "tools/call", "--tool-name", tool, *arguments)


def answer(out: subprocess.CompletedProcess) -> dict:
    """The envelope of a tools/call the CLI printed: its structured content, which the text block
    repeats, and an exit code that says whether the tool refused."""
    result = json.loads(out.stdout)["result"]
    envelope = result["structuredContent"]
    assert json.loads(result["content"][0]["text"]) == envelope
    assert result.get("isError", False) is (not envelope["ok"])
    assert out.returncode == (OK if envelope["ok"] else TOOL_ERROR), out.stderr[-3000:]
    return envelope


def each(node, prepared, indices: list[int], form: str, arguments) -> list[subprocess.CompletedProcess]:
    with ThreadPoolExecutor(WORKERS) as pool:
        return list(pool.map(lambda i: call(node, prepared, i, f"inspector-{form}-{i}", arguments(CASES[i][1])),
                             indices))


def not_listed_is_never_sent(out: subprocess.CompletedProcess, library: dict) -> None:
    """A tool outside the role's listing: the CLI refuses it without calling; the library refuses
    the call as not the role's."""
    assert out.returncode == TOOL_ERROR and out.stdout == ""
    assert json.loads(out.stderr.strip().splitlines()[-1])["error"]["code"] == "tool_not_found"
    assert library["error"]["code"] == "PERMISSION_DENIED"


@pytest.mark.extended
@pytest.mark.parametrize("role", ROLES)
def test_the_inspector_cli_gets_the_librarys_envelope_for_every_tool(prepared, node, role):
    """`--tool-args-json` with each case's arguments as they are: the library's envelope."""
    indices = [i for i, case in enumerate(CASES) if case[2] == role and case[0] in TOOLS]
    runs = each(node, prepared, indices, "json", lambda arguments: [
        "--tool-args-json", json.dumps(arguments, ensure_ascii=False)])
    listed = may_call(role)
    for i, out in zip(indices, runs, strict=True):
        library = alone(prepared, i)
        if CASES[i][0] not in listed:
            not_listed_is_never_sent(out, library)
            continue
        assert canonical.dumps(answer(out)) == canonical.dumps(library), (CASES[i][:3], out.stdout, library)
    assert {CASES[i][0] for i in indices} & listed      # the role called some tool it may call


def typed_pairs(arguments: dict) -> list[str]:
    """`--tool-arg key=value` as a person types them: a string bare when it is no JSON text, every
    other value as JSON."""
    def text(value) -> str:
        if isinstance(value, str):
            try:
                json.loads(value)
            except ValueError:
                return value
        return json.dumps(value, ensure_ascii=False)
    return [option for key, value in arguments.items() for option in ("--tool-arg", f"{key}={text(value)}")]


def coerced(tool: str, arguments: dict) -> set[str]:
    """The arguments the CLI coerces by the listing: a string under a property listed as another type."""
    properties = Service(default_rulebook()).listing(tool).input_schema["properties"]
    return {key for key, value in arguments.items()
            if isinstance(value, str) and properties.get(key, {}).get("type", "string") != "string"}


def every_argument_once(role: str) -> list[int]:
    """The role's cases that give some tool's argument no earlier case gave, and those the CLI
    coerces: each argument of each tool once, as the pairs form differs per argument only."""
    seen: set[tuple[str, str]] = set()
    chosen = []
    for i, (tool, arguments, who, _) in enumerate(CASES):
        if who != role or tool not in TOOLS:
            continue
        given = {(tool, key) for key in arguments}
        if given - seen or coerced(tool, arguments):
            chosen.append(i)
            seen |= given
    return chosen


@pytest.mark.extended
@pytest.mark.parametrize("role", ROLES)
def test_tool_arg_pairs_reach_the_server_as_the_listing_types_them(prepared, node, role):
    """`--tool-arg key=value`, objects and arrays as JSON, for every argument of every tool the
    role's cases give: each arrives with the type the case gave it (the listing types each property, so no object or array is sent as a string),
    and the answer is the library's. A string the case gives where the listing says another type
    is coerced by the CLI (Number("many") is NaN, sent as null): still refused, at the same field."""
    indices = every_argument_once(role)
    runs = each(node, prepared, indices, "pairs", typed_pairs)
    listed = may_call(role)
    for i, out in zip(indices, runs, strict=True):
        tool, arguments, _, _ = CASES[i]
        library = alone(prepared, i)
        if tool not in listed:
            not_listed_is_never_sent(out, library)
            continue
        envelope = answer(out)
        if coerced(tool, arguments):
            assert not library["ok"] and not envelope["ok"], CASES[i][:3]
            assert (envelope["error"]["code"], envelope["error"].get("field")) == (
                library["error"]["code"], library["error"].get("field")), (CASES[i][:3], envelope, library)
            continue
        assert canonical.dumps(envelope) == canonical.dumps(library), (CASES[i][:3], out.stdout, library)


def started(k: int) -> tuple[str, int]:
    """Where the k-th server of a session starts its clock and ids: past every earlier one's (a call
    reads the clock less than 60 times, and makes fewer than 100 ids), as a server with a real
    clock and random ids would be."""
    moment = datetime.fromisoformat(CLOCK.replace("Z", "+00:00")) + timedelta(minutes=k)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ"), IDS + 100 * k


@pytest.mark.extended
def test_calls_made_one_server_at_a_time_see_what_the_earlier_ones_wrote(prepared, node):
    """A session as the CLI makes one: the role's cases in order against one SQLite ledger, each call
    its own `serve` that reopens the file. Each answer is the library's making the same calls in
    the same order on its own copy, one `Service` per call; and some call saw an earlier one's write
    (its answer is not the one it gets on the prepared ledger alone). The agent's long session is
    the TypeScript SDK's test; here each server costs a Node and a Python start."""
    role = "reviewer"                      # its cases approve a proposal, then reject it
    indices = [i for i, case in enumerate(CASES) if case[2] == role and case[0] in may_call(role)]
    db, root = _fresh(prepared, f"inspector-session-{role}")
    through_cli = []
    for k, i in enumerate(indices):
        tool, arguments, _, _ = CASES[i]
        out = inspector(node, db, root, role, "--method", "tools/call", "--tool-name", tool,
                        "--tool-args-json", json.dumps(arguments, ensure_ascii=False), started=started(k))
        through_cli.append(answer(out))
    at = _fresh(prepared, f"library-session-{role}")
    library = [calls_by_library(prepared, [CASES[i][:2]], "", role, ledger_at=at, clock_from=started(k)[0],
                                ids_from=started(k)[1])[0] for k, i in enumerate(indices)]
    for i, from_cli, from_library in zip(indices, through_cli, library, strict=True):
        assert canonical.dumps(from_cli) == canonical.dumps(from_library), (CASES[i][:3], from_cli, from_library)
    assert any(canonical.dumps(a) != canonical.dumps(alone(prepared, i)) for i, a in zip(indices, library))
