package summary

import (
	"math/rand/v2"
	"testing"
)

// unionInput is a stream of intervals shaped like a trace's busy times.
// ordered: one ascending stream (one thread's API calls, one queue's
// kernels). batched: four streams written in turns of 16 Ki intervals, as
// the runtime flushes each thread's buffer, so that most intervals come
// after later ones (the generated benchmark trace's shape).
func unionInput(shape string, n int) [][2]int64 {
	rng := rand.New(rand.NewPCG(21, 22))
	ivs := make([][2]int64, 0, n)
	switch shape {
	case "ordered":
		t := int64(1e6)
		for range n {
			t += 200 + rng.Int64N(800)
			ivs = append(ivs, [2]int64{t, t + 100 + rng.Int64N(900)})
		}
	case "batched":
		const streams, batch = 4, 1 << 14
		var times [streams]int64
		for len(ivs) < n {
			for s := range streams {
				for range batch {
					times[s] += 600 + rng.Int64N(2400)
					t := times[s]
					ivs = append(ivs, [2]int64{t, t + 100 + rng.Int64N(900)})
				}
			}
		}
		ivs = ivs[:n]
	}
	return ivs
}

// BenchmarkUnion measures Union.Add and Total per interval.
func BenchmarkUnion(b *testing.B) {
	for _, shape := range []string{"ordered", "batched"} {
		ivs := unionInput(shape, 1<<21)
		want := naiveUnion(ivs)
		b.Run(shape, func(b *testing.B) {
			for range b.N {
				var u Union
				for _, iv := range ivs {
					u.Add(iv[0], iv[1])
				}
				if got := u.Total(); got != want {
					b.Fatalf("union %d, want %d", got, want)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ivs)), "ns/interval")
		})
	}
}
