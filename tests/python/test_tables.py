"""Reads occa-tools convert output with pandas (pyarrow), DuckDB, polars and
Dask, each with default settings, and checks the documented dtypes
(formats/parquet/SCHEMA.md) and that the per-kernel totals equal those of
occa-tools summary. Spark: test_spark.py (make test-spark)."""

import json

import dask.dataframe as dd
import duckdb
import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest

from conftest import RANKS

INT64 = ["pid", "tid", "start_ns", "duration_ns", "correlation_id", "device_id", "stream", "kernel_id", "memory",
         "src_memory", "dst_memory", "bytes", "aux", "comm", "request", "device_duration_ns"]
INT32 = ["rank", "thread", "status", "peer", "tag"]
STRINGS = ["host", "kind", "name", "device", "direction"]
# The columns of an events file, in both formats.
FILE_COLUMNS = ["rank", "host", "pid", "thread", "tid", "kind", "name", "start", "start_ns", "duration_ns", "status",
                "correlation_id", "device", "device_id", "stream", "kernel_id", "memory", "src_memory",
                "dst_memory", "bytes", "direction", "aux", "peer", "tag", "comm", "request", "device_start", "device_start_ns",
                "device_duration_ns"]
SCHEMA_VERSION = "3.0"


def kernel_totals(df):
    runs = df[(df["kind"] == "run") & (df["duration_ns"] >= 0)]
    return runs.groupby("name")["duration_ns"].agg(["sum", "count"])


def check_totals(totals, summary):
    assert sorted(totals.index) == sorted(summary.index)
    for name, row in totals.iterrows():
        assert row["sum"] == summary.loc[name, "total_ns"], name
        assert row["count"] == summary.loc[name, "calls"], name


def events(converted, fmt="parquet"):
    return converted[fmt] / "events"


