"""The OpenMP tables of occa-tools convert (formats/parquet/SCHEMA.md, 1.1)
read with pandas (pyarrow) and DuckDB, from a two-rank run of the diamond
task program (tests/openmp/programs) traced with openmp.scope = "all"."""

import os
import pathlib
import subprocess

import duckdb
import pandas as pd
import pytest

from conftest import ROOT, occa_tools

PROGRAMS = ROOT / "build" / "tests" / "omp-programs"


@pytest.fixture(scope="session")
def omp_run(tmp_path_factory):
    """Two ranks of `omp-programs diamond`, converted to parquet and csv."""
    if not PROGRAMS.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{PROGRAMS} missing: CI installs clang and libomp-dev")
        pytest.skip(f"{PROGRAMS} missing (needs clang and libomp-dev)")
    d = tmp_path_factory.mktemp("omprun")
    cfg = d / "trace.toml"
    cfg.write_text('[openmp]\nscope = "all"\n')
    for rank in range(2):
        env = dict(os.environ, OCCA_TOOLS_CONFIG=str(cfg), OCCA_TOOLS_OUTPUT_DIR=str(d / "traces"),
                   OMPI_COMM_WORLD_RANK=str(rank), OMPI_COMM_WORLD_SIZE="2")
        subprocess.run([str(PROGRAMS), "diamond"], env=env, check=True, stdout=subprocess.DEVNULL)
    return d


@pytest.fixture(scope="session")
def omp_converted(tool, omp_run):
    out = {}
    for fmt in ("parquet", "csv"):
        o = omp_run / fmt
        occa_tools(tool, "convert", "-to", fmt, "-o", o, omp_run / "traces")
        out[fmt] = o
    return out


def diamond_edges(deps, rows):
    """The edges of one rank as (i, j) between its tasks numbered in creation order."""
    creates = rows[rows["kind"] == "omp_task_create"].sort_values("start_ns")
    order = {t: i for i, t in enumerate(creates["task"])}
    return sorted((order[s], order[k]) for s, k in zip(deps["src_task"], deps["sink_task"]))


def test_pandas(omp_converted):
    base = omp_converted["parquet"]
    # Each table is its own directory.
    events = pd.read_parquet(base / "events")
    assert not events["kind"].str.startswith("omp").any()
    for rank in range(2):
        rows = pd.read_parquet(base / "openmp", filters=[("rank", "==", rank)])
        deps = pd.read_parquet(base / "dependences", filters=[("rank", "==", rank)])
        for c in ("id", "parallel", "task", "parent_task", "count", "flags", "launch", "address", "task_ns",
                  "duration_ns", "pid", "start_ns"):
            assert rows[c].dtype == "int64", c
        for c in ("thread_num", "team_size", "type", "status", "thread"):
            assert rows[c].dtype == "int32", c
        assert rows["completed"].dtype == "bool"
        for c in ("start", "created"):
            assert isinstance(rows[c].dtype, pd.DatetimeTZDtype) and rows[c].dtype.unit == "us", c
        counts = rows["kind"].value_counts()
        assert counts["omp_parallel"] == 1 and counts["omp_implicit_task"] == 2
        assert counts["omp_task_create"] == 4 and counts["omp_task_depend"] == 8
        segs = rows[rows["kind"] == "omp_task"]
        assert segs["completed"].sum() == 4 and segs["task"].nunique() == 4
        assert (segs["duration_ns"] >= 0).all() and segs["created"].notna().all()
        assert (segs["start_ns"] >= segs["created_ns"]).all()
        # Implicit tasks: threads 0 and 1 of a team of 2, in the one region.
        it = rows[rows["kind"] == "omp_implicit_task"]
        assert sorted(it["thread_num"]) == [0, 1] and (it["team_size"] == 2).all()
        assert set(it["parallel"]) == set(rows[rows["kind"] == "omp_parallel"]["id"])
        assert diamond_edges(deps, rows) == [(0, 1), (0, 2), (1, 3), (2, 3)]
        assert set(deps["source"]) <= {"depend", "both"}


def test_duckdb(omp_converted):
    base = omp_converted["parquet"]
    con = duckdb.connect()
    rows = f"read_parquet('{base}/openmp/*.parquet')"
    deps = f"read_parquet('{base}/dependences/*.parquet')"
    types = {r[0]: r[1] for r in con.execute(f"DESCRIBE SELECT * FROM {rows}").fetchall()}
    assert types["id"] == "BIGINT" and types["thread_num"] == "INTEGER" and types["completed"] == "BOOLEAN"
    assert types["kind"] == "VARCHAR" and types["start"] == "TIMESTAMP WITH TIME ZONE"
    by_rank = con.execute(f"""SELECT rank, count(*) FILTER (WHERE kind = 'omp_task' AND completed),
                                     count(*) FILTER (WHERE kind = 'omp_implicit_task')
                              FROM {rows} GROUP BY rank ORDER BY rank""").fetchall()
    assert by_rank == [(0, 4, 2), (1, 4, 2)]
    edges = con.execute(f"SELECT rank, count(*) FROM {deps} GROUP BY rank ORDER BY rank").fetchall()
    assert edges == [(0, 4), (1, 4)]
    # Each rank's sink tasks: b and c once, d twice.
    sinks = con.execute(f"""SELECT rank, count(DISTINCT sink_task), max(n) FROM
                              (SELECT rank, sink_task, count(*) AS n FROM {deps} GROUP BY rank, sink_task)
                            GROUP BY rank ORDER BY rank""").fetchall()
    assert sinks == [(0, 3, 2), (1, 3, 2)]


def test_csv(omp_converted):
    base = omp_converted["csv"]
    for rank in range(2):
        rows = pd.read_csv(base / "openmp" / f"openmp-rank{rank:05d}.csv")
        deps = pd.read_csv(base / "dependences" / f"dependences-rank{rank:05d}.csv")
        assert (rows["kind"] == "omp_task_create").sum() == 4
        assert diamond_edges(deps, rows) == [(0, 1), (0, 2), (1, 3), (2, 3)]
