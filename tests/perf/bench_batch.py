"""Benchmark of `groundrules batch` and its engines, with its baselines measured in the same run:

1. per core: `batch --workers 1` (runner.run in this process: read JSONL, answer, write JSONL)
   against a plain in-process loop over the same rows (json.loads, Service.call, the line written),
   in paired, interleaved rounds (the order alternating), CPU time per row; the figure is the median
   of the per-round ratios. Over a generated chat corpus (lock_message) and the context corpus
   (explain_support). The bare part (groundrules.lock per message, no registry) is printed beside.
2. scaling: `batch --workers 2` against `--workers 1` on a larger chat corpus (--scale-rows, so that
   the pool's fixed costs, forking and each worker's first touch of the inherited heap, amortise),
   wall time, paired rounds; beside it the CPU time of each whole run (parent and workers), whose
   ratio bounds the speed-up two idle cores could give: on a loaded machine the wall figure
   measures the scheduler's share as much as the batch.
3. Spark `local[2]` (mapInArrow, batch.spark.answers, Parquet in and out) against `batch --workers 2`
   (Parquet in and out) on the same rows, paired rounds after one warm-up run each; the session's
   start-up and the first (cold) run are reported apart.
4. Presidio's AnalyzerEngine with a pattern recognizer for Chinese mobiles over the same messages:
   rows/s and recall against the labelled phones, beside groundrules' lock_message on the same
   messages. Its trained spaCy models cannot be fetched here: it runs on a blank Chinese spaCy
   pipeline saved to a folder, so only the pattern recognizer decides (what is printed says so).

Run: .venv/bin/python tests/perf/bench_batch.py [--rows N] [--contexts N] [--scale-rows N] [--rounds R] [--part all|core|scale|spark|presidio] [--tiny]
(--tiny: a few hundred rows, one round: proves the script runs.)
Targets: batch >= 0.9x the loop per core; >= 1.7x from 1 to 2 workers on 2 cores; Spark local[2]
>= 0.7x batch --workers 2 after start-up; byte-identical answers (checked here before timing).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "engine"))
sys.path.insert(0, str(ROOT / "tests" / "batch"))

from groundrules import Caller, Service, default_rulebook, lock  # noqa: E402
from groundrules.batch import formats, run as runner  # noqa: E402
from groundrules.batch.answer import Answerer  # noqa: E402
from groundrules.batch.plan import Plan, parse_map, parse_set  # noqa: E402
from corpora import chats, contexts, lock_rows, write_jsonl  # noqa: E402

AGENT = Caller("bench", "agent", ("default",))
KEYED = Plan("lock_message", key="id", maps=(parse_map("message.id=id"), parse_map("message.content=content")),
             sets=(parse_set("message.role=user"),))


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def cpu(fn) -> tuple[float, float]:
    """(CPU seconds of this process and its children, wall seconds) of fn()."""
    t0, c0, w0 = time.process_time(), os.times(), time.perf_counter()
    fn()
    t1, c1, w1 = time.process_time(), os.times(), time.perf_counter()
    children = c1.children_user + c1.children_system - c0.children_user - c0.children_system
    return max(t1 - t0 + children, 1e-9), w1 - w0


def loop(service: Service, tool: str, source: Path, out: Path) -> None:
    """The baseline: a plain loop a host would write with the library."""
    with open(source, "rb") as rows, open(out, "w", encoding="utf-8") as stream:
        for n, line in enumerate(rows, 1):
            envelope = service.call(tool, json.loads(line), AGENT)
            stream.write(json.dumps({"key": n, **envelope}, ensure_ascii=False) + "\n")


def batch(answerer: Answerer, source: Path, out: Path, workers: int, fmt: str | None = None) -> None:
    runner.run(answerer, formats.sources([str(source)]), str(out), workers=workers, restart=True, out_format=fmt)


def paired(runs: dict, rounds: int, measure: int = 0, both: dict | None = None) -> dict:
    """name -> per-round seconds (measure 0: CPU, 1: wall); one run of each per round, the order
    alternating. `both`, when given, receives name -> [(CPU, wall)] of the same runs."""
    times: dict = {name: [] for name in runs}
    names = list(runs)
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            spent = cpu(runs[name])
            times[name].append(spent[measure])
            if both is not None:
                both.setdefault(name, []).append(spent)
    return times


def ratio(times: dict, a: str, b: str) -> float:
    """Median over rounds of b's time / a's: above 1, a is faster."""
    return statistics.median(tb / ta for ta, tb in zip(times[a], times[b]))


def core(folder: Path, rows: int, n_contexts: int, rounds: int) -> None:
    book = default_rulebook()
    service = Service(book)
    messages = chats(rows)
    corpora = {"lock_message": write_jsonl(folder / "chats.jsonl", lock_rows(messages)),
               "explain_support": write_jsonl(folder / "contexts.jsonl", [{"context": c} for c in contexts(n_contexts)])}
    print(f"1. per core: batch --workers 1 against a plain loop (Service.call per row), CPU time, {rounds} paired rounds, {load()}")
    for tool, source in corpora.items():
        n = sum(1 for _ in open(source, "rb"))
        answerer = Answerer(book, Plan(tool), AGENT)
        batch(answerer, source, folder / "b.jsonl", 1)
        loop(service, tool, source, folder / "l.jsonl")
        answers_b = [json.loads(x) for x in open(folder / "b.jsonl", encoding="utf-8")]
        answers_l = [json.loads(x) for x in open(folder / "l.jsonl", encoding="utf-8")]
        assert [dict(a, key=None) for a in answers_b] == [dict(a, key=None) for a in answers_l], "batch != loop"
        times = paired({"loop": lambda: loop(service, tool, source, folder / "l.jsonl"),
                        "batch": lambda: batch(answerer, source, folder / "b.jsonl", 1)}, rounds)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"  {tool} ({n} rows): loop {n / med['loop']:,.0f} rows/s, batch {n / med['batch']:,.0f} rows/s of CPU; "
              f"batch/loop speed {ratio(times, 'batch', 'loop'):.2f}x (target >= 0.9)")
    bare = [m for m in messages]
    t, _ = cpu(lambda: [lock({"id": m["id"], "role": m["role"], "content": m["content"]}, book) for m in bare])
    print(f"  beside it, groundrules.lock per message without the registry: {len(bare) / t:,.0f} messages/s of CPU")


def scale(folder: Path, rows: int, rounds: int) -> None:
    book = default_rulebook()
    source = write_jsonl(folder / "chats.jsonl", lock_rows(chats(rows)))
    answerer = Answerer(book, Plan("lock_message"), AGENT)
    batch(answerer, source, folder / "w1.jsonl", 1)
    batch(answerer, source, folder / "w2.jsonl", 2)
    assert (folder / "w1.jsonl").read_bytes() == (folder / "w2.jsonl").read_bytes(), "workers changed the bytes"
    print(f"2. scaling on {os.cpu_count()} cores: batch --workers 2 against --workers 1, {rows} chat rows, wall time, "
          f"{rounds} paired rounds, {load()}")
    both: dict = {}
    times = paired({"w1": lambda: batch(answerer, source, folder / "w1.jsonl", 1),
                    "w2": lambda: batch(answerer, source, folder / "w2.jsonl", 2)}, rounds, measure=1, both=both)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"  --workers 1: {rows / med['w1']:,.0f} rows/s; --workers 2: {rows / med['w2']:,.0f} rows/s; "
          f"speed-up {ratio(times, 'w2', 'w1'):.2f}x (target >= 1.7), {load()}")
    cpu_ratio = statistics.median(b[0] / a[0] for a, b in zip(both["w1"], both["w2"]))
    print(f"  CPU time of the whole run (parent and workers), --workers 2 / --workers 1: {cpu_ratio:.2f}x; "
          f"wall speed-up 2 cores could give at that cost: {2 / cpu_ratio:.2f}x (on a machine this loaded, "
          "the wall figure measures the scheduler's share, not the batch)")


def spark(folder: Path, rows: int, rounds: int) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
        from pyspark.sql import SparkSession
    except ImportError as exc:
        print(f"3. Spark: not run ({exc.name} is not installed: pip install -e '.[spark]')")
        return
    from groundrules.batch.spark import answers
    book = default_rulebook()
    messages = chats(rows)
    source = folder / "chats.parquet"
    pq.write_table(pa.table({"id": [m["id"] for m in messages], "content": [m["content"] for m in messages]}), source)
    answerer = Answerer(book, KEYED, AGENT)
    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    t0 = time.perf_counter()
    session = (SparkSession.builder.master("local[2]").appName("bench-batch").config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false").config("spark.sql.execution.arrow.maxRecordsPerBatch", "1000").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    started = time.perf_counter() - t0
    try:
        df = session.read.parquet(str(source)).repartition(2).cache()
        df.count()

        def on_spark() -> None:
            answers(df, KEYED, caller=AGENT).write.mode("overwrite").parquet(str(folder / "spark-out"))

        cold = cpu(on_spark)[1]
        batch(answerer, source, folder / "b2.parquet", 2)
        got = {r["key"]: r for r in pq.read_table(folder / "spark-out").to_pylist()}
        want = pq.read_table(folder / "b2.parquet").to_pylist()
        assert len(got) == len(want) and all(got[r["key"]] == r for r in want), "Spark != batch"
        print(f"3. Spark local[2] against batch --workers 2, {rows} chat rows, Parquet in and out, wall time, "
              f"{rounds} paired rounds after a warm-up, {load()}")
        print(f"  start-up apart: session {started:.1f} s; first (cold) run {cold:.1f} s; answers byte-identical to batch's")
        times = paired({"batch2": lambda: batch(answerer, source, folder / "b2.parquet", 2), "spark": on_spark},
                       rounds, measure=1)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"  batch --workers 2: {rows / med['batch2']:,.0f} rows/s; Spark local[2]: {rows / med['spark']:,.0f} rows/s; "
              f"Spark/batch speed {ratio(times, 'spark', 'batch2'):.2f}x (target >= 0.7), {load()}")
    finally:
        session.stop()


def presidio(folder: Path, rows: int) -> None:
    messages = chats(rows)
    labelled = [m for m in messages if m["phones"]]
    book = default_rulebook()
    service = Service(book)
    t, _ = cpu(lambda: [service.call("lock_message", r, AGENT) for r in lock_rows(messages)])
    found = 0
    for m in labelled:
        locks = service.call("lock_message", lock_rows([m])[0], AGENT)["data"]["locks"]
        spans = {(x["locator"]["start"], x["locator"]["end"]) for x in locks if x["kind"] == "phone" and x["valid"]}
        found += sum((p[0], p[1]) in spans for p in m["phones"])
    total = sum(len(m["phones"]) for m in labelled)
    print(f"4. Presidio against lock_message on {rows} messages ({total} labelled mobiles in {len(labelled)} of them), {load()}")
    print(f"  groundrules lock_message: {rows / t:,.0f} rows/s of CPU, recall {found / total:.3f} (exact spans, valid phones)")
    try:
        import spacy
        from presidio_analyzer import AnalyzerEngine, Pattern, PatternRecognizer, RecognizerRegistry
        from presidio_analyzer.nlp_engine import SpacyNlpEngine
    except ImportError as exc:
        print(f"  Presidio: not run ({exc.name} is not installed: pip install presidio-analyzer)")
        return
    model = folder / "zh_blank"
    spacy.blank("zh").to_disk(model)
    engine = SpacyNlpEngine(models=[{"lang_code": "zh", "model_name": str(model)}])
    registry = RecognizerRegistry(supported_languages=["zh"])
    registry.add_recognizer(PatternRecognizer(supported_entity="CN_MOBILE", supported_language="zh", patterns=[
        Pattern("cn_mobile", r"(?<!\d)1[3-9]\d{9}(?!\d)", 0.6)]))
    analyzer = AnalyzerEngine(nlp_engine=engine, registry=registry, supported_languages=["zh"])
    texts = [m["content"] for m in messages]
    t, _ = cpu(lambda: [analyzer.analyze(text, language="zh", entities=["CN_MOBILE"]) for text in texts])
    hit = 0
    for m in labelled:
        spans = {(r.start, r.end) for r in analyzer.analyze(m["content"], language="zh", entities=["CN_MOBILE"])}
        hit += sum((p[0], p[1]) in spans for p in m["phones"])
    from importlib.metadata import version
    print(f"  Presidio {version('presidio-analyzer')} AnalyzerEngine, one pattern recognizer "
          f"(1[3-9] + 9 digits), blank zh spaCy pipeline (no trained model): {rows / t:,.0f} rows/s of CPU, "
          f"recall {hit / total:.3f} (exact spans)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=20_000)
    p.add_argument("--contexts", type=int, default=5_000)
    p.add_argument("--scale-rows", type=int, default=120_000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--part", choices=("all", "core", "scale", "spark", "presidio"), default="all")
    p.add_argument("--tiny", action="store_true")
    a = p.parse_args()
    if a.tiny:
        a.rows, a.contexts, a.scale_rows, a.rounds = 300, 64, 300, 1
    folder = Path(tempfile.mkdtemp(prefix="bench-batch-"))
    try:
        if a.part in ("all", "core"):
            core(folder, a.rows, a.contexts, a.rounds)
        if a.part in ("all", "scale"):
            scale(folder, a.scale_rows, a.rounds)
        if a.part in ("all", "spark"):
            spark(folder, a.rows, a.rounds)
        if a.part in ("all", "presidio"):
            presidio(folder, a.rows)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
