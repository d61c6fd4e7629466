// Package testproc starts the programs that end-to-end tests run (the
// workload, occa-prof, mpirun, OpenMP and OCCA programs) under a deadline,
// so that a hang fails its own test within a minute instead of stalling
// `go test` until its global timeout: the whole process group is killed and
// the test is marked failed, naming the command.
package testproc

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Deadline is how long all the programs one test starts may run together,
// counted from the first one. It leaves room for two busy CPU hogs beside
// the tests; no test program needs more than a few seconds on a quiet machine.
const Deadline = 40 * time.Second

var (
	mu       sync.Mutex
	contexts = map[testing.TB]context.Context{}
)

// testContext is t's deadline context, made at the first call and cancelled
// when the test ends.
func testContext(t testing.TB) context.Context {
	mu.Lock()
	defer mu.Unlock()
	if ctx, ok := contexts[t]; ok {
		return ctx
	}
	ctx, cancel := context.WithTimeout(context.Background(), Deadline)
	contexts[t] = ctx
	t.Cleanup(func() {
		cancel()
		mu.Lock()
		delete(contexts, t)
		mu.Unlock()
	})
	return ctx
}

// Hung reports whether t's deadline has passed: a program it started was
// killed for running too long (Command has marked t failed already), so the
// caller can stop with what the program printed instead of checking its
// output further.
func Hung(t testing.TB) bool {
	mu.Lock()
	ctx := contexts[t]
	mu.Unlock()
	return ctx != nil && ctx.Err() == context.DeadlineExceeded
}

// Command is exec.Command for a test: the program runs in its own process
// group, which is killed with SIGKILL once the test's deadline passes, and
// the test then fails with the command line. WaitDelay bounds how long Wait
// waits for output pipes that a killed grandchild might still hold open.
func Command(t testing.TB, name string, args ...string) *exec.Cmd {
	t.Helper()
	ctx := testContext(t)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	line := strings.Join(append([]string{name}, args...), " ")
	cmd.Cancel = func() error {
		// Canceled rather than expired: the test has ended and left the
		// program running; its cleanup may be over, so no report then.
		if ctx.Err() == context.DeadlineExceeded {
			t.Errorf("%s: still running after the test's %v deadline: killed (a hang)", line, Deadline)
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}
