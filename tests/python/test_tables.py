"""Reads occa-tools convert output with pandas (pyarrow) and DuckDB and
checks the documented dtypes (formats/parquet/SCHEMA.md) and that the
per-kernel totals equal those of occa-tools summary."""

import json

import duckdb
import pandas as pd
import pyarrow.parquet as pq
import pytest

from conftest import RANKS

INT64 = ["pid", "tid", "duration_ns", "correlation_id", "device_id", "stream", "kernel_id", "memory",
         "src_memory", "dst_memory", "bytes", "aux", "device_duration_ns"]
INT32 = ["rank", "thread", "status"]
STRINGS = ["host", "kind", "name", "device", "direction"]
COLUMNS = ["rank", "host", "pid", "thread", "tid", "kind", "name", "start", "duration_ns", "status",
           "correlation_id", "device", "device_id", "stream", "kernel_id", "memory", "src_memory",
           "dst_memory", "bytes", "direction", "aux", "device_start", "device_duration_ns"]


def kernel_totals(df):
    runs = df[(df["kind"] == "run") & (df["duration_ns"] >= 0)]
    return runs.groupby("name")["duration_ns"].agg(["sum", "count"])


def check_totals(totals, summary):
    assert sorted(totals.index) == sorted(summary.index)
    for name, row in totals.iterrows():
        assert row["sum"] == summary.loc[name, "total_ns"], name
        assert row["count"] == summary.loc[name, "calls"], name


def test_pandas_parquet(converted, summary_kernels):
    df = pd.read_parquet(converted["parquet"])
    assert list(df.columns) == COLUMNS
    for c in INT64:
        assert df[c].dtype == "int64", c
    for c in INT32:
        assert df[c].dtype == "int32", c
    for c in STRINGS:
        assert pd.api.types.is_string_dtype(df[c]) or pd.api.types.is_object_dtype(df[c]), (c, df[c].dtype)
    for c in ("start", "device_start"):
        assert isinstance(df[c].dtype, pd.DatetimeTZDtype), (c, df[c].dtype)
        assert df[c].dtype.unit == "ns" and str(df[c].dtype.tz) == "UTC"
    assert sorted(df["rank"].unique()) == list(range(RANKS))
    # A believable epoch: after 2020.
    assert df["start"].min() > pd.Timestamp("2020-01-01", tz="UTC")
    check_totals(kernel_totals(df), summary_kernels)


def test_parquet_metadata(converted):
    files = sorted(converted["parquet"].glob("events-rank*.parquet"))
    assert len(files) == RANKS
    for rank, f in enumerate(files):
        md = pq.read_metadata(f)
        kv = {k.decode(): v.decode() for k, v in md.metadata.items()}
        assert kv["occa-tools.schema_version"] == "1.0"
        assert "unix time in ns" in kv["occa-tools.epoch"]
        proc = json.loads(kv["occa-tools.process"])
        assert proc["rank"] == rank and proc["host"] and proc["cmdline"]
        assert proc["complete"] is True
        assert all(md.row_group(i).num_rows <= 1 << 20 for i in range(md.num_row_groups))
        assert md.row_group(0).column(0).compression == "ZSTD"
        schema = pq.read_schema(f)
        for c in ("kind", "name", "host", "device", "direction"):
            assert c in md.schema.to_arrow_schema().names
        assert str(schema.field("start").type) == "timestamp[ns, tz=UTC]"


def test_duckdb_parquet(converted, summary_kernels):
    con = duckdb.connect()
    glob = str(converted["parquet"] / "**" / "*.parquet")
    types = {r[0]: r[1] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{glob}')").fetchall()}
    # DuckDB >= 1.? keeps the nanoseconds (TIMESTAMPTZ_NS); older ones say TIMESTAMP WITH TIME ZONE.
    assert types["start"] in ("TIMESTAMPTZ_NS", "TIMESTAMP WITH TIME ZONE"), types["start"]
    assert types["duration_ns"] == "BIGINT" and types["rank"] == "INTEGER" and types["name"] == "VARCHAR"
    rows = con.execute(f"""SELECT name, sum(duration_ns), count(*) FROM read_parquet('{glob}')
                           WHERE kind = 'run' AND duration_ns >= 0 GROUP BY name""").fetchall()
    totals = pd.DataFrame(rows, columns=["name", "sum", "count"]).set_index("name")
    check_totals(totals, summary_kernels)
    ranks = con.execute(f"SELECT count(DISTINCT rank) FROM read_parquet('{glob}')").fetchone()[0]
    assert ranks == RANKS
    n_pandas = len(pd.read_parquet(converted["parquet"]))
    n_duck = con.execute(f"SELECT count(*) FROM read_parquet('{glob}')").fetchone()[0]
    assert n_pandas == n_duck


def test_pandas_csv(converted, summary_kernels):
    files = sorted(converted["csv"].glob("events-rank*.csv"))
    assert len(files) == RANKS
    df = pd.concat([pd.read_csv(f, keep_default_na=False, na_values={"device_start": [""]}) for f in files])
    assert list(df.columns) == COLUMNS
    for c in INT64 + INT32:
        assert df[c].dtype == "int64", c
    check_totals(kernel_totals(df), summary_kernels)
    pq_df = pd.read_parquet(converted["parquet"])
    assert len(df) == len(pq_df)
    # The same start times as the Parquet files.
    starts = pd.to_datetime(df["start"], unit="ns", utc=True)
    assert sorted(starts) == sorted(pq_df["start"])


def test_processes(converted, run_dir):
    for d in converted.values():
        procs = pd.read_csv(d / "_processes.csv")
        assert sorted(procs["rank"]) == list(range(RANKS))
        assert (procs["dropped"] == 0).all() and procs["complete"].all()
        assert all(json.loads(c) for c in procs["cmdline"])
        assert procs["config_text"].str.len().min() > 0
