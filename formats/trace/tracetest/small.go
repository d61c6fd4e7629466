package tracetest

import (
	"io"

	"github.com/libocca/occa-tools/formats/trace"
)

// SmallOptions varies the small trace.
type SmallOptions struct {
	NoDefs  bool  // leave out the defs: readers must show placeholders
	NoClose bool  // stop before the final stats, as a killed process does
	PID     int64 // the process's pid when not 0: another process of the same rank
	Rank    int64 // the process's rank when not 0
}

// WriteSmall writes a small trace with every event kind, three threads, a
// clock chunk, a periodic stats chunk with drops and (unless NoClose) the
// final stats. The same bytes every time for a given klauspost/compress.
func WriteSmall(w io.Writer, o SmallOptions) error {
	h := Header()
	if o.PID != 0 {
		h.PID = o.PID
	}
	if o.Rank != 0 {
		h.Rank = o.Rank
	}
	tw, err := trace.NewWriter(w, h)
	if err != nil {
		return err
	}
	if !o.NoDefs {
		if err := tw.WriteDefs(Defs()); err != nil {
			return err
		}
	}
	if err := tw.WriteClock([]trace.ClockSync{{TSC: 123456789, Mono: MonoStart - 1000}}); err != nil {
		return err
	}
	us := func(n int64) int64 { return MonoStart + n*1000 }
	t0 := tw.Batch(0)
	add := func(b *trace.Batch, k trace.Kind, t int64, args ...uint64) {
		if err == nil {
			err = b.Add(k, t, args...)
		}
	}
	add(t0, trace.DeviceSetupBegin, us(1), 1, StrCUDA, 0, StrProps)
	add(t0, trace.DeviceSetupEnd, us(40), 1, 1, trace.StatusOK)
	add(t0, trace.StreamCreate, us(41), 1, 1)
	add(t0, trace.StreamSet, us(42), 1, 1)
	add(t0, trace.MemoryAllocBegin, us(50), 2, 1, 1<<20, StrBufX)
	add(t0, trace.MemoryAllocEnd, us(52), 2, 1, 0x7f0000001000, trace.StatusOK)
	add(t0, trace.BuildBegin, us(60), 3, 1, StrAxpy, StrSource, StrProps, 0xfeed)
	add(t0, trace.BuildEnd, us(900), 3, 1, trace.CacheMiss, trace.StatusOK)
	add(t0, trace.RegionPush, us(1000), StrStep)
	add(t0, trace.CopyBegin, us(1001), 4, trace.CopyH2D|trace.CopyAsync, 0, 1, 1<<20, 1)
	add(t0, trace.CopyEnd, us(1003), 4, trace.StatusOK)
	add(t0, trace.RunBegin, us(1010), 5, 1, 1, 0)
	add(t0, trace.RunEnd, us(1012), 5, trace.StatusOK)
	add(t0, trace.RunBegin, us(1014), 6, 1, 1, 0)
	add(t0, trace.RunEnd, us(1016), 6, trace.StatusFailed)
	add(t0, trace.StreamFinishBegin, us(1017), 7, 1)
	add(t0, trace.StreamFinishEnd, us(1030), 7)
	add(t0, trace.DeviceTime, us(1031), 5, uint64(us(1011)), uint64(us(1013)))
	add(t0, trace.DeviceTime, us(1031), 6, 0, 1500)
	add(t0, trace.RegionPop, us(1040), StrStep)
	if err != nil {
		return err
	}
	if err := tw.WriteBatch(t0); err != nil {
		return err
	}

	t1, t2 := tw.Batch(1), tw.Batch(2)
	add(t1, trace.RegionPush, us(1005), StrSolve)
	add(t1, trace.RunBegin, us(1006), 8, 2, 1, 1)
	add(t1, trace.RunEnd, us(1009), 8, trace.StatusOK)
	add(t1, trace.Marker, us(1009), StrSolve)
	add(t2, trace.Dropped, us(1100), 12, trace.DropBufferFull, uint64(us(1050)))
	add(t2, trace.Trigger, us(1101), 1, trace.TriggerPause, trace.CauseAPI)
	add(t2, trace.DeviceFinishBegin, us(1102), 9, 2)
	add(t2, trace.DeviceFinishEnd, us(1102), 9)
	add(t1, trace.MemoryFreeBegin, us(1200), 10, 1, 1, 1<<20)
	add(t1, trace.MemoryFreeEnd, us(1201), 10, trace.StatusOK)
	add(t1, trace.RegionPop, us(1202), StrSolve)
	if err != nil {
		return err
	}
	for _, b := range []*trace.Batch{t1, t2} {
		if err := tw.WriteBatch(b); err != nil {
			return err
		}
	}
	var s trace.Stats
	s.Dropped[trace.DropBufferFull] = 12
	if err := tw.WriteStats(&s); err != nil {
		return err
	}
	add(t2, trace.Fork, us(1300))
	add(t1, trace.RunBegin, us(1301), 11, 3, 2, 0)
	add(t1, trace.RunEnd, us(1302), 11, trace.StatusOK)
	if err != nil {
		return err
	}
	for _, b := range []*trace.Batch{t1, t2} {
		if err := tw.WriteBatch(b); err != nil {
			return err
		}
	}
	if o.NoClose {
		return nil
	}
	return tw.Close()
}

// WriteEvents writes a trace of header h: defs (when any), then evs as one
// thread's batches, then the final stats.
func WriteEvents(w io.Writer, h *trace.Header, defs []trace.Def, evs []trace.Event) error {
	tw, err := trace.NewWriter(w, h)
	if err != nil {
		return err
	}
	if len(defs) > 0 {
		if err := tw.WriteDefs(defs); err != nil {
			return err
		}
	}
	b := tw.Batch(0)
	for i := range evs {
		err := b.AddEvent(&evs[i])
		if err == trace.ErrBatchFull {
			if err = tw.WriteBatch(b); err == nil {
				err = b.AddEvent(&evs[i])
			}
		}
		if err != nil {
			return err
		}
	}
	if err := tw.WriteBatch(b); err != nil {
		return err
	}
	return tw.Close()
}
