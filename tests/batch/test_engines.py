"""The engines' adapters on real local clusters: Spark's `mapInArrow` on a `local[2]` session and
Dask's `map_partitions` on a two-process LocalCluster answer a few thousand chat messages with the
bytes `groundrules batch` writes for the same rows, and tables given by folder are shipped to the
workers. Each module-scoped cluster is started once; both are slow to start, so these tests are
`extended` (.ci/run's second pass, which installs pyspark and Java): in CI they never skip."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from groundrules import load_rulebook
from groundrules.batch import formats
from groundrules.batch.plan import Plan, parse_map, parse_set
from cli_inproc import run_cli
from corpora import chats

pytestmark = pytest.mark.extended
ROOT = Path(__file__).resolve().parents[2]
ROWS = 3000
PLAN = Plan("lock_message", key="id", maps=(parse_map("message.id=id"), parse_map("message.content=content")),
            sets=(parse_set("message.role=user"),))
MAPPING = ["--key", "id", "--map", "message.id=id", "--map", "message.content=content", "--set", "message.role=user",
           "--operator", "batch", "--role", "agent"]


def _need(module: str, why: str):
    try:
        return pytest.importorskip(module, reason=why)
    except pytest.skip.Exception:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{module} is not installed; .ci/run installs it ({why})")
        raise


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """The messages as a Parquet file, and what `batch` answers for them (as Parquet columns)."""
    _need("pyarrow", "pip install -e '.[batch]'")
    import pyarrow as pa
    import pyarrow.parquet as pq
    folder = tmp_path_factory.mktemp("engines")
    messages = chats(ROWS)
    pq.write_table(pa.table({"id": [m["id"] for m in messages], "content": [m["content"] for m in messages]}),
                   folder / "chats.parquet")
    done = run_cli("batch", "lock_message", str(folder / "chats.parquet"), "--out", str(folder / "answers.parquet"),
                   *MAPPING)
    assert done.returncode == 0, done.stderr
    return folder, pq.read_table(folder / "answers.parquet").to_pylist()


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """A copy of the tables in a folder of its own, one message reworded (so its version is not the
    bundled tables'): what a cluster must be shipped."""
    import yaml
    root = tmp_path_factory.mktemp("tables")
    for folder in ("rules", "locks", "schemas"):
        shutil.copytree(ROOT / folder, root / folder)
    table = root / "rules" / "roles.yaml"
    data = yaml.safe_load(table.read_text(encoding="utf-8"))
    message = data["messages"]["row_no_column"]          # {language: text}
    message[next(iter(message))] += "。"
    table.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    assert load_rulebook(root).version != load_rulebook(ROOT).version
    return root


@pytest.fixture(scope="module")
def spark():
    _need("pyspark", "pip install -e '.[spark]'; Spark 4 needs Java 17: apt-get install openjdk-17-jre-headless")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        if os.environ.get("CI") == "true":
            pytest.fail("java is not installed; .ci/run installs openjdk-17-jre-headless")
        pytest.skip("java is not installed (apt-get install openjdk-17-jre-headless)")
    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    session = (SparkSession.builder.master("local[2]").appName("groundrules-batch-test")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.execution.arrow.maxRecordsPerBatch", "500").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def test_spark_answers_the_bytes_batch_writes(spark, archive):
    from groundrules.batch.spark import answers
    folder, expected = archive
    df = spark.read.parquet(str(folder / "chats.parquet")).repartition(4)
    got = sorted((r.asDict() for r in answers(df, PLAN).collect()), key=lambda r: int(r["key"][1:]))
    assert got == expected


def test_spark_ships_tables_given_by_folder(spark, archive, tables):
    from groundrules.batch.spark import answers
    folder, expected = archive
    df = spark.read.parquet(str(folder / "chats.parquet")).limit(200)
    got = {r.key: r.asDict() for r in answers(df, PLAN, rules=tables).collect()}
    version = load_rulebook(tables).version
    assert {r["rulebook"] for r in got.values()} == {version}
    by_key = {r["key"]: r for r in expected}
    assert all(dict(r, rulebook=None) == dict(by_key[k], rulebook=None) for k, r in got.items())


def test_dask_answers_the_bytes_batch_writes(archive, tables):
    _need("dask.dataframe", "pip install -e '.[dask]'")
    distributed = _need("distributed", "pip install -e '.[dask]'")
    import dask.dataframe as dd
    from groundrules.batch.dask import answers
    folder, expected = archive
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        ddf = dd.read_parquet(str(folder / "chats.parquet")).repartition(npartitions=4)
        got = answers(ddf, PLAN).compute()
        shipped = answers(ddf.head(100, compute=False), PLAN, rules=tables).compute()
    rows = sorted(got.to_dict("records"), key=lambda r: int(r["key"][1:]))
    assert [_plain(r) for r in rows] == expected
    assert set(shipped["rulebook"]) == {load_rulebook(tables).version}


def _plain(record: dict) -> dict:
    """pandas gives NaN/None for a null text, numpy bools: back to what Arrow's to_pylist gives."""
    return {k: (None if v is None or (isinstance(v, float) and v != v) else bool(v) if k == "ok" else v)
            for k, v in record.items()}


def test_answers_read_back_from_parquet_equal_batchs_jsonl(archive, tmp_path):
    folder, _ = archive
    out = tmp_path / "answers.jsonl"
    assert run_cli("batch", "lock_message", str(folder / "chats.parquet"), "--out", str(out), *MAPPING).returncode == 0
    assert list(formats.answers(str(out))) == list(formats.answers(str(folder / "answers.parquet")))
