"""Shared fixtures: the occa-tools binary, and a fake two-rank run made with
the C workload (build/tests/workload) under the occa-tools runtime."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOL = ROOT / "build" / "bin" / "occa-tools"
WORKLOAD = ROOT / "build" / "tests" / "workload"
CONFIG = ROOT / "configs" / "default.toml"
RANKS = 2


@pytest.fixture(scope="session")
def tool():
    if not TOOL.exists():
        pytest.skip(f"{TOOL} missing: run `make all` first")
    return TOOL


@pytest.fixture(scope="session")
def run_dir(tmp_path_factory):
    """A run directory holding one trace per rank."""
    if not WORKLOAD.exists():
        pytest.skip(f"{WORKLOAD} missing: run `make all test-programs` first")
    d = tmp_path_factory.mktemp("run")
    for rank in range(RANKS):
        env = dict(os.environ, OCCA_TOOLS_CONFIG=str(CONFIG), OCCA_TOOLS_OUTPUT_DIR=str(d),
                   OMPI_COMM_WORLD_RANK=str(rank), OMPI_COMM_WORLD_SIZE=str(RANKS))
        subprocess.run([str(WORKLOAD), "-t", "2", "-s", "500"], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    traces = sorted(d.glob("*.occatrace"))
    assert len(traces) == RANKS, traces
    return d


def occa_tools(tool, *args):
    p = subprocess.run([str(tool), *map(str, args)], capture_output=True, text=True)
    assert p.returncode == 0, f"occa-tools {' '.join(map(str, args))}: {p.stderr}"
    return p.stdout


@pytest.fixture(scope="session")
def converted(tool, run_dir, tmp_path_factory):
    """Output directories of convert -to parquet and -to csv (-j 2: two
    Parquet files, one per rank, whatever the cores)."""
    out = {}
    for fmt in ("parquet", "csv"):
        d = tmp_path_factory.mktemp(fmt)
        occa_tools(tool, "convert", "-to", fmt, "-j", "2", "-o", d, run_dir)
        out[fmt] = d
    return out


@pytest.fixture(scope="session")
def summary_kernels(tool, run_dir):
    """Per-kernel totals (ns) and calls from occa-tools summary."""
    import io

    import pandas as pd
    csv = occa_tools(tool, "summary", "-format", "csv", "-section", "kernels", run_dir)
    df = pd.read_csv(io.StringIO(csv))
    return df.set_index("kernel")
