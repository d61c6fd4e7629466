"""Reads occa-tools convert -to parquet output with Spark's default settings
(spark.read.parquet on the events directory) and checks the types and that
the per-kernel totals equal those of occa-tools summary. pyspark is a source
package on PyPI and needs a JRE, so CI, which installs wheels only, does not
run this: `make test-spark` does (see the Makefile)."""

import pytest

from conftest import RANKS

pyspark = pytest.importorskip("pyspark", reason="pyspark missing: pip install pyspark (needs a JRE), or make test-spark")


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession
    s = (SparkSession.builder.master("local[1]").appName("occa-tools-test")
         .config("spark.ui.enabled", "false").getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def test_spark_parquet(spark, converted, summary_kernels):
    df = spark.read.parquet(str(converted["parquet"] / "events"))
    types = dict(df.dtypes)
    assert types["start"] == "timestamp" and types["device_start"] == "timestamp"
    assert types["start_ns"] == "bigint" and types["duration_ns"] == "bigint"
    assert types["rank"] == "int"
    assert sorted(r["rank"] for r in df.select("rank").distinct().collect()) == list(range(RANKS))
    runs = df.where("kind = 'run' AND duration_ns >= 0").groupBy("name").agg({"duration_ns": "sum", "*": "count"})
    got = {r["name"]: (r["sum(duration_ns)"], r["count(1)"]) for r in runs.collect()}
    want = {name: (row["total_ns"], row["calls"]) for name, row in summary_kernels.iterrows()}
    assert got == want
    # The timestamp is start_ns to the µs.
    bad = df.where("unix_micros(start) != start_ns div 1000").count()
    assert bad == 0
    procs = spark.read.parquet(str(converted["parquet"] / "processes"))
    assert sorted(r["rank"] for r in procs.select("rank").collect()) == list(range(RANKS))
