package bench

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	"github.com/libocca/occa-tools/formats/trace"
	"github.com/libocca/occa-tools/formats/trace/tracetest"
)

// ompTrace writes a trace as OCCA's OpenMP backend makes one: every
// kernel launch a parallel region of 8 threads with a loop and its barrier,
// every 16th a single that creates 16 tasks in chains of inout clauses.
// About 2 M events, each thread's in 16 K-event batches.
func ompTrace(b *testing.B) (string, int) {
	var (
		genPath string
		genN    int
		genErr  error
	)
	func() {
		genPath = filepath.Join(b.TempDir(), "omp-bench.occatrace")
		f, err := os.Create(genPath)
		if err != nil {
			genErr = err
			return
		}
		defer f.Close()
		bw := bufio.NewWriterSize(f, 1<<20)
		defer bw.Flush()
		tw, err := trace.NewWriter(bw, tracetest.Header())
		if err != nil {
			genErr = err
			return
		}
		tw.WriteDefs(tracetest.Defs())
		const threads = 8
		batches := make([]*trace.Batch, threads)
		for i := range batches {
			batches[i] = tw.Batch(uint32(i))
		}
		add := func(th int, k trace.Kind, t int64, args ...uint64) {
			bt := batches[th]
			if genErr == nil {
				genErr = bt.Add(k, tracetest.MonoStart+t, args...)
			}
			genN++
			if bt.Len() >= 16384 && genErr == nil {
				genErr = tw.WriteBatch(bt)
				batches[th] = tw.Batch(uint32(th))
			}
		}
		var id uint64 = 1
		next := func() uint64 { id++; return id }
		now := int64(0)
		for launch := 0; genN < 2_000_000; launch++ {
			run, par := next(), next()
			add(0, trace.RunBegin, now, run, 1+uint64(launch%3), 1, 0)
			add(0, trace.OmpParallelBegin, now+100, par, 1, threads, 0x80000002, run)
			for th := range threads {
				t0 := now + 200 + int64(th)*10
				task, work, sync, wait := next(), next(), next(), next()
				add(th, trace.OmpImplicitTaskBegin, t0, task, par, uint64(th), threads, run)
				if launch%16 == 0 && th == 0 {
					add(th, trace.OmpWorkBegin, t0+10, work, 3, par, task, 1)
					var ids []uint64
					for k := range 16 {
						c := next()
						ids = append(ids, c)
						add(th, trace.OmpTaskCreate, t0+20+int64(k), c, task, 4, 1, run)
						add(th, trace.OmpTaskDepend, t0+20+int64(k), c, uint64(0x1000+k%4), 3)
					}
					add(th, trace.OmpWorkEnd, t0+50, work)
					add(th, trace.OmpSyncBegin, t0+60, sync, 2, par, task)
					add(th, trace.OmpSyncWaitBegin, t0+60, wait, 2, par, task)
					for k, c := range ids {
						s := t0 + 100 + int64(k)*50
						add(th, trace.OmpTaskSchedule, s, task, 7, c)
						add(th, trace.OmpTaskSchedule, s+40, c, 1, task)
					}
					add(th, trace.OmpSyncWaitEnd, t0+1000, wait)
					add(th, trace.OmpSyncEnd, t0+1000, sync)
				} else {
					add(th, trace.OmpWorkBegin, t0+10, work, 1, par, task, 1000)
					add(th, trace.OmpWorkEnd, t0+500+int64(th)*20, work)
					add(th, trace.OmpSyncBegin, t0+510+int64(th)*20, sync, 2, par, task)
					add(th, trace.OmpSyncWaitBegin, t0+510+int64(th)*20, wait, 2, par, task)
					add(th, trace.OmpSyncWaitEnd, t0+1000, wait)
					add(th, trace.OmpSyncEnd, t0+1000, sync)
				}
				add(th, trace.OmpImplicitTaskEnd, t0+1010, task)
			}
			add(0, trace.OmpParallelEnd, now+1300, par)
			add(0, trace.RunEnd, now+1400, run, 0)
			now += 2000
		}
		for _, bt := range batches {
			if bt.Len() > 0 && genErr == nil {
				genErr = tw.WriteBatch(bt)
			}
		}
		if genErr == nil {
			genErr = tw.Close()
		}
	}()
	if genErr != nil {
		b.Fatal(genErr)
	}
	return genPath, genN
}

// Pairing, summing and converting a trace of OpenMP events.
func BenchmarkPairOpenMP(b *testing.B) {
	path, n := ompTrace(b)
	runOn(b, path, n, pair)
}

func BenchmarkSummaryOpenMP(b *testing.B) {
	path, n := ompTrace(b)
	runOn(b, path, n, summarize)
}

func BenchmarkCSVOpenMP(b *testing.B) {
	path, n := ompTrace(b)
	convertOn(b, path, n, 0, createCSV)
}
