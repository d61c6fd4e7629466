"""Reads occa-tools convert -to chrome output (Chrome trace-event JSON) with
json.load and checks it against occa-tools summary: one "X" event per
kernel call on the host threads, non-negative durations, ranks in the
process names, launches' device time on the device pseudo-threads."""

import collections
import json

import pytest

from conftest import RANKS, occa_tools

DEVICE_TID = 1000000


@pytest.fixture(scope="session")
def chrome(tool, run_dir, tmp_path_factory):
    d = tmp_path_factory.mktemp("chrome")
    occa_tools(tool, "convert", "-to", "chrome", "-o", d, run_dir)
    files = sorted(d.glob("events-rank*.json"))
    assert len(files) == RANKS, files
    out = []
    for f in files:
        with open(f) as fh:
            out.append(json.load(fh))
    return out


def test_envelope(chrome):
    for rank, doc in enumerate(chrome):
        assert doc["displayTimeUnit"] == "ns"
        assert doc["otherData"]["process"]["rank"] == rank
        assert all(e["pid"] == rank for e in doc["traceEvents"])
        assert {e["ph"] for e in doc["traceEvents"]} <= {"X", "i", "M"}


def test_process_names(chrome):
    for rank, doc in enumerate(chrome):
        names = [e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"]
        assert len(names) == 1 and names[0].startswith(f"rank {rank} @ "), names
        threads = {e["tid"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
        used = {e["tid"] for e in doc["traceEvents"] if e["ph"] != "M"}
        assert used <= threads, used - threads


def test_durations(chrome):
    for doc in chrome:
        xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
        assert xs
        for e in xs:
            assert e["dur"] >= 0, e
            assert e["ts"] > 1.5e15, e  # unix microseconds, after 2017
        for e in doc["traceEvents"]:
            if e["ph"] == "i":
                assert e["s"] == "t" and "dur" not in e, e


def test_kernel_calls(chrome, summary_kernels):
    calls = collections.Counter()
    device = collections.Counter()
    for doc in chrome:
        for e in doc["traceEvents"]:
            if e["ph"] == "X" and e["cat"] == "run":
                assert e["tid"] < DEVICE_TID
                calls[e["name"]] += 1
            elif e["ph"] == "X" and e["cat"] == "device":
                assert e["tid"] >= DEVICE_TID
                device[e["name"]] += 1
    assert sorted(calls) == sorted(summary_kernels.index)
    for name, n in calls.items():
        assert n == summary_kernels.loc[name, "calls"], name
        assert device[name] <= n, name
