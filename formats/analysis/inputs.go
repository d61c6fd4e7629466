package analysis

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// TraceExt is the extension of the files the runtime writes.
const TraceExt = ".occatrace"

// Expand turns command-line inputs into trace paths: a file stays as it is;
// a directory (a run directory holding all ranks of a job) gives every
// *.occatrace file under it, sorted.
func Expand(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(p, TraceExt) {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no %s files in the directory", a, TraceExt)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// Parallel calls fn(i) for i in [0, n) on up to workers goroutines (0 means
// GOMAXPROCS) and returns the errors by index. With a budget above 0, a
// call starts only while the costs of the calls running, cost(i) each,
// leave room for its own: what a call holds in memory grows with its trace,
// and workers follows the cores, so a node of many cores would otherwise
// hold many large traces at once. A call that costs more than the budget
// runs once the others have given all of it back.
func Parallel(n, workers int, budget int64, cost func(i int) int64, fn func(i int) error) []error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var room *memoryBudget
	if budget > 0 {
		room = &memoryBudget{free: budget}
		room.cond.L = &room.mu
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < min(workers, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if room == nil {
					errs[i] = fn(i)
					continue
				}
				c := min(max(cost(i), 0), budget)
				room.take(c)
				errs[i] = fn(i)
				room.give(c)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return errs
}

// memoryBudget is what Parallel's running calls may hold together.
type memoryBudget struct {
	mu   sync.Mutex
	cond sync.Cond
	free int64
}

func (m *memoryBudget) take(c int64) {
	m.mu.Lock()
	for m.free < c {
		m.cond.Wait()
	}
	m.free -= c
	m.mu.Unlock()
}

func (m *memoryBudget) give(c int64) {
	m.mu.Lock()
	m.free += c
	m.mu.Unlock()
	m.cond.Broadcast()
}
