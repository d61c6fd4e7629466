package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// senders knows who else a signal occa-prof receives reached: PROGRAM runs
// in occa-prof's process group, and some senders signal the whole group,
// or every process of a job, PROGRAM included, which must then not get it
// a second time from occa-prof (a program that counts its Ctrl-Cs, "press
// again to quit", got two for one). Go gives occa-prof no siginfo, so the
// sender is known from where occa-prof runs.
type senders struct {
	tty        *os.File // the controlling terminal, or nil
	foreground bool     // occa-prof's group was the terminal's foreground group at the start
	slurm      bool     // a Slurm task: slurmstepd is the parent
}

func findSenders() *senders {
	s := &senders{slurm: parentName() == "slurmstepd"}
	if tty, err := os.Open("/dev/tty"); err == nil {
		s.tty = tty
		s.foreground = s.ttyForeground() == 1
	}
	return s
}

// reachedProgram reports whether sig reached PROGRAM too: SIGINT, SIGQUIT
// and SIGHUP while occa-prof's group, PROGRAM's, is the foreground group of
// its terminal, which sends them there (Ctrl-C, Ctrl-\, a hangup, after
// which the terminal no longer answers: then as at the start); anything in
// a Slurm task, as slurmstepd signals every process of the step.
func (s *senders) reachedProgram(sig os.Signal) bool {
	if s.slurm {
		return true
	}
	if s.tty == nil || (sig != syscall.SIGINT && sig != syscall.SIGQUIT && sig != syscall.SIGHUP) {
		return false
	}
	switch s.ttyForeground() {
	case 1:
		return true
	case 0:
		return false
	}
	return sig == syscall.SIGHUP && s.foreground
}

// ttyForeground: 1 when occa-prof's process group is the terminal's
// foreground group, 0 when another is, -1 when the terminal does not say.
func (s *senders) ttyForeground() int {
	var pgrp int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, s.tty.Fd(), syscall.TIOCGPGRP,
		uintptr(unsafe.Pointer(&pgrp))); errno != 0 {
		return -1
	}
	if int(pgrp) == syscall.Getpgrp() {
		return 1
	}
	return 0
}

func (s *senders) close() {
	if s.tty != nil {
		s.tty.Close()
	}
}

// parentName is the command name of occa-prof's parent process.
func parentName() string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(os.Getppid()) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