def test_pandas_parquet(converted, summary_kernels):
    df = pd.read_parquet(events(converted))
    assert list(df.columns) == FILE_COLUMNS
    for c in INT64:
        assert df[c].dtype == "int64", c
    for c in INT32:
        assert df[c].dtype == "int32", c
    for c in STRINGS:
        assert pd.api.types.is_string_dtype(df[c]) or pd.api.types.is_object_dtype(df[c]), (c, df[c].dtype)
    for c in ("start", "device_start"):
        assert isinstance(df[c].dtype, pd.DatetimeTZDtype), (c, df[c].dtype)
        assert df[c].dtype.unit == "us" and str(df[c].dtype.tz) == "UTC"
    assert sorted(df["rank"].unique()) == list(range(RANKS))
    # start is start_ns to the µs, rounded down; a believable epoch: after 2020.
    us = df["start"].astype("int64")
    assert (us == df["start_ns"] // 1000).all()
    assert df["start"].min() > pd.Timestamp("2020-01-01", tz="UTC")
    check_totals(kernel_totals(df), summary_kernels)


def test_parquet_metadata(converted):
    # conftest converts with -j 2: two files, each a run of consecutive
    # ranks in rank order, the first's before the second's.
    files = sorted(events(converted).glob("*.parquet"))
    assert [f.name for f in files] == ["part-00000-of-00001-000.parquet", "part-00000-of-00001-001.parquet"]
    ranks = []
    for f in files:
        md = pq.read_metadata(f)
        kv = {k.decode(): v.decode() for k, v in md.metadata.items()}
        assert kv["occa-tools.schema_version"] == SCHEMA_VERSION
        assert "start_ns and device_start_ns the same times exactly, in unix ns" in kv["occa-tools.epoch"]
        assert all(md.row_group(i).num_rows <= 1 << 16 for i in range(md.num_row_groups))
        assert md.row_group(0).column(0).compression == "ZSTD"
        # Every row group has the rank bounds a query on a rank prunes by.
        for i in range(md.num_row_groups):
            st = md.row_group(i).column(0).statistics
            assert st.has_min_max and st.min <= st.max
        schema = pq.read_schema(f)
        assert schema.names == FILE_COLUMNS
        assert str(schema.field("rank").type) == "int32"
        assert str(schema.field("start").type) == "timestamp[us, tz=UTC]"
        assert str(schema.field("start_ns").type) == "int64"
        file_ranks = pq.read_table(f, columns=["rank"]).column("rank").to_pylist()
        assert file_ranks == sorted(file_ranks)
        ranks += file_ranks
    assert ranks == sorted(ranks) and sorted(set(ranks)) == list(range(RANKS))


def test_duckdb_parquet(converted, summary_kernels):
    con = duckdb.connect()
    glob = str(events(converted) / "*.parquet")
    types = {r[0]: r[1] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{glob}')").fetchall()}
    assert types["start"] == "TIMESTAMP WITH TIME ZONE", types["start"]
    assert types["start_ns"] == "BIGINT" and types["duration_ns"] == "BIGINT" and types["name"] == "VARCHAR"
    assert types["rank"] == "INTEGER", types["rank"]
    rows = con.execute(f"""SELECT name, sum(duration_ns), count(*) FROM read_parquet('{glob}')
                           WHERE kind = 'run' AND duration_ns >= 0 GROUP BY name""").fetchall()
    totals = pd.DataFrame(rows, columns=["name", "sum", "count"]).set_index("name")
    check_totals(totals, summary_kernels)
    ranks = con.execute(f"SELECT count(DISTINCT rank) FROM read_parquet('{glob}')").fetchone()[0]
    assert ranks == RANKS
    n_pandas = len(pd.read_parquet(events(converted)))
    n_duck = con.execute(f"SELECT count(*) FROM read_parquet('{glob}')").fetchone()[0]
    assert n_pandas == n_duck
    n_rank = con.execute(f"SELECT count(*) FROM read_parquet('{glob}') WHERE rank = 1").fetchone()[0]
    assert n_rank == len(pd.read_parquet(events(converted), filters=[("rank", "==", 1)])) > 0


def test_polars_parquet(converted, summary_kernels):
    df = pl.scan_parquet(events(converted)).collect()
    assert df.columns == FILE_COLUMNS
    assert str(df.schema["start"]) == "Datetime(time_unit='us', time_zone='UTC')"
    assert df.schema["start_ns"] == pl.Int64 and df.schema["rank"] == pl.Int32
    runs = df.filter((pl.col("kind") == "run") & (pl.col("duration_ns") >= 0))
    totals = runs.group_by("name").agg(pl.col("duration_ns").sum().alias("sum"), pl.len().alias("count"))
    check_totals(totals.to_pandas().set_index("name"), summary_kernels)
    assert sorted(df["rank"].unique().to_list()) == list(range(RANKS))


def test_dask_parquet(converted, summary_kernels):
    df = dd.read_parquet(str(events(converted))).compute()
    assert list(df.columns) == FILE_COLUMNS
    assert sorted(int(r) for r in df["rank"].unique()) == list(range(RANKS))
    check_totals(kernel_totals(df), summary_kernels)


def test_pandas_csv(converted, summary_kernels):
    files = sorted(events(converted, "csv").glob("events-rank*.csv"))
    assert len(files) == RANKS
    df = pd.concat([pd.read_csv(f, keep_default_na=False, na_values={"device_start": [""], "device_start_ns": [""]})
                    for f in files])
    assert list(df.columns) == FILE_COLUMNS
    for c in INT64 + INT32:
        assert df[c].dtype == "int64", c
    check_totals(kernel_totals(df), summary_kernels)
    pq_df = pd.read_parquet(events(converted))
    assert len(df) == len(pq_df)
    # The same times as the Parquet files: the exact ns, and the ISO text
    # to the µs.
    assert sorted(df["start_ns"]) == sorted(pq_df["start_ns"])
    assert sorted(pd.to_datetime(df["start"], utc=True)) == sorted(pq_df["start"])


def test_duckdb_csv(converted):
    con = duckdb.connect()
    glob = str(events(converted, "csv") / "*.csv")
    types = {r[0]: r[1] for r in con.execute(f"DESCRIBE SELECT * FROM read_csv('{glob}')").fetchall()}
    assert types["start"] == "TIMESTAMP WITH TIME ZONE" and types["start_ns"] == "BIGINT", types


def test_processes(converted, run_dir):
    procs = {"csv": pd.read_csv(converted["csv"] / "processes" / "part-00000-of-00001.csv"),
             "parquet": pd.read_parquet(converted["parquet"] / "processes")}
    for fmt, df in procs.items():
        assert sorted(df["rank"]) == list(range(RANKS)), fmt
        assert (df["dropped"] == 0).all() and df["complete"].all(), fmt
        assert df["config_text"].str.len().min() > 0, fmt
    assert all(json.loads(c) for c in procs["csv"]["cmdline"])
    assert all(len(c) > 0 for c in procs["parquet"]["cmdline"])
    assert list(procs["csv"]["trace"]) == list(procs["parquet"]["trace"])
