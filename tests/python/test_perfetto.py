"""Parses occa-tools' Perfetto output with the compiled schema shipped in the
`perfetto` package and checks tracks, slice counts per track, nesting,
flows and counter values."""

import collections
import pathlib
import zlib

import pytest

from conftest import RANKS, occa_tools

pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2")

SMALL = pathlib.Path(__file__).parent / "testdata" / "small.occatrace"
BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4


class Parsed:
    """Reads timestamps as trace_processor does: per sequence, a
    ClockSnapshot declares the incremental clock (64) beside BOOTTIME, and
    each timestamp on it adds to its running value; TracePacketDefaults give
    the default clock and track."""

    def __init__(self, path):
        t = pb.Trace()
        t.ParseFromString(path.read_bytes())
        self.compressed = sum(p.HasField("compressed_packets") for p in t.packet)
        self.tracks = {}  # uuid -> descriptor
        self.names = {}  # (seq, iid) -> name
        self.events = collections.defaultdict(list)  # track uuid -> [(ts, type, name, packet)], in time order
        defaults, clocks = {}, {}  # seq -> TracePacketDefaults; (seq, clock id) -> [running value, offset]
        for i, p in enumerate(unpacked(t)):
            seq = p.trusted_packet_sequence_id
            if p.sequence_flags & 1:  # SEQ_INCREMENTAL_STATE_CLEARED
                defaults.pop(seq, None)
            if p.HasField("trace_packet_defaults"):
                defaults[seq] = p.trace_packet_defaults
            if p.HasField("track_descriptor"):
                self.tracks[p.track_descriptor.uuid] = p.track_descriptor
            for n in p.interned_data.event_names:
                self.names[(seq, n.iid)] = n.name
            if p.HasField("clock_snapshot"):
                cs = {c.clock_id: c for c in p.clock_snapshot.clocks}
                for cid, c in cs.items():
                    if 64 <= cid < 128:
                        assert c.is_incremental
                        clocks[(seq, cid)] = [c.timestamp, cs[6].timestamp - c.timestamp]
                continue
            if p.HasField("track_event"):
                te = p.track_event
                d = defaults.get(seq)
                cid = p.timestamp_clock_id or (d.timestamp_clock_id if d else 0)
                ts = p.timestamp
                if 64 <= cid < 128:
                    c = clocks[(seq, cid)]
                    c[0] += ts
                    ts = c[0] + c[1]
                else:
                    assert cid in (0, 6)  # BOOTTIME
                track = te.track_uuid if te.HasField("track_uuid") else d.track_event_defaults.track_uuid
                name = self.names.get((seq, te.name_iid), "") if te.name_iid else ""
                assert track in self.tracks, "event on an undescribed track"
                assert p.sequence_flags & 2, "interned names need SEQ_NEEDS_INCREMENTAL_STATE"
                self.events[track].append((ts, te.type, name, te, i))
        for u, evs in self.events.items():  # time order, ties in file order
            evs.sort(key=lambda e: (e[0], e[4]))
            self.events[u] = [e[:4] for e in evs]

    def track_name(self, u):
        td = self.tracks[u]
        if td.HasField("process"):
            return td.process.process_name
        if td.HasField("thread"):
            return td.thread.thread_name
        return td.name

    def slices(self, u):
        """(start, end, name, begin event, end event) of a track; an end
        closes the innermost open slice, as in trace_processor."""
        out, stack = [], []
        for e in self.events[u]:
            if e[1] == BEGIN:
                stack.append(e)
            elif e[1] == END:
                b = stack.pop()
                out.append((b[0], e[0], b[2], b[3], e[3]))
        assert not stack, "a slice never ends"
        return sorted(out, key=lambda x: (x[0], -x[1]))

    def processes(self):
        return {u: td for u, td in self.tracks.items() if td.HasField("process")}


def assert_nested(slices):
    stack = []
    for s, e, name, *_ in sorted(slices, key=lambda x: (x[0], -x[1])):
        while stack and stack[-1] <= s:
            stack.pop()
        assert not stack or e <= stack[-1], f"{name} [{s}, {e}) overlaps its parent"
        stack.append(e)


