package main

import (
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// dieOf ends occa-prof with sig's default action, as the program it ran
// ended, without a core dump of occa-prof itself (as timeout(1) does): the
// Go runtime's handler is replaced by SIG_DFL, the signal unblocked and
// raised. Should the process survive (a stopping or ignored signal), it
// exits with 128+sig as a shell reports it.
func dieOf(sig syscall.Signal) {
	runtime.LockOSThread()
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	// struct kernel_sigaction { handler, flags, restorer, mask } with SIG_DFL (0).
	var act [4]uint64
	syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	set := uint64(1) << (uint(sig) - 1)
	syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, 1 /* SIG_UNBLOCK */, uintptr(unsafe.Pointer(&set)), 0, 8, 0, 0)
	_ = syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), sig)
	_ = syscall.Kill(syscall.Getpid(), sig)
	time.Sleep(100 * time.Millisecond)
	os.Exit(128 + int(sig))
}
