"""OpenMP in the Perfetto output: a traced run of the omp-programs diamond
(scope "all"), converted with `occa-tools convert -to perfetto` and parsed
with the compiled schema of the `perfetto` package: the thread tracks carry
the implicit tasks and the 4 task slices, slices nest, and the dependence
edges are flows between task slices."""

import collections
import os
import pathlib
import subprocess

import pytest

from conftest import ROOT

pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")

from test_perfetto import BEGIN, END, assert_nested, convert, unpacked  # noqa: E402

PROGRAMS = ROOT / "build" / "tests" / "omp-programs"


@pytest.fixture(scope="module")
def diamond_trace(tmp_path_factory):
    if not PROGRAMS.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{PROGRAMS} missing: `make test-programs` needs clang and libomp-dev")
        pytest.skip(f"{PROGRAMS} missing: run `make test-programs` (clang, libomp-dev)")
    d = tmp_path_factory.mktemp("omp")
    cfg = d / "trace.toml"
    cfg.write_text(f'[openmp]\nscope = "all"\n[output]\ndirectory = "{d}/out"\n')
    env = dict(os.environ, OCCA_TOOLS_CONFIG=str(cfg), OMP_MAX_ACTIVE_LEVELS="2", OMP_DYNAMIC="false")
    p = subprocess.run([str(PROGRAMS), "diamond"], env=env, capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.startswith("ok "), p.stderr
    traces = sorted((d / "out").glob("*.occatrace"))
    assert len(traces) == 1, traces
    return traces[0]


def thread_tracks(t):
    return [u for u, td in t.tracks.items() if td.HasField("thread")]


def lanes_of(t, u):
    """A thread track and its lanes (tracks named "<thread> #N" under the
    process)."""
    name = t.track_name(u)
    return [u] + [v for v, td in t.tracks.items() if td.name.startswith(name + " #")]


def test_diamond(tool, diamond_trace, tmp_path):
    t = convert(tool, tmp_path, diamond_trace)
    threads = thread_tracks(t)
    assert len(threads) >= 2
    names = collections.Counter()
    for u in t.tracks:
        sl = t.slices(u)
        assert_nested(sl)
        for s in sl:
            n = s[2]
            if n.startswith("task ") and n != "task create":
                n = "task"
            elif n.startswith("implicit task "):
                n = "implicit task"
            names[n] += 1
    # Every OpenMP slice is on a thread track or one of its lanes.
    on_threads = {v for u in threads for v in lanes_of(t, u)}
    for u in t.tracks:
        if u not in on_threads:
            assert not any(s[2].startswith(("task ", "implicit task", "parallel")) for s in t.slices(u))
    assert names["task"] == 4, names
    assert names["implicit task"] == 2, names
    assert names["parallel"] == 1, names
    assert names["single (executor)"] == 1 and names["single (other)"] == 1, names
    assert names["barrier (implicit)"] >= 2 and names["wait"] >= 2, names
    # Each thread's implicit task: "implicit task N/2", one per thread.
    impl = sorted(s[2] for u in t.tracks for s in t.slices(u) if s[2].startswith("implicit task "))
    assert impl == ["implicit task 0/2", "implicit task 1/2"]
    # The worker's implicit task ends by the end of the parallel region.
    (par,) = [s for u in t.tracks for s in t.slices(u) if s[2] == "parallel"]
    for u in t.tracks:
        for s in t.slices(u):
            if s[2].startswith("implicit task "):
                assert par[0] <= s[0] and s[1] <= par[1], (s[:3], par[:3])
    # Task slices carry their id; the dependence edges are flows from one
    # task slice to another (the diamond: a-b, a-c, b-d, c-d).
    tasks = {}
    for u in t.tracks:
        for s in t.slices(u):
            if s[2].startswith("task ") and s[2] != "task create":
                tasks.setdefault(s[2], []).append(s)
    assert len(tasks) == 4
    out, into = {}, {}
    for segs in tasks.values():
        for s in segs:
            for f in list(s[3].flow_ids) + list(s[4].flow_ids):
                out[f] = s[2]
            for f in list(s[3].terminating_flow_ids) + list(s[4].terminating_flow_ids):
                into[f] = s[2]
    edges = {(out[f], into[f]) for f in out if f in into}
    assert len(edges) >= 4, edges
    ids = sorted(tasks, key=lambda n: min(s[0] for s in tasks[n]))
    a, d = ids[0], ids[-1]
    assert sum(1 for e in edges if e[0] == a) == 2 and sum(1 for e in edges if e[1] == d) == 2, edges
    # Annotations carry the ids: a task slice's "task" is the id in its name.
    dn = debug_names(tmp_path / "trace.perfetto-trace")
    for name, segs in tasks.items():
        for s in segs:
            ann = {dn[a.name_iid]: a.uint_value for a in s[3].debug_annotations}
            assert ann["task"] == int(name.split()[1]) and ann["parent"] != 0, ann
    for u in t.tracks:
        for s in t.slices(u):
            if s[2].startswith("implicit task "):
                ann = {dn[a.name_iid]: a.uint_value for a in s[3].debug_annotations}
                assert ann["task"] != 0 and ann["parallel"] != 0, ann


def debug_names(path):
    """Interned debug annotation names (one sequence per rank)."""
    t = pb.Trace()
    t.ParseFromString(path.read_bytes())
    out = {}
    for p in unpacked(t):
        for n in p.interned_data.debug_annotation_names:
            out[n.iid] = n.name
    return out


def test_no_dangling_events(tool, diamond_trace, tmp_path):
    t = convert(tool, tmp_path, diamond_trace)
    for u in t.tracks:
        evs = [e for e in t.events[u] if e[1] in (BEGIN, END)]
        assert len(evs) % 2 == 0
    unpaired = [e[2] for evs in t.events.values() for e in evs if "unpaired" in e[2] and "omp_thread" not in e[2]]
    assert not unpaired, unpaired