def unpacked(t):
    """The packets of t, those of compressed_packets (what convert writes
    unless -compress=false) inflated in their place, as trace_processor
    reads them."""
    for p in t.packet:
        if p.HasField("compressed_packets"):
            inner = pb.Trace()
            inner.ParseFromString(zlib.decompress(p.compressed_packets))
            yield from inner.packet
        else:
            yield p


def convert(tool, tmp_path, *inputs, flags=()):
    occa_tools(tool, "convert", "-to", "perfetto", *flags, "-o", tmp_path, *inputs)
    out = tmp_path / "trace.perfetto-trace"
    assert out.exists()
    return Parsed(out)


@pytest.mark.parametrize("flags", [(), ("-compress=false",)])
def test_small(tool, tmp_path, flags):
    t = convert(tool, tmp_path, SMALL, flags=flags)
    # Compressed unless -compress=false: then every packet is plain.
    assert (t.compressed > 0) == (flags == ())
    procs = t.processes()
    assert len(procs) == 1
    (proc,) = procs.values()
    assert proc.process.process_name == "rank 3 (node7, pid 4242)"
    by_name = collections.defaultdict(list)
    for u in t.tracks:
        by_name[t.track_name(u)].append(u)
    # Threads: main and two workers.
    assert len(by_name["main"]) == 1 and len(by_name["worker"]) == 2
    main = t.slices(by_name["main"][0])
    assert collections.Counter(s[2] for s in main) == {
        "device_setup CUDA": 1, "memory_alloc x": 1, "build axpy": 1, "copy": 1, "run axpy": 2,
        "stream_finish": 1, "timestep": 1}
    for u in t.tracks:
        assert_nested(t.slices(u))
    # Devices with their streams.
    dev = [u for u in t.tracks if t.track_name(u) == "device CUDA:0"]
    assert len(dev) == 1
    streams = {t.track_name(u): u for u, td in t.tracks.items() if td.parent_uuid == dev[0]}
    assert set(streams) == {"current stream", "stream 1"}
    assert sorted(s[2] for s in t.slices(streams["current stream"])) == ["axpy", "axpy"]
    assert sorted(s[2] for s in t.slices(streams["stream 1"])) == ["copy H2D", "dot"]
    # Flows: each launch with device time links to its device slice.
    out = {f for u in t.tracks for s in t.slices(u) for f in s[3].flow_ids}
    into = {f for u in t.tracks for s in t.slices(u) for f in s[4].terminating_flow_ids}
    assert len(out) == 2 and out == into
    dev_axpy = sorted((s[0], s[1]) for s in t.slices(streams["current stream"]))
    t0 = 1767225600_000000000
    assert dev_axpy[0] == (t0 + 1011000, t0 + 1013000)  # device-side times
    # Memory in use on CUDA:0: 1 MiB, then 0 after the free.
    mem = [u for u in t.tracks if t.track_name(u) == "memory in use CUDA:0"]
    assert len(mem) == 1 and t.tracks[mem[0]].counter.unit == 3  # SIZE_BYTES
    assert [e[3].counter_value for e in t.events[mem[0]]] == [1 << 20, 0]
    # Drops and triggers are instants.
    instants = [e[2] for evs in t.events.values() for e in evs if e[1] == INSTANT]
    assert "DROPPED 12 events (buffer_full)" in instants and "trigger pause" in instants


def test_run(tool, run_dir, tmp_path):
    t = convert(tool, tmp_path, run_dir)
    procs = t.processes()
    assert sorted(td.process.process_name.split(" ")[1] for td in procs.values()) == [str(r) for r in range(RANKS)]
    assert len({td.process.pid for td in procs.values()}) == RANKS
    runs = 0
    for u in t.tracks:
        sl = t.slices(u)
        assert_nested(sl)
        runs += sum(1 for s in sl if s[2].startswith("run "))
    assert runs > 0
    # Every kernel launch of the run is a slice on a thread track (compare
    # with the summary's calls).
    import io

    import pandas as pd
    k = pd.read_csv(io.StringIO(occa_tools(tool, "summary", "-format", "csv", "-section", "kernels", run_dir)))
    assert runs == k["calls"].sum()
