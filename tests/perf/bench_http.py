"""The shared HTTP server under 8 concurrent agent sessions, against the SDK's bare echo tool as the floor.

Two servers run as their own processes on loopback, both behind a bearer-token check: `groundrules
serve --http` on a fresh database, and a bare MCPServer whose only tool echoes its text. In each of
several rounds, 8 sessions (one MCP connection each, the SDK client) make three phases of calls:
echo on the echo server; the groundrules server with a realistic mix (query, get, log with evidence,
state change); and get_finding alone on the groundrules server (same round trips as echo, one read
each: the like-for-like floor comparison, since in the mix a read waits behind the writes of the
other sessions). The phases' order reverses between rounds (paired, interleaved), so machine noise
hits each alike. Printed: calls/s per round (median), p50/p99 per tool, get_finding's p50 over
echo's (in the mix and alone), the CPU time per call of each server and of the client process (the
8 sessions share one; the SDK client validates every result against the tool's listed output
schema), and the groundrules server's RSS after warm-up and at the end.

Then the noisy neighbour (issue 19): one principal, the victim, runs the mix on two sessions, once
alone (quiet) and once while another principal floods the same server (noisy): it opens sessions
it never closes, sends the largest arrays and strings the caps allow (uniqueItems fields, tags,
an inline schema with uniqueItems), dribbles request bodies byte by byte, and keeps ledger reads
running. The flood is a process of its own, as a hostile agent is, its bodies encoded once: in the
victim's process its client work would be measured as the server's. As a control, the same flood
also hits the echo server while the victim calls its own (what the flood's process and the machine
cost the victim, which no server can help). The three conditions rotate (interleaved); printed:
the victim's p50/p99 in each, the ratios (target: noisy p99 within 2x quiet p99), and what the
flood got back.

    .venv/bin/python tests/perf/bench_http.py                 # 20,000 groundrules calls
    .venv/bin/python tests/perf/bench_http.py --calls 4000    # shorter, on a loaded machine
    .venv/bin/python tests/perf/bench_http.py --tiny          # a smoke run (the test suite's)
"""
from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

SESSIONS = 8
PROJECTS = 4                # two agents per project: some reads see the other's writes
# one cycle of an agent's calls: mostly reads, some writes (log with evidence, a state change)
MIX = ("get_finding", "query_findings", "get_finding", "log_finding", "get_finding", "query_findings",
       "set_finding_state", "get_finding", "query_findings", "log_finding")
EVIDENCE = {"source_kind": "experiment_run", "source_ref": "run:1", "excerpt": "温度升高后误差翻倍",
            "relation": "supports", "method": "experiment"}

