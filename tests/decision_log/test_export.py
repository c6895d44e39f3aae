"""The log exported to Parquet as stored (payloads sealed, nothing personal in the clear) replays
to the report the database replays to: on one machine (ExportedLog) and on a local Spark session
(spark_replay, extended: a session takes seconds to start; never skipped in CI)."""
from __future__ import annotations

import json
import os
import shutil
import sys

import pytest

from groundrules import load_rulebook
from groundrules.cli.main import main
from groundrules.decision_log import replay
from groundrules.decision_log.export import ExportedLog, export

from decision_support import KEY_MATERIAL
from corpus_traffic import traffic
from test_replay import ONCE, edited, logged  # noqa: F401 - the corpus logged as traffic

pytest.importorskip("pyarrow")


@ONCE
def test_the_export_replays_as_the_database_does_and_holds_nothing_in_the_clear(logged, tmp_path, rulebook, key):
    out = tmp_path / "log.parquet"
    rows = export(logged.decisions, out)
    assert rows == len(list(logged.decisions.rows()))
    contents = out.read_bytes()
    messages = [m["content"] for _, a in traffic() if "messages" in a for m in a["messages"]]
    assert not any(text.encode("utf-8") in contents for text in messages if len(text) > 8)
    candidate = load_rulebook(edited(tmp_path))
    expected = replay.replay(logged.decisions, candidate, [rulebook], examples=20)
    assert expected["changed"] > 0
    exported = ExportedLog(out, key, candidate, data_keys=logged.decisions.data_keys)
    got = replay.replay(exported, candidate, [rulebook], examples=20, workers=2, chunk_rows=9)
    assert json.dumps(got, ensure_ascii=False) == json.dumps(expected, ensure_ascii=False)


@ONCE
def test_the_command_exports_for_the_roles_that_may_read_the_log(logged, db, tmp_path, capsys, rulebook):
    keyfile = tmp_path / "key"
    keyfile.write_bytes(KEY_MATERIAL)
    base = ["decisions", "export", "--db", str(db), "--decision-key", str(keyfile), "--out", str(tmp_path / "x.parquet")]
    assert main([*base, "--project", "p1"]) == 0
    assert json.loads(capsys.readouterr().out)["data"]["exported"] == \
        len([r for r in logged.decisions.rows() if r["project"] == "p1"])
    roles = rulebook.of_kind("role_table")[0]
    for role in (r for r in roles.roles if not roles.may_call(r, "read_decisions")):
        assert main([*base, "--role", role]) == 1


@pytest.fixture(scope="module")
def spark():
    try:
        pytest.importorskip("pyspark")
    except pytest.skip.Exception:
        if os.environ.get("CI") == "true":
            pytest.fail("pyspark is not installed; .ci/run installs it")
        raise
    if shutil.which("java") is None and os.environ.get("CI") != "true":
        pytest.skip("java is not installed (apt-get install openjdk-17-jre-headless)")
    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    session = (SparkSession.builder.master("local[2]").appName("groundrules-replay-test")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.mark.extended
@ONCE
def test_spark_replays_an_export_to_the_same_report(spark, logged, tmp_path, rulebook, key):
    from groundrules.core.rulebook import data_root
    from groundrules.decision_log.spark_replay import replay_on_spark
    out = tmp_path / "log.parquet"
    export(logged.decisions, out)
    root = edited(tmp_path)
    candidate = load_rulebook(root)
    expected = replay.replay(logged.decisions, candidate, [rulebook], examples=20)
    df = spark.read.parquet(str(out)).repartition(3)
    data_keys = logged.decisions.data_keys
    got = replay_on_spark(df, ExportedLog(out, key, candidate, data_keys=data_keys), candidate, root,
                          {data_root(): rulebook}, examples=20, key_material=KEY_MATERIAL,
                          key_store=getattr(data_keys, "path", None))
    assert json.dumps(got, ensure_ascii=False) == json.dumps(expected, ensure_ascii=False)
