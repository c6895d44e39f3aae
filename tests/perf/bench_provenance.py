"""What provenance costs a ledger write: `append_evidence` of a signed tool receipt (its JWS verified
against the trust store, its class judged) against the same receipt unsigned, through the registry,
on SQLite, in paired, interleaved rounds.

    .venv/bin/python tests/perf/bench_provenance.py [--rounds N] [--calls N] [--tiny]

Each round appends `--calls` receipts of each kind into a fresh ledger per kind, the order of the
two kinds alternating from round to round, so that a burst of load on this shared machine hits both
alike; the ratio is the median of the per-round ratios (signed / unsigned). Signing happens before
the clock starts: a host signs once, where the record is made. Target: a signed append at most 1.3x
an unsigned one.
"""
from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import tempfile
import time
from pathlib import Path

from joserfc.jwk import OKPKey

from groundrules import Caller, EvidenceLedger, Service, load_rulebook
from groundrules.provenance import table as provenance
from groundrules.provenance.signatures import sign
from groundrules.provenance.trust import load_trust

BODY = '{"customer": "王先生", "phone": "138 1234 5678", "status": "已发货", "note": "' + "物流正常。" * 40 + '"}'


def receipts(n: int, key: dict | None) -> list[dict]:
    out = []
    for i in range(n):
        record = {"id": f"q{i}", "type": "tool_receipt", "tool": "crm", "request_id": f"req-{i}", "body": BODY}
        out.append(sign(record, key) if key else record)
    return out


def run(book, folder: Path, name: str, records: list[dict], caller: Caller, trust) -> tuple[float, float]:
    """(wall, CPU) seconds per append: the wall time includes SQLite's commit waiting on the disk,
    which other jobs on a shared machine share; the CPU time is the process's own work."""
    n = itertools.count()
    ledger = EvidenceLedger(str(folder / f"{name}.sqlite"), ids=lambda: f"R{next(n)}",
                            clock=lambda: "2024-05-01T10:00:00+08:00", rulebook=book)
    service = Service(book, evidence=ledger, trust=trust)
    try:
        t0, c0 = time.perf_counter(), time.process_time()
        for record in records:
            answer = service.call("append_evidence", {"record": record}, caller)
            if not answer["ok"]:
                raise SystemExit(f"{name}: {answer['error']}")
        return (time.perf_counter() - t0) / len(records), (time.process_time() - c0) / len(records)
    finally:
        ledger.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--tiny", action="store_true", help="one round of a few calls: proves the script runs")
    args = parser.parse_args()
    rounds, calls = (1, 5) if args.tiny else (args.rounds, args.calls)
    book = load_rulebook()
    key = OKPKey.generate_key("Ed25519", parameters={"kid": "bench"})
    cls = provenance.of(book).class_of({"type": "tool_receipt"})
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        public = key.as_dict(private=False)
        (folder / "trust.yaml").write_text("signers:\n  crm:\n    keys: [{" + ", ".join(
            f"{k}: {v}" for k, v in public.items()) + "}]\n    records: [" + cls + "]\n", encoding="utf-8")
        trust = load_trust(folder / "trust.yaml")
        agent, host = Caller("agent-1", "agent", ("p1",)), Caller("app", "host", ("p1",))
        signed, plain = receipts(calls, key.as_dict(private=True)), receipts(calls, None)
        run(book, folder, "warm-plain", plain[:3], host, trust)          # first use compiles lazily: untimed
        run(book, folder, "warm-signed", signed[:3], agent, trust)
        times: dict[str, list[tuple[float, float]]] = {"unsigned (host)": [], "signed (agent relays)": []}
        ratios: list[tuple[float, float]] = []
        for r in range(rounds):
            order = [("unsigned (host)", plain, host), ("signed (agent relays)", signed, agent)]
            if r % 2:
                order.reverse()
            got = {}
            for name, records, caller in order:
                got[name] = run(book, folder, f"{name[:6]}-{r}", records, caller, trust)
                times[name].append(got[name])
            (ws, cs), (wu, cu) = got["signed (agent relays)"], got["unsigned (host)"]
            ratios.append((ws / wu, cs / cu))
    for name, values in times.items():
        print(f"{name:24s} median wall {statistics.median(v[0] for v in values) * 1e3:8.3f} ms, CPU "
              f"{statistics.median(v[1] for v in values) * 1e3:8.3f} ms per append ({rounds} rounds of {calls})")
    print(f"signed / unsigned, median of per-round ratios: wall {statistics.median(r[0] for r in ratios):.3f}x, "
          f"CPU {statistics.median(r[1] for r in ratios):.3f}x (target <= 1.3x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