ECHO_SERVER = """
import sys
from mcp.server import MCPServer
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
TOKENS = set(sys.argv[2:])
class Verifier(TokenVerifier):
    async def verify_token(self, token):
        return AccessToken(token=token, client_id=token, scopes=[]) if token in TOKENS else None
mcp = MCPServer("echo", token_verifier=Verifier(), log_level="WARNING",
                auth=AuthSettings(issuer_url="http://127.0.0.1/", resource_server_url=None, required_scopes=[]))
@mcp.tool()
def echo(text: str) -> str:
    return text
mcp.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]), json_response=True)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_ready(url: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"a server exited ({proc.args[2]}): see its log in the work folder")
        try:
            httpx2.post(url, json={}, timeout=2)
            return
        except httpx2.TransportError:
            time.sleep(0.2)
    raise SystemExit("a server did not start")


VICTIM, FLOODER = "bench-victim", "bench-flooder"
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def start_servers(work: Path, tokens: list[str], options: list[str] = ()) -> tuple[dict, dict]:
    grants = [{"sha256": hashlib.sha256(t.encode()).hexdigest(), "principal": f"agent-{i}", "role": "agent",
               "projects": [f"p{i % PROJECTS}"]} for i, t in enumerate(tokens)]
    grants += [{"sha256": hashlib.sha256(t.encode()).hexdigest(), "principal": t, "role": "agent",
                "projects": [t]} for t in (VICTIM, FLOODER)]
    (work / "tokens.yaml").write_text(yaml.safe_dump({"tokens": grants}), encoding="utf-8")
    gr_port, echo_port = free_port(), free_port()
    gr = subprocess.Popen([sys.executable, "-m", "groundrules.cli.main", "serve", "--http", f"127.0.0.1:{gr_port}",
                           "--db", str(work / "ledger.db"), "--tokens", str(work / "tokens.yaml"),
                           "--toolsets", "all", *options],
                          stdout=subprocess.DEVNULL, stderr=(work / "groundrules.log").open("ab"))
    echo = subprocess.Popen([sys.executable, "-c", ECHO_SERVER, str(echo_port), *tokens, FLOODER],
                            stdout=subprocess.DEVNULL, stderr=(work / "echo.log").open("ab"))
    servers = {"groundrules": {"proc": gr, "url": f"http://127.0.0.1:{gr_port}/mcp"},
               "echo": {"proc": echo, "url": f"http://127.0.0.1:{echo_port}/mcp"}}
    for s in servers.values():
        wait_ready(s["url"], s["proc"])
    return servers, servers["groundrules"]


class Agent:
    """One agent's session and its own findings (it changes the state of its own, expected_version known)."""

    def __init__(self, n: int, token: str):
        self.n, self.token, self.mine, self.step = n, token, [], 0

    def next_call(self, phase: str) -> tuple[str, dict]:
        if phase == "echo":
            return "echo", {"text": "温度升高后误差翻倍"}
        if phase == "get_finding" and self.mine:
            return "get_finding", {"finding_id": self.mine[-1][0]}
        tool = MIX[self.step % len(MIX)]
        self.step += 1
        if not self.mine or tool == "log_finding":
            return "log_finding", {"claim_kind": "diagnosis", "statement": f"agent {self.n} 的发现 {self.step}",
                                   "tags": ["bench"], "scope": {"match": {"runtime.backend": "vLLM"},
                                                                "context": {"commit": "0862527"}},
                                   "evidence": [EVIDENCE]}
        fid, version, state = self.mine[-1]
        if tool == "get_finding":
            return tool, {"finding_id": fid}
        if tool == "query_findings":
            return tool, {"keyword": "发现", "limit": 10}
        target = "provisional" if state != "provisional" else "unassessed"
        return tool, {"finding_id": fid, "epistemic_state": target, "reason": "bench", "expected_version": version}

    def saw(self, tool: str, arguments: dict, envelope: dict) -> None:
        if not envelope.get("ok"):
            raise SystemExit(f"{tool} refused: {envelope.get('error')}")
        data = envelope["data"]
        if tool == "log_finding":
            self.mine.append((data["finding_id"], data["version"], data["epistemic_state"]))
        elif tool == "set_finding_state":
            self.mine[-1] = (arguments["finding_id"], data["version"], data["epistemic_state"])


async def session(url: str, agent: Agent, name: str, calls: int, latencies: dict) -> None:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {agent.token}"}, timeout=120)
    async with Client(streamable_http_client(url, http_client=http)) as client:
        for _ in range(calls):
            tool, arguments = agent.next_call(name)
            t0 = time.perf_counter()
            result = await client.call_tool(tool, arguments)
            latencies.setdefault(tool, []).append(time.perf_counter() - t0)
            if name != "echo":
                agent.saw(tool, arguments, result.structured_content)


async def phase(url: str, agents: list, name: str, calls_each: int, latencies: dict) -> float:
    """calls/s of SESSIONS sessions making calls_each calls at once."""
    t0 = time.perf_counter()
    await asyncio.gather(*(session(url, a, name, calls_each, latencies) for a in agents))
    return SESSIONS * calls_each / (time.perf_counter() - t0)


