// Package cpuload stands in for the other busy ranks of a fully subscribed
// node: tests that must hold under load and the contention benchmark start
// it beside the program they measure.
package cpuload

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Hogs keeps n CPUs busy, one spinning OS thread each, until stop is called.
func Hogs(n int) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			for !done.Load() {
			}
		}()
	}
	return func() { done.Store(true); wg.Wait() }
}
