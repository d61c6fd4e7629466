package tracetest

import (
	"errors"
	"io"

	"github.com/libocca/occa-tools/formats/trace"
)

// MaxGenEvents bounds the events FromBytes writes, so that one fuzz input
// stays cheap to convert.
const MaxGenEvents = 4096

// FromBytes writes, from fuzz input data, a well-formed trace that the
// runtime's ABI allows but that need not make sense: every timed kind with
// arguments of the right types, ids that reference definitions given
// before, after or never, the same correlation id begun twice or ended
// without a begin, out-of-range enum values (copy direction, status, cache,
// drop reason, trigger action), huge counts and sizes, times that go
// backwards (the writer clamps them within a thread) or jump, threads
// without a def, definitions repeated with other values (an empty device
// mode among them), OpenMP events in any order, stats chunks with drops,
// odd threads' events in raw events chunks (as the runtime writes whole
// buffers) in some traces, and a trace closed or cut short. The same data
// gives the same bytes.
//
// The data is read as a stream of choices; when it runs out every choice
// is 0, so any input, even an empty one, gives a trace.
func FromBytes(w io.Writer, data []byte) error {
	g := &fuzzGen{data: data}
	h := Header()
	first := g.byte()
	if first&1 == 1 {
		h.Rank = -1 // no rank: converters use the file's index
	}
	// Raw records in ticks that are ns: a raw chunk needs no clock chunk.
	withRaw := first&2 == 2
	if withRaw {
		h.ClockSource = "monotonic"
	}
	tw, err := trace.NewWriter(w, h)
	if err != nil {
		return err
	}
	if err := tw.WriteDefs(g.defs()); err != nil {
		return err
	}
	kinds := trace.EventKinds()
	batches := map[uint32]*trace.Batch{}
	var order []uint32
	times := map[uint32]int64{}
	raws := map[uint32]*rawBuffer{}
	var noTicks [64]uint8
	flush := func() error {
		for _, th := range order {
			if r := raws[th]; r != nil && len(r.data) > 0 {
				if err := r.write(tw, th, &noTicks); err != nil {
					return err
				}
				continue
			}
			if b := batches[th]; b.Len() > 0 {
				if err := tw.WriteBatch(b); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for n := 0; n < MaxGenEvents && !g.done(); n++ {
		op := g.byte()
		switch {
		case op < 8: // write what is pending, then more defs: they come late
			if err := flush(); err != nil {
				return err
			}
			if err := tw.WriteDefs(g.defs()); err != nil {
				return err
			}
			continue
		case op < 12:
			if err := flush(); err != nil {
				return err
			}
			var s trace.Stats
			s.Dropped[int(g.byte())%len(s.Dropped)] = g.value()
			if err := tw.WriteStats(&s); err != nil {
				return err
			}
			continue
		}
		th := g.thread()
		b := batches[th]
		if b == nil {
			b = tw.Batch(th)
			batches[th] = b
			order = append(order, th)
			if withRaw && th%2 == 1 {
				raws[th] = &rawBuffer{}
			}
		}
		k := kinds[int(g.byte())%len(kinds)]
		t := g.time(times[th])
		times[th] = t
		var args [trace.MaxArgs]uint64
		s := k.Spec()
		for i, a := range s.Args {
			args[i] = g.arg(a.Type, t)
		}
		if r := raws[th]; r != nil {
			if err := r.add(k, t, args[:len(s.Args)]); err != nil {
				return err
			}
			continue
		}
		err := b.Add(k, t, args[:len(s.Args)]...)
		if errors.Is(err, trace.ErrBatchFull) {
			if err = tw.WriteBatch(b); err == nil {
				err = b.Add(k, t, args[:len(s.Args)]...)
			}
		}
		if err != nil {
			return err
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if g.byte()%4 == 3 {
		return nil // cut: no final stats, as a killed process leaves it
	}
	return tw.Close()
}

// rawBuffer is a thread's raw records, as the runtime's buffer holds them,
// until they are written as one raw events chunk: each chunk continues the
// thread's records from the state the one before left (start).
type rawBuffer struct {
	enc    trace.RawEncoder
	start  trace.RawState
	data   []byte
	counts [64]uint32
	end    int64
}

func (r *rawBuffer) add(k trace.Kind, t int64, args []uint64) error {
	if len(r.data) == 0 {
		r.start = r.enc.State()
	}
	var err error
	r.data, err = r.enc.Append(r.data, k, uint64(t), args...)
	r.counts[k]++
	r.end = max(r.end, t)
	return err
}

func (r *rawBuffer) write(tw *trace.Writer, th uint32, tickArgs *[64]uint8) error {
	b := tw.Batch(th)
	if err := b.SetRaw(r.data, tickArgs, &r.start, &r.counts, r.end); err != nil {
		return err
	}
	err := tw.WriteBatch(b)
	r.data, r.counts = r.data[:0], [64]uint32{}
	return err
}

type fuzzGen struct {
	data []byte
	i    int
	corr uint64
}

func (g *fuzzGen) done() bool { return g.i >= len(g.data) }

func (g *fuzzGen) byte() byte {
	if g.i >= len(g.data) {
		return 0
	}
	g.i++
	return g.data[g.i-1]
}

// interesting are values that break careless code: zero, small enum
// values and one past them, powers of two, the signed and unsigned limits.
var interesting = [...]uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 255, 256, 1 << 20, 1 << 31, 1 << 32,
	1<<63 - 1, 1 << 63, 1<<64 - 1, 1<<64 - 2}

// value returns a small number, an interesting one, or eight bytes' worth.
func (g *fuzzGen) value() uint64 {
	c := g.byte()
	switch {
	case c < 128:
		return uint64(c & 15)
	case c < 224:
		return interesting[int(c)%len(interesting)]
	}
	var v uint64
	for range 8 {
		v = v<<8 | uint64(g.byte())
	}
	return v
}

// id returns an object or string id: mostly one of a few (defined or not),
// sometimes 0 (none) or a huge one.
func (g *fuzzGen) id() uint64 {
	c := g.byte()
	switch {
	case c < 240:
		return uint64(c % 8)
	case c < 248:
		return 1<<16 + uint64(c)
	}
	return g.value()
}

func (g *fuzzGen) thread() uint32 {
	c := g.byte()
	switch {
	case c < 250:
		return uint32(c % 4)
	case c < 253:
		return 1<<12 + uint32(c) // past the pairer's per-thread slots
	}
	return 1 << 16 // past the Perfetto writer's thread slice
}

// time advances t by a few µs, or moves it back or far ahead.
func (g *fuzzGen) time(t int64) int64 {
	if t == 0 {
		t = MonoStart
	}
	c := g.byte()
	switch {
	case c < 200:
		return t + int64(c)*100
	case c < 220:
		return t - int64(c)*1000 // back: the writer clamps it
	case c < 240:
		return t + int64(c)<<30
	}
	return int64(g.value() >> 1)
}

func (g *fuzzGen) arg(typ trace.ArgType, t int64) uint64 {
	switch typ {
	case trace.ArgCorr:
		c := g.byte()
		switch {
		case c < 128: // the next id
			g.corr++
		case c < 240: // one of the recent ids: ends, repeats
			return g.corr - min(g.corr, uint64(c%16))
		default:
			return g.value()
		}
		return g.corr
	case trace.ArgTime:
		c := g.byte()
		switch {
		case c < 32:
			return 0
		case c < 200:
			return uint64(t - int64(c)*50)
		case c < 230:
			return uint64(t + int64(c)*50)
		}
		return g.value()
	case trace.ArgString, trace.ArgDevice, trace.ArgKernel, trace.ArgMemory, trace.ArgStream, trace.ArgThread:
		return g.id()
	}
	return g.value()
}

var texts = [...]string{"", "CUDA", "Serial", "axpy", "x", "{\"a\": 1}", "#", "\x00\xff", "région", "a,\"b\"\n"}

// defs returns a few definitions of ids id() may pick.
func (g *fuzzGen) defs() []trace.Def {
	n := int(g.byte() % 16)
	defs := make([]trace.Def, 0, n)
	for range n {
		d := trace.Def{Kind: trace.DefString + trace.Kind(g.byte()%7)}
		s := d.Kind.Spec()
		for i, a := range s.Args {
			switch a.Type {
			case trace.ArgUint, trace.ArgInt:
				d.Args[i] = g.value()
			default:
				d.Args[i] = g.id()
			}
		}
		if d.Kind == trace.DefString {
			d.Text = texts[int(g.byte())%len(texts)]
		}
		defs = append(defs, d)
	}
	return defs
}