def pct(values: list, q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def main_async(args) -> None:
    tokens = [f"bench-token-{i}" for i in range(SESSIONS)]
    with tempfile.TemporaryDirectory() as tmp:
        servers, gr = start_servers(Path(tmp), tokens, args.serve_option)
        phases = {"echo": servers["echo"], "groundrules": gr, "get_finding": gr}   # name -> server it calls
        try:
            agents = [Agent(i, t) for i, t in enumerate(tokens)]
            warm: dict = {}
            for name, s in phases.items():                           # warm-up, not counted
                await phase(s["url"], agents, name, 20, warm)
            rss_start = rss_mib(gr["proc"].pid)
            per_round = args.calls // args.rounds // SESSIONS
            rates = {name: [] for name in phases}
            latencies = {name: {} for name in phases}
            cpu = {name: 0.0 for name in phases}
            client_cpu = {name: 0.0 for name in phases}
            for r in range(args.rounds):
                order = list(phases) if r % 2 == 0 else list(reversed(phases))
                for name in order:
                    before, client_before = cpu_s(phases[name]["proc"].pid), time.process_time()
                    rates[name].append(await phase(phases[name]["url"], agents, name, per_round, latencies[name]))
                    cpu[name] += cpu_s(phases[name]["proc"].pid) - before
                    client_cpu[name] += time.process_time() - client_before
                print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{n} {rates[n][-1]:.0f} calls/s" for n in phases),
                      flush=True)
            rss_end = rss_mib(gr["proc"].pid)
            neighbour = await noisy_neighbour(gr["url"], servers["echo"]["url"], args)
        finally:
            for s in servers.values():
                s["proc"].send_signal(signal.SIGTERM)
                s["proc"].wait(30)
    total = {n: sum(len(v) for v in latencies[n].values()) for n in phases}
    print(f"\n{SESSIONS} sessions, {args.rounds} paired rounds, load average {os.getloadavg()[0]:.1f}; calls: "
          + ", ".join(f"{n} {total[n]}" for n in phases))
    for name in phases:
        everything = [x for v in latencies[name].values() for x in v]
        print(f"{name:12s} calls/s median {statistics.median(rates[name]):7.0f}   all calls p50 {pct(everything, .5):6.1f} ms"
              f"  p99 {pct(everything, .99):6.1f} ms   CPU/call: server {cpu[name] / total[name] * 1000:.2f} ms,"
              f" client {client_cpu[name] / total[name] * 1000:.2f} ms")
        for tool, values in sorted(latencies[name].items()):
            print(f"  {tool:20s} n={len(values):6d}  p50 {pct(values, .5):6.1f} ms  p99 {pct(values, .99):6.1f} ms")
    floor = pct(latencies["echo"]["echo"], .5)
    print(f"\nget_finding p50 / echo p50: in the mix {pct(latencies['groundrules']['get_finding'], .5) / floor:.2f},"
          f" alone {pct(latencies['get_finding']['get_finding'], .5) / floor:.2f}   (target ≤ 1.5)")
    for name in ("groundrules", "get_finding"):
        print(f"{name} / echo: server CPU per call {(cpu[name] / total[name]) / (cpu['echo'] / total['echo']):.2f},"
              f" client CPU per call {(client_cpu[name] / total[name]) / (client_cpu['echo'] / total['echo']):.2f},"
              f" calls/s (median of rounds) {statistics.median(rates[name]) / statistics.median(rates['echo']):.2f}")
    print(f"groundrules server RSS: {rss_start:.1f} MiB after warm-up, {rss_end:.1f} MiB at the end "
          f"(+{rss_end - rss_start:.1f} MiB over {total['groundrules'] + total['get_finding']} calls; target ≤ 10 MiB)")
    seen, flood = neighbour
    quiet, elsewhere, noisy = (seen[name] for name in CONDITIONS)
    print(f"\nnoisy neighbour ({len(quiet)} victim calls in each condition):")
    for q in (.5, .99):
        print(f"  victim p{round(q * 100)}: quiet {pct(quiet, q):.1f} ms, flood elsewhere {pct(elsewhere, q):.1f} ms, "
              f"flood on its server {pct(noisy, q):.1f} ms: {pct(noisy, q) / pct(quiet, q):.2f}x quiet"
              f"{' (target ≤ 2x)' if q > .5 else ''}, {pct(noisy, q) / pct(elsewhere, q):.2f}x elsewhere")
    print("  the flood got: " + ", ".join(f"{k} {v}" for k, v in sorted(flood.items())))


