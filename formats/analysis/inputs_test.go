package analysis

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// Parallel runs every call once, returns the errors by index, runs at most
// workers at once, and with a budget never lets the costs of the calls
// running pass it; a call that costs more than the budget runs alone (every
// call here costs something).
func TestParallelBudget(t *testing.T) {
	costs := []int64{30, 30, 30, 90, 10, 10, 10, 10, 200, 40, 40, 5}
	for _, c := range []struct {
		workers int
		budget  int64
	}{
		{workers: 4, budget: 0},
		{workers: 4, budget: 100},
		{workers: 8, budget: 60},
		{workers: 2, budget: 1000},
	} {
		t.Run(fmt.Sprint(c.workers, "/", c.budget), func(t *testing.T) {
			var mu sync.Mutex
			var running, cost, maxRunning, maxCost int64
			var aloneOK = true
			ran := make([]int, len(costs))
			errs := Parallel(len(costs), c.workers, c.budget, func(i int) int64 { return costs[i] }, func(i int) error {
				held := min(costs[i], c.budget)
				if c.budget == 0 {
					held = 0
				}
				mu.Lock()
				running++
				cost += held
				maxRunning, maxCost = max(maxRunning, running), max(maxCost, cost)
				if c.budget > 0 && costs[i] > c.budget && running != 1 {
					aloneOK = false
				}
				ran[i]++
				mu.Unlock()
				time.Sleep(2 * time.Millisecond) // long enough for the others to pile up
				mu.Lock()
				running--
				cost -= held
				mu.Unlock()
				if i%5 == 0 {
					return fmt.Errorf("call %d", i)
				}
				return nil
			})
			for i := range costs {
				if ran[i] != 1 {
					t.Errorf("call %d ran %d times", i, ran[i])
				}
				if want := fmt.Sprint("call ", i); i%5 == 0 && (errs[i] == nil || errs[i].Error() != want) || i%5 != 0 && errs[i] != nil {
					t.Errorf("call %d: error %v", i, errs[i])
				}
			}
			if maxRunning > int64(c.workers) || c.budget > 0 && maxCost > c.budget || !aloneOK {
				t.Errorf("at most %d running and %d cost at once, over-budget alone %v; want at most %d and %d, true",
					maxRunning, maxCost, aloneOK, c.workers, c.budget)
			}
		})
	}
}
