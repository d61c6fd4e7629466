package trace

import (
	"math"
	"testing"
)

// BenchmarkAddRaw is the writer's cost per event on a thread's buffer of
// launches (a run's begin and end, the same kernel), in cache: AddRaw
// alone, without compression.
func BenchmarkAddRaw(b *testing.B) {
	var enc RawEncoder
	var data []byte
	ticks, corr := uint64(1000), uint64(1<<40)
	const pairs = 100_000
	for i := range pairs {
		corr += 2
		data, _ = enc.Append(data, RunBegin, ticks, corr, 3, 1, 1)
		ticks += 16
		data, _ = enc.Append(data, RunEnd, ticks, corr, 0)
		ticks += 16
		if i%500 == 499 {
			ticks += 250_000
		}
	}
	clock := FlatClock{Fast: &Linear{Span: math.MaxUint64, Q: 1}, Slow: func(t uint64) int64 { return int64(t) }}
	bt := NewBatch(1, 0)
	b.ResetTimer()
	for range b.N {
		bt.Reset()
		var st RawState
		if n, err := bt.AddRaw(data, &st, &clock); err != nil || n != len(data) {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(2*pairs), "ns/event")
}