async def victim(url: str, calls: int, latencies: list) -> None:
    agents = [Agent(100 + i, VICTIM) for i in range(2)]
    by_tool: dict = {}
    await asyncio.gather(*(session(url, a, "groundrules", calls // 2, by_tool) for a in agents))
    latencies.extend(x for values in by_tool.values() for x in values)


async def flood(url: str, stop: asyncio.Event, outcomes: dict) -> None:
    """One principal doing everything a hostile agent would, as fast as it is answered (run in its
    own process: `flooding`)."""
    headers = {"Authorization": f"Bearer {FLOODER}", "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    big = [{"k": i} for i in range(2_500)]
    bodies = [
        {"method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "flood", "version": "1"}}},
        {"method": "tools/call", "params": {"name": "query_findings", "arguments": {"epistemic_state": big}}},
        {"method": "tools/call", "params": {"name": "log_finding", "arguments": {
            "claim_kind": "diagnosis", "statement": "x", "tags": [{"k": i} for i in range(10_000)]}}},
        {"method": "tools/call", "params": {"name": "verify_extraction", "arguments": {
            "request": {"input": "x"}, "schema": {"type": "object", "properties": {
                "a": {"type": "array", "uniqueItems": True}}}, "candidate": {"data": {"a": big}}}}},
        {"method": "tools/call", "params": {"name": "query_findings", "arguments": {"keyword": "发现", "limit": 100}}},
    ]
    host, port = url.split("//")[1].split("/")[0].split(":")

    async def poster(body: dict) -> None:
        if body["method"] == "initialize":                      # a legacy session, never closed
            data = json.dumps({"jsonrpc": "2.0", "id": 1, **body}).encode()
            extra = {"MCP-Protocol-Version": "2025-11-25"}
        else:                                                   # a call standing alone (2026-07-28)
            data = json.dumps({"jsonrpc": "2.0", "id": 1, "method": body["method"],
                               "params": dict(body["params"], _meta=MODERN_META)}).encode()
            extra = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": body["method"],
                     "Mcp-Name": body["params"]["name"]}
        async with httpx2.AsyncClient(headers={**headers, **extra}, timeout=120) as http:
            while not stop.is_set():
                try:
                    r = await http.post(url, content=data)
                    key = f"{body['params'].get('name', body['method'])} {r.status_code}"
                except httpx2.TransportError as exc:
                    key = f"{body['params'].get('name', body['method'])} {type(exc).__name__}"
                outcomes[key] = outcomes.get(key, 0) + 1

    async def dribbler() -> None:
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection(host, int(port))
                writer.write(f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {FLOODER}\r\n"
                             "Content-Length: 1000\r\n\r\n".encode())
                for _ in range(1000):
                    if stop.is_set() or writer.is_closing():
                        break
                    writer.write(b" ")
                    await writer.drain()
                    await asyncio.sleep(0.5)
                writer.close()
                outcomes["dribbled bodies"] = outcomes.get("dribbled bodies", 0) + 1
            except (OSError, ConnectionError):
                outcomes["dribbled bodies cut off"] = outcomes.get("dribbled bodies cut off", 0) + 1

    await asyncio.gather(*(poster(b) for b in bodies), *(dribbler() for _ in range(20)))


def flooding(url: str) -> None:
    """The flood until a line arrives on stdin; then what it got back, as JSON on stdout."""
    async def run() -> None:
        stop, outcomes = asyncio.Event(), {}
        asyncio.get_running_loop().add_reader(sys.stdin.fileno(), stop.set)
        await flood(url, stop, outcomes)
        print(json.dumps(outcomes), flush=True)
    asyncio.run(run())


CONDITIONS = ("quiet", "elsewhere", "noisy")


async def noisy_neighbour(url: str, echo_url: str, args) -> tuple[dict, dict]:
    """The victim's latencies alone (quiet), while the same flood hits the echo server on this
    machine (elsewhere: what the flood's own process and the machine cost the victim, which no
    server can help), and while it hits the victim's server (noisy); in rotating order."""
    latencies: dict = {name: [] for name in CONDITIONS}
    outcomes: dict = {}
    per_round = max(10, args.victim_calls // args.rounds)
    await victim(url, 20, [])                                         # warm-up
    for r in range(args.rounds):
        for name in CONDITIONS[r % 3:] + CONDITIONS[:r % 3]:
            if name == "quiet":
                await victim(url, per_round, latencies[name])
                continue
            target = url if name == "noisy" else echo_url
            flooder = await asyncio.create_subprocess_exec(sys.executable, __file__, "--flood", target,
                                                           stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
            await asyncio.sleep(0.5)                                  # let the flood build up
            await victim(url, per_round, latencies[name])
            got, _ = await flooder.communicate(b"stop\n")
            if name == "noisy":
                for key, count in json.loads(got).items():
                    outcomes[key] = outcomes.get(key, 0) + count
        print(f"noisy neighbour round {r + 1}/{args.rounds}", flush=True)
    return latencies, outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000, help="groundrules calls in all (the echo floor makes as many)")
    parser.add_argument("--rounds", type=int, default=6, help="paired rounds (even: each order as often)")
    parser.add_argument("--victim-calls", type=int, default=1_200,
                        help="the victim's calls in each condition (quiet, flood elsewhere, noisy)")
    parser.add_argument("--tiny", action="store_true", help="a smoke run: a few calls, two rounds")
    parser.add_argument("--serve-option", action="append", default=[], metavar="OPTION",
                        help="an option for `groundrules serve --http` (repeatable: --serve-option=--turns=64)")
    parser.add_argument("--flood", metavar="URL", help=argparse.SUPPRESS)     # the flooding process
    args = parser.parse_args()
    if args.flood:
        flooding(args.flood)
        return
    if args.tiny:
        args.calls, args.rounds, args.victim_calls = 320, 2, 40
    os.environ.setdefault("PYTHONHASHSEED", "0")
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
